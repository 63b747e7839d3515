//! The inbox: a task another group sent and this group admitted is written
//! here in the transaction that accepts it. The unique (sender, task key)
//! makes a resend after a lost acknowledgement, or two deliveries racing,
//! find the one task; the unique (sender, nonce) recognises a replayed
//! envelope under another key.

use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

/// `state` of a task just accepted, before anyone works on it.
pub const SUBMITTED: &str = "submitted";
/// A worker of this group took the task.
pub const WORKING: &str = "working";
/// Answered, with a result valid against the kind's result schema.
pub const COMPLETED: &str = "completed";
/// This group could not answer it (the reason is the status message).
pub const FAILED: &str = "failed";
/// Its sender canceled it before it was answered.
pub const CANCELED: &str = "canceled";

/// Whether `state` is final: the task will change no more.
#[must_use]
pub fn is_final(state: &str) -> bool {
    matches!(state, COMPLETED | FAILED | CANCELED)
}

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gateway_inbox")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub sender_group: String,
        pub task_key: String,
        pub nonce: String,
        pub root_key: String,
        pub parent_key: Option<String>,
        pub kind: String,
        pub envelope: String,
        pub envelope_digest: String,
        pub state: String,
        pub state_version: i32,
        pub result: Option<String>,
        /// Why the task failed, for its sender.
        pub status_message: Option<String>,
        /// The answer this group signed (JSON), sent with the result.
        pub signed_answer: Option<String>,
        pub created_at: DateTimeUtc,
        pub received_at: DateTimeUtc,
        pub updated_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A task in the inbox, as stored.
pub type InboxTask = entity::Model;

/// A task to accept.
#[derive(Debug, Clone)]
pub struct NewInboxTask<'a> {
    pub id: &'a str,
    pub sender_group: &'a str,
    pub task_key: &'a str,
    pub nonce: &'a str,
    pub root_key: &'a str,
    pub parent_key: Option<&'a str>,
    pub kind: &'a str,
    pub envelope: &'a str,
    pub envelope_digest: &'a str,
    pub created_at: DateTime<Utc>,
    pub received_at: DateTime<Utc>,
}

/// What accepting a task did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accepted {
    /// A new task, written now.
    New(InboxTask),
    /// The same envelope delivered again: the task it created earlier.
    Resent(InboxTask),
    /// The sender used this task key for a different envelope: nothing was
    /// written; the task that holds the key.
    KeyReused(InboxTask),
    /// The nonce was used before by the sender's task `holder` (another
    /// key): a replay; nothing was written.
    NonceReused { holder: InboxTask },
}

/// Writes `task` unless the sender's task key or nonce is already taken,
/// and says which. Call it inside the transaction that accepts the task
/// (with its journal event): on PostgreSQL a second delivery racing this
/// one waits for its commit and then finds the task.
///
/// # Errors
/// Database failures.
pub async fn accept(
    db: &impl ConnectionTrait,
    task: NewInboxTask<'_>,
) -> Result<Accepted, StorageError> {
    let written = entity::Entity::insert(entity::ActiveModel {
        id: Set(task.id.to_owned()),
        sender_group: Set(task.sender_group.to_owned()),
        task_key: Set(task.task_key.to_owned()),
        nonce: Set(task.nonce.to_owned()),
        root_key: Set(task.root_key.to_owned()),
        parent_key: Set(task.parent_key.map(str::to_owned)),
        kind: Set(task.kind.to_owned()),
        envelope: Set(task.envelope.to_owned()),
        envelope_digest: Set(task.envelope_digest.to_owned()),
        state: Set(SUBMITTED.to_owned()),
        state_version: Set(0),
        result: Set(None),
        status_message: Set(None),
        signed_answer: Set(None),
        created_at: Set(task.created_at),
        received_at: Set(task.received_at),
        updated_at: Set(task.received_at),
    })
    // No conflict target: either unique index (key or nonce) stops it.
    .on_conflict(OnConflict::new().do_nothing().to_owned())
    .exec_without_returning(db)
    .await?;
    let by_key = find(db, task.sender_group, task.task_key).await?;
    match by_key {
        Some(stored) if written == 1 => Ok(Accepted::New(stored)),
        Some(stored) if stored.envelope_digest == task.envelope_digest => {
            Ok(Accepted::Resent(stored))
        }
        Some(stored) => Ok(Accepted::KeyReused(stored)),
        None => {
            let holder = entity::Entity::find()
                .filter(entity::Column::SenderGroup.eq(task.sender_group))
                .filter(entity::Column::Nonce.eq(task.nonce))
                .one(db)
                .await?
                .ok_or_else(|| {
                    StorageError::Corrupt(format!(
                        "task {} of {} was neither written nor found",
                        task.task_key, task.sender_group
                    ))
                })?;
            Ok(Accepted::NonceReused { holder })
        }
    }
}

