//! Chat conversations and their agent events.
//!
//! The transcript is stored as the agent runtime's state JSON (opaque here).
//! Turns are serialized by a claim: a conditional update that moves the row
//! from `idle` to `running` under a fresh turn id, renewed while the turn
//! runs; a claim whose lease ran out belongs to a crashed process and may be
//! taken over. Saving a turn only succeeds for the claim that is still held.

use crate::entities::{conversation, conversation_event};
use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set, sea_query::Expr,
};

/// `status` of a conversation no turn is running in.
pub const IDLE: &str = "idle";
/// `status` of a conversation with a claimed turn.
pub const RUNNING: &str = "running";

/// A conversation as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredConversation {
    pub id: String,
    pub owner_id: String,
    pub customer_id: String,
    pub status: String,
    pub active_agent: Option<String>,
    /// The agent runtime's `ConversationState` as JSON.
    pub state: String,
    pub turns: i64,
    pub turn_id: Option<String>,
    pub turn_lease_until: Option<DateTime<Utc>>,
    pub stop_requested: bool,
    /// The end requested of the running turn is a preempt (a `now`
    /// message), not a Stop: what the turn started runs on.
    pub preempt_only: bool,
    /// When Stop was last pressed.
    pub stopped_at: Option<DateTime<Utc>>,
    /// Subagents of a preempted turn run in the background, on some
    /// replica, until this lease ends (renewed while they run).
    pub background_until: Option<DateTime<Utc>>,
    /// The message the claimed turn answers.
    pub pending_message: Option<String>,
    /// The widget session that opened it: the only widget session that
    /// reaches it (none: opened in the web app or through the API).
    pub widget_session_id: Option<String>,
    /// The visitor who opened it before signing in. While owner and
    /// customer are [`crate::users::GUEST_ACCOUNT_ID`] only that visitor
    /// reaches it; signing in binds it to the person.
    pub guest_id: Option<String>,
    /// The running turn waits for the visitor to sign in until then.
    pub sign_in_wait_until: Option<DateTime<Utc>>,
    /// A carrier's tracking page is being read for it (or waits for the
    /// browser), at most until then.
    pub carrier_read_until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl StoredConversation {
    /// The customer it is about; none while a visitor who has not signed
    /// in holds it.
    pub fn customer(&self) -> Option<&str> {
        Some(self.customer_id.as_str()).filter(|id| *id != crate::users::GUEST_ACCOUNT_ID)
    }

    /// Whether its running turn waits for the visitor to sign in at `now`.
    pub fn waits_for_sign_in(&self, now: DateTime<Utc>) -> bool {
        self.customer().is_none()
            && self.is_running(now)
            && self.sign_in_wait_until.is_some_and(|until| until > now)
    }

    /// Whether a carrier's tracking page is being read for it at `now`,
    /// by its turn or by the investigators it left in the background.
    pub fn reads_carrier_page(&self, now: DateTime<Utc>) -> bool {
        self.carrier_read_until.is_some_and(|until| until > now)
            && (self.is_running(now) || self.background_until.is_some_and(|until| until > now))
    }

    /// Whether a turn holds a live claim at `now`.
    pub fn is_running(&self, now: DateTime<Utc>) -> bool {
        self.status == RUNNING && self.turn_lease_until.is_some_and(|until| until > now)
    }

    /// The message a turn is answering at `now` (none once its claim lapsed:
    /// a crashed turn's message was never answered and is not shown as if
    /// it were being).
    pub fn message_being_answered(&self, now: DateTime<Utc>) -> Option<&str> {
        self.pending_message
            .as_deref()
            .filter(|_| self.is_running(now))
    }
}

/// A new, idle conversation.
pub struct NewConversation<'a> {
    pub id: &'a str,
    pub owner_id: &'a str,
    pub customer_id: &'a str,
    pub state: &'a str,
    /// The widget session opening it, if a widget session does.
    pub widget_session_id: Option<&'a str>,
    /// The visitor opening it before signing in (owner and customer are
    /// then the guest account).
    pub guest_id: Option<&'a str>,
    pub now: DateTime<Utc>,
}

/// An agent event to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    pub turn: i64,
    pub agent: String,
    pub kind: String,
    /// The whole event as JSON.
    pub payload: String,
    pub at: DateTime<Utc>,
}

