//! The handover tables, one entity per table.

pub mod conversation_handover {
    use sea_orm::entity::prelude::*;

    /// A conversation waiting for a person, or taken over by one.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "conversation_handovers")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub conversation_id: String,
        pub status: String,
        pub requested_at: DateTimeUtc,
        pub person_id: Option<String>,
        pub person_name: Option<String>,
        pub taken_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod conversation_person {
    use sea_orm::entity::prelude::*;

    /// A person who spoke for the team in a conversation.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "conversation_people")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub conversation_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub user_id: String,
        pub first_spoke_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod inbox_role {
    use sea_orm::entity::prelude::*;

    /// A role whose holders see the staff inbox.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "inbox_roles")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub role: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