/// The task `task_key` of `sender_group`, if it was accepted.
///
/// # Errors
/// Database failures.
pub async fn find(
    db: &impl ConnectionTrait,
    sender_group: &str,
    task_key: &str,
) -> Result<Option<InboxTask>, StorageError> {
    Ok(entity::Entity::find()
        .filter(entity::Column::SenderGroup.eq(sender_group))
        .filter(entity::Column::TaskKey.eq(task_key))
        .one(db)
        .await?)
}

/// The task with this id (the A2A task id given to its sender).
///
/// # Errors
/// Database failures.
pub async fn get(db: &impl ConnectionTrait, id: &str) -> Result<Option<InboxTask>, StorageError> {
    Ok(entity::Entity::find_by_id(id).one(db).await?)
}

/// What a step of an inbox task records besides its state.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outcome<'a> {
    pub result: Option<&'a str>,
    pub signed_answer: Option<&'a str>,
    pub message: Option<&'a str>,
}

/// Moves the task from `from` to `to` (with what `outcome` gives); false when
/// it was not in `from` any more (another worker moved it first).
///
/// # Errors
/// Database failures.
pub async fn advance(
    db: &impl ConnectionTrait,
    id: &str,
    from: &str,
    to: &str,
    outcome: Outcome<'_>,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let mut update = entity::Entity::update_many()
        .col_expr(entity::Column::State, Expr::value(to))
        .col_expr(
            entity::Column::StateVersion,
            Expr::col(entity::Column::StateVersion).add(1),
        )
        .col_expr(entity::Column::UpdatedAt, Expr::value(now));
    if let Some(result) = outcome.result {
        update = update.col_expr(entity::Column::Result, Expr::value(result));
    }
    if let Some(signed) = outcome.signed_answer {
        update = update.col_expr(entity::Column::SignedAnswer, Expr::value(signed));
    }
    if let Some(message) = outcome.message {
        update = update.col_expr(entity::Column::StatusMessage, Expr::value(message));
    }
    let done = update
        .filter(entity::Column::Id.eq(id))
        .filter(entity::Column::State.eq(from))
        .exec(db)
        .await?;
    Ok(done.rows_affected == 1)
}

/// The newest `limit` tasks received, newest first.
///
/// # Errors
/// Database failures.
pub async fn recent(db: &impl ConnectionTrait, limit: u64) -> Result<Vec<InboxTask>, StorageError> {
    Ok(entity::Entity::find()
        .order_by_desc(entity::Column::ReceivedAt)
        .order_by_desc(entity::Column::Id)
        .limit(limit)
        .all(db)
        .await?)
}

/// Which of a sender's tasks to list.
#[derive(Debug, Clone, Default)]
pub struct SenderFilter<'a> {
    /// Only the tasks of this chain (its root key).
    pub root_key: Option<&'a str>,
    pub state: Option<&'a str>,
    /// Only tasks whose state changed at or after this.
    pub updated_since: Option<DateTime<Utc>>,
}

fn of_sender(sender: &str, filter: &SenderFilter<'_>) -> sea_orm::Select<entity::Entity> {
    let mut query = entity::Entity::find().filter(entity::Column::SenderGroup.eq(sender));
    if let Some(root) = filter.root_key {
        query = query.filter(entity::Column::RootKey.eq(root));
    }
    if let Some(state) = filter.state {
        query = query.filter(entity::Column::State.eq(state));
    }
    if let Some(since) = filter.updated_since {
        query = query.filter(entity::Column::UpdatedAt.gte(since));
    }
    query
}

/// A page of the tasks `sender` sent here, newest received first: at most
/// `limit`, after the task `after` (received at, id) of the previous page.
///
/// # Errors
/// Database failures.
pub async fn page_of_sender(
    db: &impl ConnectionTrait,
    sender: &str,
    filter: &SenderFilter<'_>,
    after: Option<(DateTime<Utc>, &str)>,
    limit: u64,
) -> Result<Vec<InboxTask>, StorageError> {
    let mut query = of_sender(sender, filter);
    if let Some((received_at, id)) = after {
        query = query.filter(
            sea_orm::Condition::any()
                .add(entity::Column::ReceivedAt.lt(received_at))
                .add(
                    sea_orm::Condition::all()
                        .add(entity::Column::ReceivedAt.eq(received_at))
                        .add(entity::Column::Id.lt(id)),
                ),
        );
    }
    Ok(query
        .order_by_desc(entity::Column::ReceivedAt)
        .order_by_desc(entity::Column::Id)
        .limit(limit)
        .all(db)
        .await?)
}

/// How many tasks `sender` sent here that `filter` lets through.
///
/// # Errors
/// Database failures.
pub async fn count_of_sender(
    db: &impl ConnectionTrait,
    sender: &str,
    filter: &SenderFilter<'_>,
) -> Result<u64, StorageError> {
    use sea_orm::PaginatorTrait;
    Ok(of_sender(sender, filter).count(db).await?)
}