/// An agent event as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub seq: i64,
    pub conversation_id: String,
    pub turn: i64,
    pub agent: String,
    pub kind: String,
    pub payload: String,
    pub at: DateTime<Utc>,
}

/// What a finished turn leaves behind.
pub struct SavedTurn<'a> {
    pub state: &'a str,
    pub active_agent: Option<&'a str>,
    pub turns: i64,
    pub now: DateTime<Utc>,
}

/// # Errors
/// [`StorageError::Conflict`] for a duplicate id or an unknown user.
pub async fn insert(
    db: &impl ConnectionTrait,
    new: NewConversation<'_>,
) -> Result<(), StorageError> {
    conversation::ActiveModel {
        id: Set(new.id.to_owned()),
        owner_id: Set(new.owner_id.to_owned()),
        customer_id: Set(new.customer_id.to_owned()),
        status: Set(IDLE.to_owned()),
        active_agent: Set(None),
        state: Set(new.state.to_owned()),
        turns: Set(0),
        turn_id: Set(None),
        turn_started_at: Set(None),
        turn_lease_until: Set(None),
        stop_requested: Set(false),
        preempt_only: Set(false),
        stopped_at: Set(None),
        background_until: Set(None),
        pending_message: Set(None),
        widget_session_id: Set(new.widget_session_id.map(str::to_owned)),
        guest_id: Set(new.guest_id.map(str::to_owned)),
        sign_in_wait_until: Set(None),
        carrier_read_until: Set(None),
        created_at: Set(new.now),
        updated_at: Set(new.now),
    }
    .insert(db)
    .await?;
    Ok(())
}

