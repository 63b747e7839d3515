//! The messages sent to a conversation: each stored before it is
//! acknowledged, waiting until a turn takes it in (`carried_by`, set in the
//! transaction that claims the turn), and ending with exactly one outcome
//! written in the transaction that saves that turn, or by Stop.
//!
//! A message carried by a turn that is no longer the conversation's claim
//! (its process died) is waiting again: the next claim takes it in.

use crate::entities::conversation_message::{self, Column, Entity};
use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
    sea_query::Expr,
};

/// Outcome of a message that a turn answered on its own.
pub const ANSWERED: &str = "answered";
/// Outcome of a message taken into a turn with others sent while the
/// previous turn ran.
pub const COLLECTED: &str = "collected";
/// Outcome of a message given to the running turn's model before its next
/// call (sent "for this turn").
pub const STEERED: &str = "steered";
/// Priority of a message that steers the running turn.
pub const THIS_TURN: &str = "this_turn";
/// Outcome of a message kept for the person from the team who was asked
/// for or holds the conversation (no agent turn ran for it).
pub const FOR_PERSON: &str = "for_person";
/// Outcome of a message that Stop cancelled before any turn took it in.
pub const CANCELLED: &str = "cancelled";

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    pub id: String,
    pub conversation_id: String,
    pub sender_id: String,
    pub priority: String,
    pub text: String,
    pub carried_by: Option<String>,
    pub outcome: Option<String>,
    pub turn: Option<i64>,
    pub received_at: DateTime<Utc>,
    pub settled_at: Option<DateTime<Utc>>,
}

impl From<conversation_message::Model> for StoredMessage {
    fn from(row: conversation_message::Model) -> Self {
        StoredMessage {
            id: row.id,
            conversation_id: row.conversation_id,
            sender_id: row.sender_id,
            priority: row.priority,
            text: row.text,
            carried_by: row.carried_by,
            outcome: row.outcome,
            turn: row.turn,
            received_at: row.received_at,
            settled_at: row.settled_at,
        }
    }
}

/// A message to store.
#[derive(Debug, Clone, Copy)]
pub struct NewMessage<'a> {
    pub id: &'a str,
    pub conversation_id: &'a str,
    pub sender_id: &'a str,
    pub priority: &'a str,
    pub text: &'a str,
    pub received_at: DateTime<Utc>,
    /// The turn that takes it in at once (it claimed the conversation in
    /// the same transaction); `None`: it waits.
    pub carried_by: Option<&'a str>,
}

/// Stores a message, waiting or taken in by the turn that claims the
/// conversation with it, and returns it as stored.
///
/// # Errors
/// [`StorageError::Conflict`] for a duplicate id or an unknown conversation.
pub async fn insert(
    db: &impl ConnectionTrait,
    new: NewMessage<'_>,
) -> Result<StoredMessage, StorageError> {
    let row = conversation_message::ActiveModel {
        id: Set(new.id.to_owned()),
        conversation_id: Set(new.conversation_id.to_owned()),
        sender_id: Set(new.sender_id.to_owned()),
        priority: Set(new.priority.to_owned()),
        text: Set(new.text.to_owned()),
        carried_by: Set(new.carried_by.map(str::to_owned)),
        outcome: Set(None),
        turn: Set(None),
        received_at: Set(new.received_at),
        settled_at: Set(None),
    };
    conversation_message::Entity::insert(row.clone())
        .exec_without_returning(db)
        .await?;
    Ok(StoredMessage {
        id: new.id.to_owned(),
        conversation_id: new.conversation_id.to_owned(),
        sender_id: new.sender_id.to_owned(),
        priority: new.priority.to_owned(),
        text: new.text.to_owned(),
        carried_by: new.carried_by.map(str::to_owned),
        outcome: None,
        turn: None,
        received_at: new.received_at,
        settled_at: None,
    })
}

