//! Checkpoints: a second hash chain, each link recording the heads of the
//! streams that changed since the previous one. Written by the reconciler
//! now and then, so a whole deleted stream is detected.

use crate::entities::{journal_checkpoint, journal_stream};
use crate::error::StorageError;
use chrono::{DateTime, SubsecRound, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Statement, sea_query::Expr,
};
use serde::Serialize;

pub const CHECKPOINT_GENESIS: &str = "countersign-checkpoints";

#[derive(Serialize)]
struct Hashed<'a> {
    at_micros: i64,
    streams: &'a str,
    prev_hash: &'a str,
}

pub(crate) fn checkpoint_hash(model: &journal_checkpoint::Model) -> String {
    domain::digest::sha256_json(&Hashed {
        at_micros: model.at.timestamp_micros(),
        streams: &model.streams,
        prev_hash: &model.prev_hash,
    })
}

pub(crate) fn checkpoint_genesis() -> String {
    domain::digest::sha256_hex(CHECKPOINT_GENESIS.as_bytes())
}

/// Whether any stream changed since the last checkpoint (a read, so an
/// idle system writes no checkpoint).
///
/// # Errors
/// Database failures.
pub async fn has_changes(db: &impl ConnectionTrait) -> Result<bool, StorageError> {
    Ok(journal_stream::Entity::find()
        .filter(journal_stream::Column::Dirty.eq(true))
        .one(db)
        .await?
        .is_some())
}

/// Records the heads of every changed stream in a new checkpoint, in the
/// caller's write transaction. Returns how many streams it covered (0: no
/// checkpoint written).
///
/// # Errors
/// Database failures.
pub async fn checkpoint(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<usize, StorageError> {
    if db.get_database_backend() == DbBackend::Postgres {
        // One checkpoint writer at a time across replicas.
        db.execute(Statement::from_string(
            DbBackend::Postgres,
            "SELECT pg_advisory_xact_lock(4821001)",
        ))
        .await?;
    }
    let dirty = journal_stream::Entity::find()
        .filter(journal_stream::Column::Dirty.eq(true))
        .order_by_asc(journal_stream::Column::Stream)
        .limit(5000)
        .all(db)
        .await?;
    if dirty.is_empty() {
        return Ok(0);
    }
    let heads: Vec<(String, i64, String)> = dirty
        .iter()
        .map(|s| (s.stream.clone(), s.length, s.head_hash.clone()))
        .collect();
    let prev_hash = journal_checkpoint::Entity::find()
        .order_by_desc(journal_checkpoint::Column::Id)
        .one(db)
        .await?
        .map_or_else(checkpoint_genesis, |c| c.hash);
    let mut model = journal_checkpoint::Model {
        id: 0,
        at: now.trunc_subsecs(6),
        streams: serde_json::to_string(&heads).map_err(|e| StorageError::Corrupt(e.to_string()))?,
        prev_hash,
        hash: String::new(),
    };
    model.hash = checkpoint_hash(&model);
    let mut row: journal_checkpoint::ActiveModel = model.into();
    row.id = sea_orm::ActiveValue::NotSet;
    row.insert(db).await?;
    for (stream, length, _) in &heads {
        // Only if nothing was appended meanwhile; otherwise it stays dirty.
        journal_stream::Entity::update_many()
            .col_expr(journal_stream::Column::Dirty, Expr::value(false))
            .filter(journal_stream::Column::Stream.eq(stream.clone()))
            .filter(journal_stream::Column::Length.eq(*length))
            .exec(db)
            .await?;
    }
    Ok(heads.len())
}
