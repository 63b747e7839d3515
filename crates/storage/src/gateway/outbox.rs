//! The outbox: every task this group sends another, written in the
//! transaction that decides to send it (with its journal event and the work
//! item that relays it). The row is the task's state on this side; each
//! change moves `state_version` on, so two workers racing over one task
//! (a relay taken over after a lost lease) record one answer.

use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

/// Written, not yet acknowledged by the peer.
pub const QUEUED: &str = "queued";
/// The peer acknowledged it (and gave its task id).
pub const DELIVERED: &str = "delivered";
/// The peer says it is working on it.
pub const WORKING: &str = "working";
pub const COMPLETED: &str = "completed";
pub const FAILED: &str = "failed";
/// The peer refused the task (its checks said no): final.
pub const REFUSED: &str = "refused";
/// Cancel asked for (Stop, or a person): the peer is told until it
/// acknowledges; not final.
pub const CANCELING: &str = "canceling";
pub const CANCELED: &str = "canceled";
/// The budget's deadline passed without a final answer.
pub const EXPIRED: &str = "expired";

/// Whether `state` is final: nothing more is asked of the peer.
#[must_use]
pub fn is_final(state: &str) -> bool {
    matches!(state, COMPLETED | FAILED | REFUSED | CANCELED | EXPIRED)
}

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gateway_outbox")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub to_group: String,
        pub task_key: String,
        pub root_key: String,
        pub parent_key: Option<String>,
        pub kind: String,
        pub subject: Option<String>,
        pub envelope: String,
        pub state: String,
        pub state_version: i32,
        pub remote_task_id: Option<String>,
        pub result: Option<String>,
        pub signed_answer: Option<String>,
        pub error: Option<String>,
        pub deadline: DateTimeUtc,
        pub created_at: DateTimeUtc,
        pub updated_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A task in the outbox, as stored.
pub type OutboxTask = entity::Model;

/// A task to write.
#[derive(Debug, Clone)]
pub struct NewOutboxTask<'a> {
    pub id: &'a str,
    pub to_group: &'a str,
    pub task_key: &'a str,
    pub root_key: &'a str,
    pub parent_key: Option<&'a str>,
    pub kind: &'a str,
    pub subject: Option<&'a str>,
    pub envelope: &'a str,
    pub deadline: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

/// Writes a queued task, in the caller's transaction.
///
/// # Errors
/// Database failures, among them a task key used before (unique).
pub async fn insert(
    db: &impl ConnectionTrait,
    task: NewOutboxTask<'_>,
) -> Result<(), StorageError> {
    entity::Entity::insert(entity::ActiveModel {
        id: Set(task.id.to_owned()),
        to_group: Set(task.to_group.to_owned()),
        task_key: Set(task.task_key.to_owned()),
        root_key: Set(task.root_key.to_owned()),
        parent_key: Set(task.parent_key.map(str::to_owned)),
        kind: Set(task.kind.to_owned()),
        subject: Set(task.subject.map(str::to_owned)),
        envelope: Set(task.envelope.to_owned()),
        state: Set(QUEUED.to_owned()),
        state_version: Set(0),
        remote_task_id: Set(None),
        result: Set(None),
        signed_answer: Set(None),
        error: Set(None),
        deadline: Set(task.deadline),
        created_at: Set(task.created_at),
        updated_at: Set(task.created_at),
    })
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// The task with this id.
///
/// # Errors
/// Database failures.
pub async fn get(db: &impl ConnectionTrait, id: &str) -> Result<Option<OutboxTask>, StorageError> {
    Ok(entity::Entity::find_by_id(id).one(db).await?)
}

/// The tasks sent for `subject`, oldest first.
///
/// # Errors
/// Database failures.
pub async fn for_subject(
    db: &impl ConnectionTrait,
    subject: &str,
) -> Result<Vec<OutboxTask>, StorageError> {
    Ok(entity::Entity::find()
        .filter(entity::Column::Subject.eq(subject))
        .order_by_asc(entity::Column::CreatedAt)
        .order_by_asc(entity::Column::Id)
        .all(db)
        .await?)
}

/// The tasks sent for `subject` that have not ended.
///
/// # Errors
/// Database failures.
pub async fn open_for_subject(
    db: &impl ConnectionTrait,
    subject: &str,
) -> Result<Vec<OutboxTask>, StorageError> {
    Ok(for_subject(db, subject)
        .await?
        .into_iter()
        .filter(|task| !is_final(&task.state))
        .collect())
}

/// What a step of the task changes.
#[derive(Debug, Clone, Default)]
pub struct Change {
    pub state: &'static str,
    pub remote_task_id: Option<String>,
    pub result: Option<String>,
    pub signed_answer: Option<String>,
    pub error: Option<String>,
}

/// Moves the task to `change.state` if it is still at `seen_version`
/// (setting the fields `change` gives, keeping the others); false when
/// another worker moved it first.
///
/// # Errors
/// Database failures.
pub async fn advance(
    db: &impl ConnectionTrait,
    id: &str,
    seen_version: i32,
    change: Change,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let mut update = entity::Entity::update_many()
        .col_expr(entity::Column::State, Expr::value(change.state))
        .col_expr(entity::Column::StateVersion, Expr::value(seen_version + 1))
        .col_expr(entity::Column::UpdatedAt, Expr::value(now));
    if let Some(remote) = change.remote_task_id {
        update = update.col_expr(entity::Column::RemoteTaskId, Expr::value(remote));
    }
    if let Some(result) = change.result {
        update = update.col_expr(entity::Column::Result, Expr::value(result));
    }
    if let Some(signed) = change.signed_answer {
        update = update.col_expr(entity::Column::SignedAnswer, Expr::value(signed));
    }
    if let Some(error) = change.error {
        update = update.col_expr(entity::Column::Error, Expr::value(error));
    }
    let done = update
        .filter(entity::Column::Id.eq(id))
        .filter(entity::Column::StateVersion.eq(seen_version))
        .exec(db)
        .await?;
    Ok(done.rows_affected == 1)
}

/// The newest `limit` tasks sent, newest first.
///
/// # Errors
/// Database failures.
pub async fn recent(
    db: &impl ConnectionTrait,
    limit: u64,
) -> Result<Vec<OutboxTask>, StorageError> {
    Ok(entity::Entity::find()
        .order_by_desc(entity::Column::CreatedAt)
        .order_by_desc(entity::Column::Id)
        .limit(limit)
        .all(db)
        .await?)
}
