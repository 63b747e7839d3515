//! Appending events to their streams' chains.

use super::{JournalEvent, SYSTEM_STREAM, event_hash, genesis};
use crate::entities::{journal_event, journal_stream};
use crate::error::StorageError;
use chrono::{DateTime, SubsecRound, Utc};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DbBackend, EntityTrait, QuerySelect, Set};

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

/// Appends events, in order, to their streams, inside the caller's
/// transaction. A stream's head row is locked (PostgreSQL) until commit, so
/// only writers of the same proposal wait for each other.
///
/// # Errors
/// Database failures; the caller's transaction then rolls back as a whole.
pub async fn append(
    db: &impl ConnectionTrait,
    events: Vec<NewEvent>,
) -> Result<Vec<JournalEvent>, StorageError> {
    let mut written = Vec::with_capacity(events.len());
    let mut index = 0;
    while index < events.len() {
        // Consecutive events of one stream are appended together.
        let stream = events[index].stream().to_owned();
        let run_end = events[index..]
            .iter()
            .position(|e| e.stream() != stream)
            .map_or(events.len(), |offset| index + offset);
        written.extend(append_run(db, &stream, &events[index..run_end]).await?);
        index = run_end;
    }
    Ok(written)
}

async fn append_run(
    db: &impl ConnectionTrait,
    stream: &str,
    events: &[NewEvent],
) -> Result<Vec<JournalEvent>, StorageError> {
    let mut head_query = journal_stream::Entity::find_by_id(stream.to_owned());
    if db.get_database_backend() == DbBackend::Postgres {
        head_query = head_query.lock_exclusive();
    }
    let head = head_query.one(db).await?;
    let (mut length, mut prev_hash) = match &head {
        Some(head) => (head.length, head.head_hash.clone()),
        None => (0, genesis(stream)),
    };
    let mut models = Vec::with_capacity(events.len());
    let mut rows = Vec::with_capacity(events.len());
    for event in events {
        length += 1;
        let mut model = JournalEvent {
            seq: 0,
            stream: stream.to_owned(),
            stream_seq: length,
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
        prev_hash = model.hash.clone();
        let mut row: journal_event::ActiveModel = model.clone().into();
        row.seq = sea_orm::ActiveValue::NotSet;
        rows.push(row);
        models.push(model);
    }
    journal_event::Entity::insert_many(rows).exec(db).await?;
    let updated_at = events.last().map(|e| e.at).unwrap_or_else(Utc::now);
    let row = journal_stream::ActiveModel {
        stream: Set(stream.to_owned()),
        length: Set(length),
        head_hash: Set(prev_hash),
        dirty: Set(true),
        updated_at: Set(updated_at),
    };
    if head.is_some() {
        row.update(db).await?;
    } else {
        row.insert(db).await?;
    }
    Ok(models)
}
