//! Failed-login bookkeeping, shared by every server that uses the database.

use crate::entities::login_failure;
use crate::error::StorageError;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, Set, Statement,
};
use sha2::{Digest, Sha256};

type Utc = chrono::DateTime<chrono::Utc>;

/// Records a failure and returns its id (for [`forget`]).
///
/// # Errors
/// Database failures.
pub async fn record_failure(
    db: &impl ConnectionTrait,
    scope: &str,
    now: Utc,
) -> Result<i64, StorageError> {
    let row = login_failure::ActiveModel {
        scope: Set(scope.to_owned()),
        failed_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(row.id)
}

/// Deletes one recorded failure: an attempt counted up front that succeeded.
///
/// # Errors
/// Database failures.
pub async fn forget(db: &impl ConnectionTrait, id: i64) -> Result<(), StorageError> {
    login_failure::Entity::delete_by_id(id).exec(db).await?;
    Ok(())
}

/// Makes other transactions that lock the same scope wait until this one
/// ends, so "count, then record" is atomic across servers. Call it inside a
/// write transaction. SQLite needs nothing: its write transactions
/// ([`crate::Database::begin_write`]) already run one at a time.
///
/// # Errors
/// Database failures.
pub async fn lock_scope(db: &impl ConnectionTrait, scope: &str) -> Result<(), StorageError> {
    if db.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    let digest = Sha256::digest(scope.as_bytes());
    let mut key = [0u8; 8];
    key.copy_from_slice(&digest[..8]);
    db.execute(Statement::from_sql_and_values(
        DbBackend::Postgres,
        "SELECT pg_advisory_xact_lock($1)",
        [i64::from_be_bytes(key).into()],
    ))
    .await?;
    Ok(())
}

/// Failures recorded for `scope` since `since`, and the oldest of them (which
/// decides when the window frees a slot).
///
/// # Errors
/// Database failures.
pub async fn failures_since(
    db: &impl ConnectionTrait,
    scope: &str,
    since: Utc,
) -> Result<(u64, Option<Utc>), StorageError> {
    let query = login_failure::Entity::find()
        .filter(login_failure::Column::Scope.eq(scope))
        .filter(login_failure::Column::FailedAt.gt(since));
    let count = query.clone().count(db).await?;
    let oldest = query
        .order_by_asc(login_failure::Column::FailedAt)
        .one(db)
        .await?
        .map(|row| row.failed_at);
    Ok((count, oldest))
}

/// The most recent failure recorded for `scope` since `since` (from which
/// a progressive delay is counted).
///
/// # Errors
/// Database failures.
pub async fn newest_failure_since(
    db: &impl ConnectionTrait,
    scope: &str,
    since: Utc,
) -> Result<Option<Utc>, StorageError> {
    Ok(login_failure::Entity::find()
        .filter(login_failure::Column::Scope.eq(scope))
        .filter(login_failure::Column::FailedAt.gt(since))
        .order_by_desc(login_failure::Column::FailedAt)
        .one(db)
        .await?
        .map(|row| row.failed_at))
}

/// Forgets the failures of a scope (after a successful login).
///
/// # Errors
/// Database failures.
pub async fn clear(db: &impl ConnectionTrait, scope: &str) -> Result<(), StorageError> {
    login_failure::Entity::delete_many()
        .filter(login_failure::Column::Scope.eq(scope))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes rows older than any window still in use.
///
/// # Errors
/// Database failures.
pub async fn prune(db: &impl ConnectionTrait, before: Utc) -> Result<u64, StorageError> {
    let result = login_failure::Entity::delete_many()
        .filter(login_failure::Column::FailedAt.lt(before))
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}
