use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "approvals")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub proposal_id: String,
    pub approver_id: String,
    /// `approve` or `reject`.
    pub decision: String,
    pub reason: Option<String>,
    pub action_digest_shown: String,
    /// `ConditionsSnapshot` as JSON.
    pub conditions: String,
    pub decided_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
