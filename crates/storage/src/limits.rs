//! Approval limits per approver and currency, and four-eyes thresholds per
//! currency, set by administrators.

use crate::entities::{approval_limit, four_eyes_threshold};
use crate::error::StorageError;
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set, sea_query::OnConflict,
};

/// # Errors
/// Database failures.
pub async fn approval_limit(
    db: &impl ConnectionTrait,
    user_id: &str,
    currency: &str,
) -> Result<Option<i64>, StorageError> {
    Ok(
        approval_limit::Entity::find_by_id((user_id.to_owned(), currency.to_owned()))
            .one(db)
            .await?
            .map(|row| row.limit_minor),
    )
}

/// # Errors
/// Database failures.
pub async fn set_approval_limit(
    db: &impl ConnectionTrait,
    user_id: &str,
    currency: &str,
    limit_minor: i64,
) -> Result<(), StorageError> {
    approval_limit::Entity::insert(approval_limit::ActiveModel {
        user_id: Set(user_id.to_owned()),
        currency: Set(currency.to_owned()),
        limit_minor: Set(limit_minor),
    })
    .on_conflict(
        OnConflict::columns([
            approval_limit::Column::UserId,
            approval_limit::Column::Currency,
        ])
        .update_column(approval_limit::Column::LimitMinor)
        .to_owned(),
    )
    .exec(db)
    .await?;
    Ok(())
}

/// # Errors
/// Database failures.
pub async fn four_eyes_threshold(
    db: &impl ConnectionTrait,
    currency: &str,
) -> Result<Option<i64>, StorageError> {
    Ok(four_eyes_threshold::Entity::find_by_id(currency.to_owned())
        .one(db)
        .await?
        .map(|row| row.threshold_minor))
}

/// # Errors
/// Database failures.
pub async fn set_four_eyes_threshold(
    db: &impl ConnectionTrait,
    currency: &str,
    threshold_minor: i64,
) -> Result<(), StorageError> {
    four_eyes_threshold::Entity::insert(four_eyes_threshold::ActiveModel {
        currency: Set(currency.to_owned()),
        threshold_minor: Set(threshold_minor),
    })
    .on_conflict(
        OnConflict::column(four_eyes_threshold::Column::Currency)
            .update_column(four_eyes_threshold::Column::ThresholdMinor)
            .to_owned(),
    )
    .exec(db)
    .await?;
    Ok(())
}

/// Every limit set for the approver, as `(currency, limit_minor)` by currency.
///
/// # Errors
/// Database failures.
pub async fn approval_limits(
    db: &impl ConnectionTrait,
    user_id: &str,
) -> Result<Vec<(String, i64)>, StorageError> {
    Ok(approval_limit::Entity::find()
        .filter(approval_limit::Column::UserId.eq(user_id))
        .order_by_asc(approval_limit::Column::Currency)
        .all(db)
        .await?
        .into_iter()
        .map(|row| (row.currency, row.limit_minor))
        .collect())
}

/// Every four-eyes threshold set, as `(currency, threshold_minor)`.
///
/// # Errors
/// Database failures.
pub async fn four_eyes_thresholds(
    db: &impl ConnectionTrait,
) -> Result<Vec<(String, i64)>, StorageError> {
    Ok(four_eyes_threshold::Entity::find()
        .order_by_asc(four_eyes_threshold::Column::Currency)
        .all(db)
        .await?
        .into_iter()
        .map(|row| (row.currency, row.threshold_minor))
        .collect())
}
