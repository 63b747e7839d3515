use sea_orm::entity::prelude::*;

/// One agent event of a conversation (model call, tool call, handoff, stop…).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "conversation_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub conversation_id: String,
    pub turn: i64,
    pub agent: String,
    pub kind: String,
    pub payload: String,
    pub at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
