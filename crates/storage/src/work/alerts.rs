//! Alerts: what only a person can settle (a broken journal, an unknown
//! outcome whose idempotency key the provider is about to forget). One open
//! alert per key; raising it again counts a repeat instead of a new row.

use super::entities::alert;
use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

/// An alert as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub id: String,
    pub kind: String,
    pub subject: Option<String>,
    pub message: String,
    pub raised_at: DateTime<Utc>,
    pub last_raised_at: DateTime<Utc>,
    pub repeats: u32,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub acknowledged_by: Option<String>,
}

/// Raises an alert, or counts a repeat of the open one with the same key.
///
/// # Errors
/// Database failures.
pub async fn raise(
    db: &impl ConnectionTrait,
    kind: &str,
    subject: Option<&str>,
    message: &str,
    dedupe_key: &str,
    now: DateTime<Utc>,
) -> Result<(), StorageError> {
    alert::Entity::insert(alert::ActiveModel {
        id: Set(crate::ids::new_id("alr")),
        kind: Set(kind.to_owned()),
        subject: Set(subject.map(str::to_owned)),
        message: Set(message.to_owned()),
        dedupe_key: Set(Some(dedupe_key.to_owned())),
        raised_at: Set(now),
        last_raised_at: Set(now),
        repeats: Set(0),
        acknowledged_at: Set(None),
        acknowledged_by: Set(None),
    })
    .on_conflict(
        OnConflict::column(alert::Column::DedupeKey)
            .value(
                alert::Column::Repeats,
                Expr::col((alert::Entity, alert::Column::Repeats)).add(1),
            )
            .value(alert::Column::LastRaisedAt, Expr::value(now))
            .value(alert::Column::Message, Expr::value(message.to_owned()))
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// Marks an open alert as seen by a person; its key is free again, so the
/// same problem found later raises a new alert. Returns false when there
/// is no such open alert.
///
/// # Errors
/// Database failures.
pub async fn acknowledge(
    db: &impl ConnectionTrait,
    id: &str,
    by: &str,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let result = alert::Entity::update_many()
        .col_expr(alert::Column::AcknowledgedAt, Expr::value(now))
        .col_expr(alert::Column::AcknowledgedBy, Expr::value(by.to_owned()))
        .col_expr(alert::Column::DedupeKey, Expr::value(None::<String>))
        .filter(alert::Column::Id.eq(id))
        .filter(alert::Column::AcknowledgedAt.is_null())
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Open alerts, newest first.
///
/// # Errors
/// Database failures.
pub async fn open(db: &impl ConnectionTrait, limit: u64) -> Result<Vec<Alert>, StorageError> {
    Ok(alert::Entity::find()
        .filter(alert::Column::AcknowledgedAt.is_null())
        .order_by_desc(alert::Column::LastRaisedAt)
        .order_by_desc(alert::Column::Id)
        .limit(limit)
        .all(db)
        .await?
        .into_iter()
        .map(decode)
        .collect())
}

/// Open alerts of one kind (for the metrics).
///
/// # Errors
/// Database failures.
pub async fn count_open(db: &impl ConnectionTrait, kind: &str) -> Result<u64, StorageError> {
    Ok(alert::Entity::find()
        .filter(alert::Column::AcknowledgedAt.is_null())
        .filter(alert::Column::Kind.eq(kind))
        .count(db)
        .await?)
}

fn decode(row: alert::Model) -> Alert {
    Alert {
        id: row.id,
        kind: row.kind,
        subject: row.subject,
        message: row.message,
        raised_at: row.raised_at,
        last_raised_at: row.last_raised_at,
        repeats: u32::try_from(row.repeats).unwrap_or(0),
        acknowledged_at: row.acknowledged_at,
        acknowledged_by: row.acknowledged_by,
    }
}