/// Takes every message of the conversation without an outcome into the
/// turn `turn_id`, which has just claimed the conversation (so a message
/// carried by another turn was left by one that died). Returns them in the
/// order received.
///
/// # Errors
/// Database failures.
pub async fn carry_waiting(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    turn_id: &str,
) -> Result<Vec<StoredMessage>, StorageError> {
    let carried = Entity::update_many()
        .col_expr(Column::CarriedBy, Expr::value(turn_id))
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::Outcome.is_null())
        .exec_with_returning(db)
        .await?;
    Ok(in_order_received(carried))
}

/// Rows an `UPDATE … RETURNING` gave back (in no particular order), in the
/// order the messages were received.
fn in_order_received(rows: Vec<conversation_message::Model>) -> Vec<StoredMessage> {
    let mut messages: Vec<StoredMessage> = rows.into_iter().map(StoredMessage::from).collect();
    messages.sort_by(|a, b| (a.received_at, &a.id).cmp(&(b.received_at, &b.id)));
    messages
}

/// The messages of the conversation without an outcome, in the order
/// received.
///
/// # Errors
/// Database failures.
pub async fn unsettled(
    db: &impl ConnectionTrait,
    conversation_id: &str,
) -> Result<Vec<StoredMessage>, StorageError> {
    Ok(Entity::find()
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::Outcome.is_null())
        .order_by_asc(Column::ReceivedAt)
        .order_by_asc(Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(StoredMessage::from)
        .collect())
}

/// Records that message `id` went to the person who was asked for or
/// holds the conversation, in the transcript as of turn `turn`.
///
/// # Errors
/// Database failures.
pub async fn settle_for_person(
    db: &impl ConnectionTrait,
    id: &str,
    turn: i64,
    at: DateTime<Utc>,
) -> Result<(), StorageError> {
    Entity::update_many()
        .col_expr(Column::Outcome, Expr::value(FOR_PERSON))
        .col_expr(Column::Turn, Expr::value(turn))
        .col_expr(Column::SettledAt, Expr::value(at))
        .filter(Column::Id.eq(id))
        .filter(Column::Outcome.is_null())
        .exec(db)
        .await?;
    Ok(())
}

/// Cancels what the turn `turn_id` carried and never settled: a turn that
/// was asked to stop and whose process died before it could save.
///
/// # Errors
/// Database failures.
pub async fn cancel_carried(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    turn_id: &str,
    at: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let cancelled = Entity::update_many()
        .col_expr(Column::Outcome, Expr::value(CANCELLED))
        .col_expr(Column::SettledAt, Expr::value(at))
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::CarriedBy.eq(turn_id))
        .filter(Column::Outcome.is_null())
        .exec(db)
        .await?;
    Ok(cancelled.rows_affected)
}

/// Records the outcome of messages the turn `turn_id` carried, as turn
/// number `turn`. Messages already settled keep their outcome.
///
/// # Errors
/// Database failures.
pub async fn settle(
    db: &impl ConnectionTrait,
    ids: &[String],
    turn_id: &str,
    outcome: &str,
    turn: i64,
    at: DateTime<Utc>,
) -> Result<(), StorageError> {
    if ids.is_empty() {
        return Ok(());
    }
    Entity::update_many()
        .col_expr(Column::Outcome, Expr::value(outcome))
        .col_expr(Column::Turn, Expr::value(turn))
        .col_expr(Column::SettledAt, Expr::value(at))
        .filter(Column::Id.is_in(ids.iter().map(String::as_str)))
        .filter(Column::CarriedBy.eq(turn_id))
        .filter(Column::Outcome.is_null())
        .exec(db)
        .await?;
    Ok(())
}

/// Gives back, as waiting, what the turn `turn_id` carried and did not
/// settle (a turn that could not start).
///
/// # Errors
/// Database failures.
pub async fn release(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    turn_id: &str,
) -> Result<(), StorageError> {
    Entity::update_many()
        .col_expr(Column::CarriedBy, Expr::value(None::<String>))
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::CarriedBy.eq(turn_id))
        .filter(Column::Outcome.is_null())
        .exec(db)
        .await?;
    Ok(())
}

