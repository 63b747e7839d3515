use sea_orm::entity::prelude::*;

/// A chat conversation: the agent runtime's state as JSON plus the columns
/// that serialize its turns and scope its tools.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "conversations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub owner_id: String,
    pub customer_id: String,
    pub status: String,
    pub active_agent: Option<String>,
    pub state: String,
    pub turns: i64,
    pub turn_id: Option<String>,
    pub turn_started_at: Option<DateTimeUtc>,
    pub turn_lease_until: Option<DateTimeUtc>,
    pub stop_requested: bool,
    /// The end requested of the running turn is a preempt, not a Stop.
    pub preempt_only: bool,
    /// When Stop was last pressed.
    pub stopped_at: Option<DateTimeUtc>,
    /// Background work of a preempted turn runs until this lease ends.
    pub background_until: Option<DateTimeUtc>,
    /// The message the running turn answers (none when idle).
    pub pending_message: Option<String>,
    /// The widget session that opened it (none: the web app or the API).
    pub widget_session_id: Option<String>,
    /// The visitor who opened it before signing in (none once opened by a
    /// signed-in user; kept after sign-in binds it).
    pub guest_id: Option<String>,
    /// A turn waits for the visitor to sign in until then.
    pub sign_in_wait_until: Option<DateTimeUtc>,
    /// A carrier's tracking page is read for it until then (at most).
    pub carrier_read_until: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
