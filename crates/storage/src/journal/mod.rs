//! The journal: every state change appends an event in the same transaction
//! as the change.
//!
//! Events are hash-chained per stream (one stream per proposal): each event's
//! hash covers its content and the previous event of its stream, and the
//! stream's head (length and last hash) is stored beside it. Streams move
//! independently, so concurrent refunds never queue on one global lock.
//! Periodic checkpoints chain the heads of all changed streams together, so
//! deleting a whole stream is detected too. `verify` re-computes everything.

mod append;
mod checkpoint;
mod verify;

pub use append::{NewEvent, append, append_to_stream};
pub use checkpoint::{checkpoint, has_changes};
pub use verify::{ChainReport, verify_chain};

use crate::entities::journal_event;
use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde::Serialize;

pub use journal_event::Model as JournalEvent;

/// The stream of events not tied to a proposal.
pub const SYSTEM_STREAM: &str = "system";

/// The stream of settings changes (limits, thresholds, accounts, roles,
/// policies, widget sites): who may move money is audited in one chain.
pub const SETTINGS_STREAM: &str = "settings";

/// The stream of what people did to background work (retry, cancel,
/// resolve a dead letter; acknowledge an alert) and what the runner found
/// (a broken journal).
pub const OPS_STREAM: &str = "ops";

/// The stream of an order's own events (fed by its shop, refunds recorded
/// from other channels), beside its proposals' streams.
/// Tasks from other agent groups that this group refused, with the reason.
pub const GATEWAY_STREAM: &str = "gateway";

/// The stream of one task another group sent here (its inbox id).
pub fn task_stream(task_id: &str) -> String {
    format!("task:{task_id}")
}

pub fn order_stream(order_id: &str) -> String {
    format!("order:{order_id}")
}

/// Where every stream's chain starts.
pub fn genesis(stream: &str) -> String {
    domain::digest::sha256_hex(format!("countersign-journal:{stream}").as_bytes())
}

/// What an event's hash covers, in a fixed field order.
#[derive(Serialize)]
struct Hashed<'a> {
    stream: &'a str,
    stream_seq: i64,
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

pub(crate) fn event_hash(event: &JournalEvent) -> String {
    domain::digest::sha256_json(&Hashed {
        stream: &event.stream,
        stream_seq: event.stream_seq,
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
        .filter(journal_event::Column::Stream.eq(proposal_id))
        .filter(journal_event::Column::Kind.eq(kind))
        .order_by_asc(journal_event::Column::Seq)
        .one(db)
        .await?
        .map(|event| event.at))
}

/// Filters for reading the journal (audit page, API).
#[derive(Debug, Clone, Default)]
pub struct JournalFilter {
    pub proposal_id: Option<String>,
    /// Events of one stream, e.g. [`SETTINGS_STREAM`].
    pub stream: Option<String>,
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
    let per_page = crate::error::bindable(per_page.max(1), "per_page")?;
    // The page's first row must be bindable as an offset.
    page.checked_mul(per_page)
        .filter(|offset| *offset <= crate::error::MAX_BINDABLE)
        .ok_or_else(|| {
            StorageError::OutOfRange(format!(
                "page must be at most {}",
                crate::error::MAX_BINDABLE / per_page
            ))
        })?;
    let pages = filtered(filter)
        .order_by_asc(journal_event::Column::Seq)
        .paginate(db, per_page);
    let total = pages.num_items().await?;
    let events = pages.fetch_page(page).await?;
    Ok((events, total))
}

/// Up to `limit` events after `after_seq`, oldest first: for reading the
/// whole filtered journal in chunks (an export) without counting or
/// skipping rows each time.
///
/// # Errors
/// Database failures.
pub async fn list_after(
    db: &impl ConnectionTrait,
    filter: &JournalFilter,
    after_seq: i64,
    limit: u64,
) -> Result<Vec<JournalEvent>, StorageError> {
    Ok(filtered(filter)
        .filter(journal_event::Column::Seq.gt(after_seq))
        .order_by_asc(journal_event::Column::Seq)
        .limit(crate::error::bindable(limit, "limit")?)
        .all(db)
        .await?)
}

fn filtered(filter: &JournalFilter) -> sea_orm::Select<journal_event::Entity> {
    let mut query = journal_event::Entity::find();
    if let Some(v) = &filter.proposal_id {
        // A proposal's events are its stream (served by the stream index).
        query = query.filter(journal_event::Column::Stream.eq(v.clone()));
    }
    if let Some(v) = &filter.stream {
        query = query.filter(journal_event::Column::Stream.eq(v.clone()));
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
    query
}