/// # Errors
/// Database failures.
pub async fn get(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<StoredConversation>, StorageError> {
    Ok(conversation::Entity::find_by_id(id.to_owned())
        .one(db)
        .await?
        .map(decode))
}

/// The conversation, its row locked until the transaction ends (on
/// PostgreSQL; SQLite's writes are serialized anyway): no turn can claim it
/// or save meanwhile.
///
/// # Errors
/// Database failures.
pub async fn get_locked(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<StoredConversation>, StorageError> {
    Ok(conversation::Entity::find_by_id(id.to_owned())
        .lock_exclusive()
        .one(db)
        .await?
        .map(decode))
}

/// Conversations a user opened or that are about them, newest first.
///
/// # Errors
/// Database failures.
pub async fn list_for_user(
    db: &impl ConnectionTrait,
    user_id: &str,
    limit: u64,
) -> Result<Vec<StoredConversation>, StorageError> {
    Ok(conversation::Entity::find()
        .filter(
            conversation::Column::OwnerId
                .eq(user_id)
                .or(conversation::Column::CustomerId.eq(user_id)),
        )
        .order_by_desc(conversation::Column::UpdatedAt)
        .limit(crate::error::bindable(limit, "limit")?)
        .all(db)
        .await?
        .into_iter()
        .map(decode)
        .collect())
}

/// The conversation `owner_id` opened that was active most recently; with
/// `widget_session_id`, only among those that widget session opened.
///
/// # Errors
/// Database failures.
pub async fn latest_owned_by(
    db: &impl ConnectionTrait,
    owner_id: &str,
    widget_session_id: Option<&str>,
) -> Result<Option<StoredConversation>, StorageError> {
    let mut query = conversation::Entity::find().filter(conversation::Column::OwnerId.eq(owner_id));
    if let Some(session) = widget_session_id {
        query = query.filter(conversation::Column::WidgetSessionId.eq(session));
    }
    Ok(query
        .order_by_desc(conversation::Column::UpdatedAt)
        .order_by_desc(conversation::Column::CreatedAt)
        .one(db)
        .await?
        .map(decode))
}

/// Claims the next turn for `turn_id`, answering `message`, unless a live
/// claim exists. Returns false when another turn holds the conversation (or
/// it does not exist).
///
/// # Errors
/// Database failures.
pub async fn claim_turn(
    db: &impl ConnectionTrait,
    id: &str,
    turn_id: &str,
    message: &str,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let claimed = conversation::Entity::update_many()
        .col_expr(conversation::Column::Status, Expr::value(RUNNING))
        .col_expr(conversation::Column::PendingMessage, Expr::value(message))
        .col_expr(conversation::Column::TurnId, Expr::value(turn_id))
        .col_expr(conversation::Column::TurnStartedAt, Expr::value(now))
        .col_expr(
            conversation::Column::TurnLeaseUntil,
            Expr::value(lease_until),
        )
        .col_expr(conversation::Column::StopRequested, Expr::value(false))
        .col_expr(conversation::Column::PreemptOnly, Expr::value(false))
        .filter(conversation::Column::Id.eq(id))
        .filter(
            conversation::Column::Status
                .eq(IDLE)
                .or(conversation::Column::TurnLeaseUntil.lt(now))
                .or(conversation::Column::TurnLeaseUntil.is_null()),
        )
        .exec(db)
        .await?;
    Ok(claimed.rows_affected == 1)
}

/// What the running turn has been asked: nothing, to give way to a newer
/// message (preempt), or to stop with everything it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnRequest {
    Continue,
    Preempt,
    Stop,
}

/// Extends the claim of `turn_id`. Returns `None` when the claim is no longer
/// held, otherwise what the turn has been asked.
///
/// # Errors
/// Database failures.
pub async fn renew_claim(
    db: &impl ConnectionTrait,
    id: &str,
    turn_id: &str,
    lease_until: DateTime<Utc>,
) -> Result<Option<TurnRequest>, StorageError> {
    let renewed = conversation::Entity::update_many()
        .col_expr(
            conversation::Column::TurnLeaseUntil,
            Expr::value(lease_until),
        )
        .filter(conversation::Column::Id.eq(id))
        .filter(conversation::Column::TurnId.eq(turn_id))
        .filter(conversation::Column::Status.eq(RUNNING))
        .exec(db)
        .await?;
    if renewed.rows_affected != 1 {
        return Ok(None);
    }
    turn_request(db, id, turn_id).await
}

/// What the claim `turn_id` has been asked (`None`: the claim is no longer
/// held).
///
/// # Errors
/// Database failures.
pub async fn turn_request(
    db: &impl ConnectionTrait,
    id: &str,
    turn_id: &str,
) -> Result<Option<TurnRequest>, StorageError> {
    let row = conversation::Entity::find_by_id(id.to_owned())
        .filter(conversation::Column::TurnId.eq(turn_id))
        .filter(conversation::Column::Status.eq(RUNNING))
        .one(db)
        .await?;
    Ok(row.map(|row| match (row.stop_requested, row.preempt_only) {
        (false, _) => TurnRequest::Continue,
        (true, true) => TurnRequest::Preempt,
        (true, false) => TurnRequest::Stop,
    }))
}

/// Asks the running turn, on whichever replica, to stop with everything it
/// started (a Stop after a preempt turns it into a Stop), and records when
/// Stop was pressed whether or not a turn runs (background work started
/// before it stops too). Returns false when no turn holds a live claim.
///
/// # Errors
/// Database failures.
pub async fn request_stop(
    db: &impl ConnectionTrait,
    id: &str,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    conversation::Entity::update_many()
        .col_expr(conversation::Column::StoppedAt, Expr::value(now))
        .filter(conversation::Column::Id.eq(id))
        .exec(db)
        .await?;
    flag_running_turn(db, id, now, Expr::value(false)).await
}

/// Asks the running turn, on whichever replica, to give way to a newer
/// message: it ends, what it started runs on. A Stop already requested
/// stays a Stop. Returns false when no turn holds a live claim.
///
/// # Errors
/// Database failures.
pub async fn request_preempt(
    db: &impl ConnectionTrait,
    id: &str,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    // The right-hand side reads the row as it was before this update.
    let preempt_only = Expr::col(conversation::Column::StopRequested)
        .not()
        .or(Expr::col(conversation::Column::PreemptOnly).into());
    flag_running_turn(db, id, now, preempt_only).await
}

/// Flags the turn holding a live claim on conversation `id` to end, with
/// `preempt_only` saying whether only the turn ends; false when none holds
/// one.
async fn flag_running_turn(
    db: &impl ConnectionTrait,
    id: &str,
    now: DateTime<Utc>,
    preempt_only: impl Into<sea_orm::sea_query::SimpleExpr>,
) -> Result<bool, StorageError> {
    let requested = conversation::Entity::update_many()
        .col_expr(conversation::Column::StopRequested, Expr::value(true))
        .col_expr(conversation::Column::PreemptOnly, preempt_only.into())
        .filter(conversation::Column::Id.eq(id))
        .filter(conversation::Column::Status.eq(RUNNING))
        .filter(conversation::Column::TurnLeaseUntil.gt(now))
        .exec(db)
        .await?;
    Ok(requested.rows_affected == 1)
}

/// Records that background work of conversation `id` runs until `until`
/// (called again to renew it).
///
/// # Errors
/// Database failures.
pub async fn hold_background(
    db: &impl ConnectionTrait,
    id: &str,
    until: DateTime<Utc>,
) -> Result<(), StorageError> {
    conversation::Entity::update_many()
        .col_expr(conversation::Column::BackgroundUntil, Expr::value(until))
        .filter(conversation::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Clears the background lease `until` of conversation `id` when its work
/// ended (a newer lease, of other background work, stays).
///
/// # Errors
/// Database failures.
pub async fn release_background(
    db: &impl ConnectionTrait,
    id: &str,
    until: DateTime<Utc>,
) -> Result<(), StorageError> {
    conversation::Entity::update_many()
        .col_expr(
            conversation::Column::BackgroundUntil,
            Expr::value(None::<DateTime<Utc>>),
        )
        .filter(conversation::Column::Id.eq(id))
        .filter(conversation::Column::BackgroundUntil.lte(until))
        .exec(db)
        .await?;
    Ok(())
}

/// When Stop was last pressed in conversation `id` (`None`: never, or no
/// such conversation).
///
/// # Errors
/// Database failures.
pub async fn stopped_at(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<DateTime<Utc>>, StorageError> {
    Ok(conversation::Entity::find_by_id(id.to_owned())
        .one(db)
        .await?
        .and_then(|row| row.stopped_at))
}

/// Stores the state a turn left and releases its claim. Returns false when
/// the claim `turn_id` is no longer held (nothing is written then).
///
/// # Errors
/// Database failures.
pub async fn save_turn(
    db: &impl ConnectionTrait,
    id: &str,
    turn_id: &str,
    saved: SavedTurn<'_>,
) -> Result<bool, StorageError> {
    let updated = conversation::Entity::update_many()
        .col_expr(conversation::Column::Status, Expr::value(IDLE))
        .col_expr(conversation::Column::State, Expr::value(saved.state))
        .col_expr(
            conversation::Column::ActiveAgent,
            Expr::value(saved.active_agent.map(str::to_owned)),
        )
        .col_expr(conversation::Column::Turns, Expr::value(saved.turns))
        .col_expr(conversation::Column::TurnId, Expr::value(None::<String>))
        .col_expr(
            conversation::Column::TurnStartedAt,
            Expr::value(None::<DateTime<Utc>>),
        )
        .col_expr(
            conversation::Column::TurnLeaseUntil,
            Expr::value(None::<DateTime<Utc>>),
        )
        .col_expr(conversation::Column::StopRequested, Expr::value(false))
        .col_expr(conversation::Column::PreemptOnly, Expr::value(false))
        .col_expr(
            conversation::Column::PendingMessage,
            Expr::value(None::<String>),
        )
        .col_expr(
            conversation::Column::SignInWaitUntil,
            Expr::value(None::<DateTime<Utc>>),
        )
        .col_expr(conversation::Column::UpdatedAt, Expr::value(saved.now))
        .filter(conversation::Column::Id.eq(id))
        .filter(conversation::Column::TurnId.eq(turn_id))
        .filter(conversation::Column::Status.eq(RUNNING))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// Releases the claim `turn_id` without changing the transcript (a turn that
/// could not start).
///
/// # Errors
/// Database failures.
pub async fn release_claim(
    db: &impl ConnectionTrait,
    id: &str,
    turn_id: &str,
) -> Result<(), StorageError> {
    conversation::Entity::update_many()
        .col_expr(conversation::Column::Status, Expr::value(IDLE))
        .col_expr(conversation::Column::TurnId, Expr::value(None::<String>))
        .col_expr(
            conversation::Column::TurnLeaseUntil,
            Expr::value(None::<DateTime<Utc>>),
        )
        .col_expr(conversation::Column::StopRequested, Expr::value(false))
        .col_expr(conversation::Column::PreemptOnly, Expr::value(false))
        .col_expr(
            conversation::Column::PendingMessage,
            Expr::value(None::<String>),
        )
        .col_expr(
            conversation::Column::SignInWaitUntil,
            Expr::value(None::<DateTime<Utc>>),
        )
        .filter(conversation::Column::Id.eq(id))
        .filter(conversation::Column::TurnId.eq(turn_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Marks that the claim `turn_id` waits for the visitor to sign in until
/// `until` (none: it no longer waits). Returns false when that claim is no
/// longer held.
///
/// # Errors
/// Database failures.
pub async fn set_sign_in_wait(
    db: &impl ConnectionTrait,
    id: &str,
    turn_id: &str,
    until: Option<DateTime<Utc>>,
) -> Result<bool, StorageError> {
    let updated = conversation::Entity::update_many()
        .col_expr(conversation::Column::SignInWaitUntil, Expr::value(until))
        .filter(conversation::Column::Id.eq(id))
        .filter(conversation::Column::TurnId.eq(turn_id))
        .filter(conversation::Column::Status.eq(RUNNING))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// Marks that a carrier's tracking page is read for conversation `id`, at
/// most until `until`.
///
/// # Errors
/// Database failures.
pub async fn start_carrier_read(
    db: &impl ConnectionTrait,
    id: &str,
    until: DateTime<Utc>,
) -> Result<(), StorageError> {
    conversation::Entity::update_many()
        .col_expr(conversation::Column::CarrierReadUntil, Expr::value(until))
        .filter(conversation::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Ends the mark [`start_carrier_read`] set with `until`, unless a later
/// read for the same conversation has replaced it. Returns whether it ended.
///
/// # Errors
/// Database failures.
pub async fn end_carrier_read(
    db: &impl ConnectionTrait,
    id: &str,
    until: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let updated = conversation::Entity::update_many()
        .col_expr(
            conversation::Column::CarrierReadUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .filter(conversation::Column::Id.eq(id))
        .filter(conversation::Column::CarrierReadUntil.eq(until))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// Binds every conversation visitor `guest_id` opened and has not bound yet
/// to `user_id`, who just signed in: they become its owner and its
/// customer. Returns the ids of the conversations bound.
///
/// # Errors
/// Database failures.
pub async fn bind_guest(
    db: &impl ConnectionTrait,
    guest_id: &str,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<Vec<String>, StorageError> {
    let unbound = || {
        conversation::Column::GuestId
            .eq(guest_id)
            .and(conversation::Column::OwnerId.eq(crate::users::GUEST_ACCOUNT_ID))
    };
    let ids: Vec<String> = conversation::Entity::find()
        .select_only()
        .column(conversation::Column::Id)
        .filter(unbound())
        .into_tuple()
        .all(db)
        .await?;
    if ids.is_empty() {
        return Ok(ids);
    }
    conversation::Entity::update_many()
        .col_expr(conversation::Column::OwnerId, Expr::value(user_id))
        .col_expr(conversation::Column::CustomerId, Expr::value(user_id))
        .col_expr(conversation::Column::UpdatedAt, Expr::value(now))
        .filter(conversation::Column::Id.is_in(ids.clone()))
        .filter(unbound())
        .exec(db)
        .await?;
    Ok(ids)
}

/// The conversation visitor `guest_id` opened most recently and has not
/// bound to an account yet.
///
/// # Errors
/// Database failures.
pub async fn latest_of_guest(
    db: &impl ConnectionTrait,
    guest_id: &str,
) -> Result<Option<StoredConversation>, StorageError> {
    Ok(conversation::Entity::find()
        .filter(conversation::Column::GuestId.eq(guest_id))
        .filter(conversation::Column::OwnerId.eq(crate::users::GUEST_ACCOUNT_ID))
        .order_by_desc(conversation::Column::UpdatedAt)
        .order_by_desc(conversation::Column::CreatedAt)
        .one(db)
        .await?
        .map(decode))
}

/// # Errors
/// Database failures, or [`StorageError::Conflict`] for an unknown conversation.
pub async fn insert_events(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    events: &[NewEvent],
) -> Result<(), StorageError> {
    if events.is_empty() {
        return Ok(());
    }
    conversation_event::Entity::insert_many(events.iter().map(|event| {
        conversation_event::ActiveModel {
            conversation_id: Set(conversation_id.to_owned()),
            turn: Set(event.turn),
            agent: Set(event.agent.clone()),
            kind: Set(event.kind.clone()),
            payload: Set(event.payload.clone()),
            at: Set(event.at),
            ..Default::default()
        }
    }))
    .exec(db)
    .await?;
    Ok(())
}

/// A conversation's events in the order they happened.
///
/// # Errors
/// Database failures.
pub async fn events(
    db: &impl ConnectionTrait,
    conversation_id: &str,
) -> Result<Vec<StoredEvent>, StorageError> {
    Ok(conversation_event::Entity::find()
        .filter(conversation_event::Column::ConversationId.eq(conversation_id))
        .order_by_asc(conversation_event::Column::Seq)
        .all(db)
        .await?
        .into_iter()
        .map(|row| StoredEvent {
            seq: row.seq,
            conversation_id: row.conversation_id,
            turn: row.turn,
            agent: row.agent,
            kind: row.kind,
            payload: row.payload,
            at: row.at,
        })
        .collect())
}

fn decode(row: conversation::Model) -> StoredConversation {
    StoredConversation {
        id: row.id,
        owner_id: row.owner_id,
        customer_id: row.customer_id,
        status: row.status,
        active_agent: row.active_agent,
        state: row.state,
        turns: row.turns,
        turn_id: row.turn_id,
        turn_lease_until: row.turn_lease_until,
        stop_requested: row.stop_requested,
        preempt_only: row.preempt_only,
        stopped_at: row.stopped_at,
        background_until: row.background_until,
        pending_message: row.pending_message,
        widget_session_id: row.widget_session_id,
        guest_id: row.guest_id,
        sign_in_wait_until: row.sign_in_wait_until,
        carrier_read_until: row.carrier_read_until,
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

/// Sets the message the claim `turn_id` is answering (shown until its reply
/// is saved).
///
/// # Errors
/// Database failures.
pub async fn set_message_being_answered(
    db: &impl ConnectionTrait,
    id: &str,
    turn_id: &str,
    message: &str,
) -> Result<(), StorageError> {
    conversation::Entity::update_many()
        .col_expr(conversation::Column::PendingMessage, Expr::value(message))
        .filter(conversation::Column::Id.eq(id))
        .filter(conversation::Column::TurnId.eq(turn_id))
        .exec(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn claimed(lease_until: DateTime<Utc>) -> StoredConversation {
        StoredConversation {
            id: "cnv_1".into(),
            owner_id: "usr_1".into(),
            customer_id: "usr_1".into(),
            status: RUNNING.into(),
            active_agent: None,
            state: "{}".into(),
            turns: 0,
            turn_id: Some("trn_1".into()),
            turn_lease_until: Some(lease_until),
            stop_requested: false,
            preempt_only: false,
            stopped_at: None,
            background_until: None,
            pending_message: Some("is order 4822 refundable?".into()),
            widget_session_id: None,
            guest_id: None,
            sign_in_wait_until: None,
            carrier_read_until: None,
            created_at: lease_until,
            updated_at: lease_until,
        }
    }

    #[test]
    fn a_message_is_being_answered_only_while_its_turn_holds_a_live_claim() {
        let now = Utc::now();
        let live = claimed(now + Duration::seconds(30));
        assert_eq!(
            live.message_being_answered(now),
            Some("is order 4822 refundable?")
        );
        // The process running the turn crashed: its message was never answered.
        let lapsed = claimed(now - Duration::seconds(1));
        assert_eq!(lapsed.message_being_answered(now), None);
    }

    #[test]
    fn a_carrier_read_shows_only_while_its_turn_or_background_work_lives_and_until_its_limit() {
        let now = Utc::now();
        let reading = |lease: Duration, read: Duration| StoredConversation {
            carrier_read_until: Some(now + read),
            ..claimed(now + lease)
        };
        assert!(reading(Duration::seconds(30), Duration::seconds(60)).reads_carrier_page(now));
        // Past the read's time limit the tool has given up on it.
        assert!(!reading(Duration::seconds(30), Duration::seconds(-1)).reads_carrier_page(now));
        // The turn's process died: nothing reads for it any more.
        assert!(!reading(Duration::seconds(-1), Duration::seconds(60)).reads_carrier_page(now));
        // Investigators a preempted turn left running read on.
        let background = StoredConversation {
            status: IDLE.into(),
            background_until: Some(now + Duration::seconds(30)),
            ..reading(Duration::seconds(-1), Duration::seconds(60))
        };
        assert!(background.reads_carrier_page(now));
    }
}
