use sea_orm::entity::prelude::*;

/// A proposal: immutable content (JSON) plus its current state (JSON) and
/// the columns queries filter on.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "proposals")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub kind: String,
    pub order_id: String,
    pub amount_minor: i64,
    pub currency: String,
    pub action_digest: String,
    pub content: String,
    pub status: String,
    pub state: String,
    /// Bumped by every state change; claims and decisions update only the
    /// version they read, so two servers can never both move a proposal.
    pub state_version: i64,
    pub requested_by: String,
    pub on_behalf_of: Option<String>,
    pub conversation_id: Option<String>,
    pub supersedes: Option<String>,
    /// The account whose credential submitted it (see the provenance).
    pub submitted_by: Option<String>,
    pub created_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    pub due_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
