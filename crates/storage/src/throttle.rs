//! Failed-login bookkeeping, shared by every server that uses the database.

use crate::entities::login_failure;
use crate::error::StorageError;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, Set,
};

type Utc = chrono::DateTime<chrono::Utc>;

/// # Errors
/// Database failures.
pub async fn record_failure(
    db: &impl ConnectionTrait,
    scope: &str,
    now: Utc,
) -> Result<(), StorageError> {
    login_failure::ActiveModel {
        scope: Set(scope.to_owned()),
        failed_at: Set(now),
        ..Default::default()
    }
    .insert(db)
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
