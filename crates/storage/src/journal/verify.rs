//! Re-computing every chain: each stream from its genesis to its stored
//! head, then the checkpoints, whose recorded heads must still be there.

use super::checkpoint::{checkpoint_genesis, checkpoint_hash};
use super::{event_hash, genesis};
use crate::entities::{journal_checkpoint, journal_event, journal_stream};
use crate::error::StorageError;
use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait, QueryOrder};
use serde::Serialize;
use std::collections::HashMap;

/// The result of checking the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ChainReport {
    Intact {
        events: u64,
        streams: u64,
        checkpoints: u64,
    },
    Broken {
        stream: String,
        at_seq: i64,
        problem: String,
    },
}

fn broken(stream: &str, at_seq: i64, problem: impl Into<String>) -> ChainReport {
    ChainReport::Broken {
        stream: stream.to_owned(),
        at_seq,
        problem: problem.into(),
    }
}

/// # Errors
/// Database failures.
pub async fn verify_chain(db: &impl ConnectionTrait) -> Result<ChainReport, StorageError> {
    let heads: HashMap<String, journal_stream::Model> = journal_stream::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(|s| (s.stream.clone(), s))
        .collect();
    // Every event's hash, per stream, in stream order.
    let mut chains: HashMap<String, Vec<String>> = HashMap::new();
    let mut events = 0u64;
    let mut pages = journal_event::Entity::find()
        .order_by_asc(journal_event::Column::Stream)
        .order_by_asc(journal_event::Column::StreamSeq)
        .paginate(db, 2000);
    while let Some(batch) = pages.fetch_and_next().await? {
        for event in batch {
            events += 1;
            let chain = chains.entry(event.stream.clone()).or_default();
            let expected_seq = i64::try_from(chain.len()).unwrap_or(i64::MAX) + 1;
            if event.stream_seq != expected_seq {
                return Ok(broken(
                    &event.stream,
                    expected_seq,
                    format!("event {expected_seq} of the stream is missing"),
                ));
            }
            let expected_prev = chain
                .last()
                .cloned()
                .unwrap_or_else(|| genesis(&event.stream));
            if event.prev_hash != expected_prev {
                return Ok(broken(
                    &event.stream,
                    event.stream_seq,
                    "does not follow the previous event (deleted or reordered events)",
                ));
            }
            if event_hash(&event) != event.hash {
                return Ok(broken(
                    &event.stream,
                    event.stream_seq,
                    "content does not match its hash (edited event)",
                ));
            }
            chain.push(event.hash);
        }
    }
    for (stream, chain) in &chains {
        let Some(head) = heads.get(stream) else {
            return Ok(broken(stream, 0, "the stream's head record is missing"));
        };
        let length = i64::try_from(chain.len()).unwrap_or(i64::MAX);
        if head.length != length || chain.last() != Some(&head.head_hash) {
            return Ok(broken(
                stream,
                length + 1,
                format!(
                    "the head records {} events but {length} remain (events at the end were deleted)",
                    head.length
                ),
            ));
        }
    }
    if let Some(stream) = heads.keys().find(|s| !chains.contains_key(*s)) {
        return Ok(broken(stream, 1, "every event of the stream was deleted"));
    }
    let mut checkpoints = 0u64;
    let mut prev = checkpoint_genesis();
    for checkpoint in journal_checkpoint::Entity::find()
        .order_by_asc(journal_checkpoint::Column::Id)
        .all(db)
        .await?
    {
        checkpoints += 1;
        let label = format!("checkpoint {}", checkpoint.id);
        if checkpoint.prev_hash != prev || checkpoint_hash(&checkpoint) != checkpoint.hash {
            return Ok(broken(&label, 0, "the checkpoint chain was altered"));
        }
        let recorded: Vec<(String, i64, String)> = serde_json::from_str(&checkpoint.streams)
            .map_err(|e| StorageError::Corrupt(e.to_string()))?;
        for (stream, length, head) in recorded {
            let found = usize::try_from(length - 1)
                .ok()
                .and_then(|i| chains.get(&stream).and_then(|c| c.get(i)));
            if found != Some(&head) {
                return Ok(broken(
                    &stream,
                    length,
                    format!(
                        "{label} recorded this event, which is gone or changed (a whole stream or its tail was deleted)"
                    ),
                ));
            }
        }
        prev = checkpoint.hash;
    }
    Ok(ChainReport::Intact {
        events,
        streams: u64::try_from(chains.len()).unwrap_or_default(),
        checkpoints,
    })
}
