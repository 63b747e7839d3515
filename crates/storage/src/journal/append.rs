//! Appending events to their streams' chains.

use super::{JournalEvent, SYSTEM_STREAM, event_hash, genesis};
use crate::bulk::{self, Conflict};
use crate::entities::{journal_event, journal_stream};
use crate::error::StorageError;
use crate::many::one_of;
use chrono::{DateTime, SubsecRound, Utc};
use sea_orm::{ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use std::collections::HashMap;

/// An event to append.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub proposal_id: Option<String>,
    pub order_id: Option<String>,
    /// `user:NAME`, `agent:NAME` or `system:COMPONENT`.
    pub actor: String,
    pub kind: String,
    pub from_status: Option<String>,
    pub to_status: Option<String>,
    pub payload: serde_json::Value,
    pub at: DateTime<Utc>,
}

impl NewEvent {
    fn stream(&self) -> &str {
        self.proposal_id.as_deref().unwrap_or(SYSTEM_STREAM)
    }
}

/// Appends events, in order, to their streams (each proposal's, or the
/// system stream), inside the caller's transaction: one query for the
/// streams' heads (locked on PostgreSQL until commit, in stream order, so
/// only writers of the same stream wait for each other), one insert for all
/// events and one upsert for the new heads, however many streams a batch
/// touches.
///
/// # Errors
/// Database failures; the caller's transaction then rolls back as a whole.
pub async fn append(
    db: &impl ConnectionTrait,
    events: Vec<NewEvent>,
) -> Result<Vec<JournalEvent>, StorageError> {
    let streamed = events
        .into_iter()
        .map(|event| (event.stream().to_owned(), event))
        .collect();
    append_streamed(db, streamed).await
}

/// Appends events, in order, to the one named stream (an order's
/// `order:<id>`, see [`super::order_stream`]), as [`append`] does.
///
/// # Errors
/// As [`append`].
pub async fn append_to_stream(
    db: &impl ConnectionTrait,
    stream: &str,
    events: Vec<NewEvent>,
) -> Result<Vec<JournalEvent>, StorageError> {
    let streamed = events
        .into_iter()
        .map(|event| (stream.to_owned(), event))
        .collect();
    append_streamed(db, streamed).await
}

async fn append_streamed(
    db: &impl ConnectionTrait,
    events: Vec<(String, NewEvent)>,
) -> Result<Vec<JournalEvent>, StorageError> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let mut streams: Vec<String> = events.iter().map(|(stream, _)| stream.clone()).collect();
    streams.sort();
    streams.dedup();
    let mut head_query = journal_stream::Entity::find()
        .filter(one_of(
            db.get_database_backend(),
            journal_stream::Column::Stream,
            &streams,
        ))
        .order_by_asc(journal_stream::Column::Stream);
    if db.get_database_backend() == DbBackend::Postgres {
        head_query = head_query.lock_exclusive();
    }
    let mut heads: HashMap<String, (i64, String)> = head_query
        .all(db)
        .await?
        .into_iter()
        .map(|head| (head.stream, (head.length, head.head_hash)))
        .collect();
    let mut models = Vec::with_capacity(events.len());
    let mut rows = Vec::with_capacity(events.len());
    for (stream, event) in &events {
        let (length, prev_hash) = heads
            .entry(stream.clone())
            .or_insert_with(|| (0, genesis(stream)));
        *length += 1;
        let mut model = JournalEvent {
            seq: 0,
            stream: stream.clone(),
            stream_seq: *length,
            proposal_id: event.proposal_id.clone(),
            order_id: event.order_id.clone(),
            actor: event.actor.clone(),
            kind: event.kind.clone(),
            from_status: event.from_status.clone(),
            to_status: event.to_status.clone(),
            payload: event.payload.to_string(),
            // Stored precision is microseconds on both backends.
            at: event.at.trunc_subsecs(6),
            prev_hash: prev_hash.clone(),
            hash: String::new(),
        };
        model.hash = event_hash(&model);
        prev_hash.clone_from(&model.hash);
        let mut row: journal_event::ActiveModel = model.clone().into();
        row.seq = sea_orm::ActiveValue::NotSet;
        rows.push(row);
        models.push(model);
    }
    bulk::insert_all(db, rows, Conflict::Fail).await?;
    let updated_at = events.last().map_or_else(Utc::now, |(_, e)| e.at);
    let new_heads = streams.into_iter().filter_map(|stream| {
        let (length, head_hash) = heads.remove(&stream)?;
        Some(journal_stream::ActiveModel {
            stream: Set(stream),
            length: Set(length),
            head_hash: Set(head_hash),
            dirty: Set(true),
            updated_at: Set(updated_at),
        })
    });
    bulk::insert_all(
        db,
        new_heads.collect(),
        Conflict::Update(
            journal_stream::Column::Stream,
            vec![
                journal_stream::Column::Length,
                journal_stream::Column::HeadHash,
                journal_stream::Column::Dirty,
                journal_stream::Column::UpdatedAt,
            ],
        ),
    )
    .await?;
    Ok(models)
}
