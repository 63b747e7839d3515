//! Counts per lane for the operations view and the metrics, in one grouped
//! query (a scrape must not read ten thousand rows to count them).

use super::{DEAD, QUEUED, RUNNING};
use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbBackend, Statement};

/// One lane's items by what they are doing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaneSummary {
    pub lane: String,
    pub running: u64,
    /// Due now and not yet taken.
    pub queued: u64,
    /// Schedules and items whose time has not come.
    pub scheduled: u64,
    /// Failed at least once and waiting for their next try.
    pub retrying: u64,
    pub dead: u64,
    /// The longest-waiting due item's time, if any waits.
    pub oldest_due: Option<DateTime<Utc>>,
}

/// Every lane with unfinished or dead items.
///
/// # Errors
/// Database failures.
pub async fn lane_summary(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<Vec<LaneSummary>, StorageError> {
    let backend = db.get_database_backend();
    let now_param = match backend {
        DbBackend::Postgres => "$1",
        _ => "?1",
    };
    let sql = format!(
        "SELECT lane, \
           SUM(CASE WHEN state = '{RUNNING}' THEN 1 ELSE 0 END) AS running, \
           SUM(CASE WHEN state = '{QUEUED}' AND every_seconds IS NULL AND attempts = 0 \
                     AND run_after <= {now_param} THEN 1 ELSE 0 END) AS queued, \
           SUM(CASE WHEN state = '{QUEUED}' AND (every_seconds IS NOT NULL \
                     OR (attempts = 0 AND run_after > {now_param})) THEN 1 ELSE 0 END) AS scheduled, \
           SUM(CASE WHEN state = '{QUEUED}' AND every_seconds IS NULL AND attempts > 0 \
                     THEN 1 ELSE 0 END) AS retrying, \
           SUM(CASE WHEN state = '{DEAD}' THEN 1 ELSE 0 END) AS dead, \
           MIN(CASE WHEN state = '{QUEUED}' AND every_seconds IS NULL \
                     AND run_after <= {now_param} THEN run_after END) AS oldest_due \
         FROM work_items WHERE state IN ('{QUEUED}', '{RUNNING}', '{DEAD}') \
         GROUP BY lane ORDER BY lane"
    );
    let rows = db
        .query_all(Statement::from_sql_and_values(backend, sql, [now.into()]))
        .await?;
    let count = |row: &sea_orm::QueryResult, column: &str| -> Result<u64, StorageError> {
        let value: Option<i64> = row.try_get("", column)?;
        Ok(u64::try_from(value.unwrap_or(0)).unwrap_or(0))
    };
    rows.iter()
        .map(|row| {
            Ok(LaneSummary {
                lane: row.try_get("", "lane")?,
                running: count(row, "running")?,
                queued: count(row, "queued")?,
                scheduled: count(row, "scheduled")?,
                retrying: count(row, "retrying")?,
                dead: count(row, "dead")?,
                oldest_due: row.try_get("", "oldest_due")?,
            })
        })
        .collect()
}
