//! The journal: every state change appends an event in the same transaction
//! as the change. Events form one hash chain: each event's hash covers its
//! content and the previous event's hash, so editing, deleting or reordering
//! any stored event breaks verification.

use crate::entities::{journal_event, journal_head};
use crate::error::StorageError;
use chrono::{DateTime, SubsecRound, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde::Serialize;

pub use journal_event::Model as JournalEvent;

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

/// What the hash covers, in a fixed field order.
#[derive(Serialize)]
struct Hashed<'a> {
    seq: i64,
    proposal_id: Option<&'a str>,
    order_id: Option<&'a str>,
    actor: &'a str,
    kind: &'a str,
    from_status: Option<&'a str>,
    to_status: Option<&'a str>,
    payload: &'a str,
    at_micros: i64,
    prev_hash: &'a str,
}

fn event_hash(event: &JournalEvent) -> String {
    domain::digest::sha256_json(&Hashed {
        seq: event.seq,
        proposal_id: event.proposal_id.as_deref(),
        order_id: event.order_id.as_deref(),
        actor: &event.actor,
        kind: &event.kind,
        from_status: event.from_status.as_deref(),
        to_status: event.to_status.as_deref(),
        payload: &event.payload,
        at_micros: event.at.timestamp_micros(),
        prev_hash: &event.prev_hash,
    })
}

/// Appends events in order. Call it last in the transaction: on PostgreSQL it
/// locks the chain head until commit, so the lock is held briefly.
///
/// # Errors
/// Database failures; the caller's transaction then rolls back as a whole.
pub async fn append(
    db: &impl ConnectionTrait,
    events: Vec<NewEvent>,
) -> Result<Vec<JournalEvent>, StorageError> {
    if events.is_empty() {
        return Ok(vec![]);
    }
    let mut head_query = journal_head::Entity::find_by_id(1);
    if db.get_database_backend() == DbBackend::Postgres {
        head_query = head_query.lock_exclusive();
    }
    let head = head_query.one(db).await?.ok_or(StorageError::Corrupt(
        "journal head row is missing".to_owned(),
    ))?;
    let (mut seq, mut prev_hash) = (head.seq, head.hash);
    let mut written = Vec::with_capacity(events.len());
    for event in events {
        seq += 1;
        let mut model = JournalEvent {
            seq,
            proposal_id: event.proposal_id,
            order_id: event.order_id,
            actor: event.actor,
            kind: event.kind,
            from_status: event.from_status,
            to_status: event.to_status,
            payload: event.payload.to_string(),
            // Stored precision is microseconds on both backends.
            at: event.at.trunc_subsecs(6),
            prev_hash: prev_hash.clone(),
            hash: String::new(),
        };
        model.hash = event_hash(&model);
        prev_hash = model.hash.clone();
        journal_event::ActiveModel::from(model.clone())
            .insert(db)
            .await?;
        written.push(model);
    }
    journal_head::ActiveModel {
        id: Set(1),
        seq: Set(seq),
        hash: Set(prev_hash),
    }
    .update(db)
    .await?;
    Ok(written)
}

/// The time of the first event of `kind` for a proposal (e.g. when a refund
/// request was first sent).
///
/// # Errors
/// Database failures.
pub async fn first_event_at(
    db: &impl ConnectionTrait,
    proposal_id: &str,
    kind: &str,
) -> Result<Option<DateTime<Utc>>, StorageError> {
    Ok(journal_event::Entity::find()
        .filter(journal_event::Column::ProposalId.eq(proposal_id))
        .filter(journal_event::Column::Kind.eq(kind))
        .order_by_asc(journal_event::Column::Seq)
        .one(db)
        .await?
        .map(|event| event.at))
}

/// The result of checking the whole chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum ChainReport {
    Intact { events: u64, head: String },
    Broken { at_seq: i64, problem: String },
}

/// Re-computes every hash from the first event to the head.
///
/// # Errors
/// Database failures.
pub async fn verify_chain(db: &impl ConnectionTrait) -> Result<ChainReport, StorageError> {
    let head = journal_head::Entity::find_by_id(1)
        .one(db)
        .await?
        .ok_or(StorageError::Corrupt("journal head row is missing".into()))?;
    let mut expected_prev = migrations::GENESIS_HASH.to_owned();
    let mut expected_seq = 0i64;
    let mut pages = journal_event::Entity::find()
        .order_by_asc(journal_event::Column::Seq)
        .paginate(db, 1000);
    while let Some(batch) = pages.fetch_and_next().await? {
        for event in batch {
            expected_seq += 1;
            if event.seq != expected_seq {
                return Ok(broken(
                    event.seq,
                    format!("expected event {expected_seq}: events are missing or reordered"),
                ));
            }
            if event.prev_hash != expected_prev {
                return Ok(broken(
                    event.seq,
                    "does not follow the previous event (deleted or reordered events)".into(),
                ));
            }
            if event_hash(&event) != event.hash {
                return Ok(broken(
                    event.seq,
                    "content does not match its hash (edited event)".into(),
                ));
            }
            expected_prev = event.hash;
        }
    }
    if expected_seq != head.seq || expected_prev != head.hash {
        return Ok(broken(
            expected_seq + 1,
            format!(
                "the chain ends at event {expected_seq} but the head records event {} (events at the end were deleted)",
                head.seq
            ),
        ));
    }
    Ok(ChainReport::Intact {
        events: u64::try_from(expected_seq).unwrap_or_default(),
        head: head.hash,
    })
}

fn broken(at_seq: i64, problem: String) -> ChainReport {
    ChainReport::Broken { at_seq, problem }
}

/// Filters for reading the journal (audit page, API).
#[derive(Debug, Clone, Default)]
pub struct JournalFilter {
    pub proposal_id: Option<String>,
    pub order_id: Option<String>,
    pub actor: Option<String>,
    pub kind: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

/// One page of events, oldest first, and the total matching.
///
/// # Errors
/// Database failures.
pub async fn list(
    db: &impl ConnectionTrait,
    filter: &JournalFilter,
    page: u64,
    per_page: u64,
) -> Result<(Vec<JournalEvent>, u64), StorageError> {
    let mut query = journal_event::Entity::find();
    if let Some(v) = &filter.proposal_id {
        query = query.filter(journal_event::Column::ProposalId.eq(v.clone()));
    }
    if let Some(v) = &filter.order_id {
        query = query.filter(journal_event::Column::OrderId.eq(v.clone()));
    }
    if let Some(v) = &filter.actor {
        query = query.filter(journal_event::Column::Actor.eq(v.clone()));
    }
    if let Some(v) = &filter.kind {
        query = query.filter(journal_event::Column::Kind.eq(v.clone()));
    }
    if let Some(v) = filter.from {
        query = query.filter(journal_event::Column::At.gte(v));
    }
    if let Some(v) = filter.until {
        query = query.filter(journal_event::Column::At.lt(v));
    }
    let pages = query
        .order_by_asc(journal_event::Column::Seq)
        .paginate(db, per_page.max(1));
    let total = pages.num_items().await?;
    let events = pages.fetch_page(page).await?;
    Ok((events, total))
}
