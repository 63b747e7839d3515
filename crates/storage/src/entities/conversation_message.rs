use sea_orm::entity::prelude::*;

/// A message sent to a conversation, from receipt to its one outcome.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "conversation_messages")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub conversation_id: String,
    pub sender_id: String,
    pub priority: String,
    pub text: String,
    /// The turn (claim id) that took the message in, while it runs.
    pub carried_by: Option<String>,
    /// `None` while it waits or its turn runs.
    pub outcome: Option<String>,
    /// The turn number it went into.
    pub turn: Option<i64>,
    pub received_at: DateTimeUtc,
    pub settled_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