/// Cancels every message of the conversation that no live turn carries
/// (`live_turn`: the claim that holds the conversation now, if any) and
/// returns them.
///
/// # Errors
/// Database failures.
pub async fn cancel_waiting(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    live_turn: Option<&str>,
    at: DateTime<Utc>,
) -> Result<Vec<StoredMessage>, StorageError> {
    let not_in_the_live_turn = match live_turn {
        Some(turn) => Column::CarriedBy.is_null().or(Column::CarriedBy.ne(turn)),
        None => Expr::value(true),
    };
    let cancelled = Entity::update_many()
        .col_expr(Column::Outcome, Expr::value(CANCELLED))
        .col_expr(Column::SettledAt, Expr::value(at))
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::Outcome.is_null())
        .filter(not_in_the_live_turn)
        .exec_with_returning(db)
        .await?;
    Ok(in_order_received(cancelled))
}

/// Takes the messages waiting to steer the running turn `turn_id` (sent
/// "for this turn") into it, and returns them in the order received.
///
/// # Errors
/// Database failures.
pub async fn take_steering(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    turn_id: &str,
) -> Result<Vec<StoredMessage>, StorageError> {
    let taken = Entity::update_many()
        .col_expr(Column::CarriedBy, Expr::value(turn_id))
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::Outcome.is_null())
        .filter(Column::CarriedBy.is_null())
        .filter(Column::Priority.eq(THIS_TURN))
        .exec_with_returning(db)
        .await?;
    Ok(in_order_received(taken))
}

/// Whether a message waits to steer the conversation's running turn.
///
/// # Errors
/// Database failures.
pub async fn steering_waiting(
    db: &impl ConnectionTrait,
    conversation_id: &str,
) -> Result<bool, StorageError> {
    Ok(Entity::find()
        .select_only()
        .column(Column::Id)
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::Outcome.is_null())
        .filter(Column::CarriedBy.is_null())
        .filter(Column::Priority.eq(THIS_TURN))
        .into_tuple::<String>()
        .one(db)
        .await?
        .is_some())
}

/// Whether the conversation has messages without an outcome.
///
/// # Errors
/// Database failures.
pub async fn any_waiting(
    db: &impl ConnectionTrait,
    conversation_id: &str,
) -> Result<bool, StorageError> {
    Ok(Entity::find()
        .select_only()
        .column(Column::Id)
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::Outcome.is_null())
        .into_tuple::<String>()
        .one(db)
        .await?
        .is_some())
}

/// The conversation's most recent messages, newest last: every one still
/// waiting or running, and up to `settled` that have their outcome.
///
/// # Errors
/// Database failures.
pub async fn recent(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    settled: u64,
) -> Result<Vec<StoredMessage>, StorageError> {
    let open = Entity::find()
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::Outcome.is_null())
        .all(db)
        .await?;
    let done = Entity::find()
        .filter(Column::ConversationId.eq(conversation_id))
        .filter(Column::Outcome.is_not_null())
        .order_by_desc(Column::ReceivedAt)
        .order_by_desc(Column::Id)
        .limit(settled)
        .all(db)
        .await?;
    Ok(in_order_received(open.into_iter().chain(done).collect()))
}

/// Conversations with messages that wait and no live turn: a process died
/// with them queued, or a turn ended while they were stored.
///
/// # Errors
/// Database failures.
pub async fn conversations_waiting(
    db: &impl ConnectionTrait,
    limit: u64,
) -> Result<Vec<String>, StorageError> {
    Ok(Entity::find()
        .select_only()
        .column(Column::ConversationId)
        .filter(Column::Outcome.is_null())
        .distinct()
        .limit(limit)
        .into_tuple::<String>()
        .all(db)
        .await?)
}
