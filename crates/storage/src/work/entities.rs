//! The runner's tables, one entity per table.

pub mod work_item {
    use sea_orm::entity::prelude::*;

    /// Something to do outside a request: queued, running under a lease,
    /// finished, or dead-lettered for a person.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "work_items")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub kind: String,
        pub lane: String,
        pub subject: Option<String>,
        pub payload: String,
        pub state: String,
        pub attempts: i32,
        pub max_attempts: i32,
        pub run_after: DateTimeUtc,
        pub every_seconds: Option<i64>,
        pub lease_owner: Option<String>,
        pub lease_until: Option<DateTimeUtc>,
        pub last_error: Option<String>,
        pub last_note: Option<String>,
        pub last_run_at: Option<DateTimeUtc>,
        pub dedupe_key: Option<String>,
        pub created_at: DateTimeUtc,
        pub updated_at: DateTimeUtc,
        pub finished_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod alert {
    use sea_orm::entity::prelude::*;

    /// Something only a person can settle.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "alerts")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub kind: String,
        pub subject: Option<String>,
        pub message: String,
        pub dedupe_key: Option<String>,
        pub raised_at: DateTimeUtc,
        pub last_raised_at: DateTimeUtc,
        pub repeats: i32,
        pub acknowledged_at: Option<DateTimeUtc>,
        pub acknowledged_by: Option<String>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
