use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "journal_events")]
pub struct Model {
    /// Insertion order across all streams (not part of any hash).
    #[sea_orm(primary_key)]
    pub seq: i64,
    /// The chain this event belongs to: a proposal id, `order:<id>`, or `system`.
    pub stream: String,
    /// 1, 2, 3… within the stream.
    pub stream_seq: i64,
    pub proposal_id: Option<String>,
    pub order_id: Option<String>,
    pub actor: String,
    pub kind: String,
    pub from_status: Option<String>,
    pub to_status: Option<String>,
    pub payload: String,
    pub at: DateTimeUtc,
    pub prev_hash: String,
    pub hash: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
