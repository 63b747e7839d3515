//! Work that runs outside a request, as rows: the runner's queue, leases,
//! retries, dead letters and schedules, and the alerts a person must see.
//!
//! An item is written in the same transaction as the state change that
//! calls for it, so it exists exactly when that change does. A worker claims
//! due items of its lane with a lease (on PostgreSQL `FOR UPDATE SKIP
//! LOCKED`, so replicas never take the same row; on SQLite the one writer
//! makes the claim atomic), renews the lease while it works, and finishes
//! the item only while it still holds it: a worker that lost its lease to
//! another cannot overwrite the other's result.

pub mod alerts;
mod entities;
mod summary;

use crate::error::StorageError;
use chrono::{DateTime, Duration, Utc};
use entities::work_item;
use sea_orm::sea_query::{Expr, LockBehavior, LockType, OnConflict};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
pub use summary::{LaneSummary, lane_summary};

/// Waiting to run (now, after a retry's backoff, or at a schedule's next run).
pub const QUEUED: &str = "queued";
/// Held by a worker under a lease.
pub const RUNNING: &str = "running";
/// Finished.
pub const DONE: &str = "done";
/// Failed too often: a person retries or resolves it.
pub const DEAD: &str = "dead";
/// Withdrawn by a person before it ran.
pub const CANCELLED: &str = "cancelled";
/// Settled by a person after it died.
pub const RESOLVED: &str = "resolved";

/// An item to write.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWork {
    pub kind: String,
    pub lane: String,
    pub subject: Option<String>,
    pub payload: serde_json::Value,
    pub run_after: DateTime<Utc>,
    pub max_attempts: u32,
    /// A schedule: after each run it is queued again this much later.
    pub every: Option<Duration>,
    /// At most one unfinished item per key: writing a second is a no-op.
    pub dedupe_key: Option<String>,
}

/// An item as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkItem {
    pub id: String,
    pub kind: String,
    pub lane: String,
    pub subject: Option<String>,
    pub payload: serde_json::Value,
    pub state: String,
    /// Claims so far, this one included while running.
    pub attempts: u32,
    pub max_attempts: u32,
    pub run_after: DateTime<Utc>,
    pub every: Option<Duration>,
    pub lease_owner: Option<String>,
    pub lease_until: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub last_note: Option<String>,
    pub last_run_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

impl WorkItem {
    /// A schedule rather than a one-off item.
    #[must_use]
    pub fn is_schedule(&self) -> bool {
        self.every.is_some()
    }
}

/// How a claimed item ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// Done; a schedule is queued again for `next_run`.
    Done {
        id: String,
        note: Option<String>,
        next_run: Option<DateTime<Utc>>,
    },
    /// Failed for now: queued again at `at`.
    Retry {
        id: String,
        error: String,
        at: DateTime<Utc>,
    },
    /// Failed for good: dead-lettered for a person.
    Dead { id: String, error: String },
}

impl Finish {
    #[must_use]
    pub fn id(&self) -> &str {
        match self {
            Finish::Done { id, .. } | Finish::Retry { id, .. } | Finish::Dead { id, .. } => id,
        }
    }
}

/// Writes items in the caller's transaction. An item whose dedupe key is
/// already held by an unfinished item is skipped. Returns how many were
/// written.
///
/// # Errors
/// Database failures.
pub async fn enqueue(
    db: &impl ConnectionTrait,
    items: &[NewWork],
    now: DateTime<Utc>,
) -> Result<u64, StorageError> {
    if items.is_empty() {
        return Ok(0);
    }
    let rows = items
        .iter()
        .map(|item| row(crate::ids::new_id("wrk"), item, None, now))
        .collect();
    insert_new(db, rows).await
}

/// Writes items already claimed by `owner` until `lease_until` (the
/// writer's own process runs them at once, with no claim transaction of
/// their own; if it dies first, they are taken over when the lease runs
/// out, or taken back when the worker starts again). Items whose dedupe
/// key is held by an unfinished item are skipped. Returns the items
/// written, as stored.
///
/// # Errors
/// Database failures.
pub async fn enqueue_claimed(
    db: &impl ConnectionTrait,
    items: &[NewWork],
    owner: &str,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<WorkItem>, StorageError> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = items.iter().map(|_| crate::ids::new_id("wrk")).collect();
    let rows = ids
        .iter()
        .zip(items)
        .map(|(id, item)| row(id.clone(), item, Some((owner, lease_until)), now))
        .collect();
    insert_new(db, rows).await?;
    let written = work_item::Entity::find()
        .filter(work_item::Column::Id.is_in(ids))
        .all(db)
        .await?;
    written.into_iter().map(decode).collect()
}

/// A new item's row, queued or claimed by (owner, lease end).
fn row(
    id: String,
    item: &NewWork,
    claimed: Option<(&str, DateTime<Utc>)>,
    now: DateTime<Utc>,
) -> work_item::ActiveModel {
    work_item::ActiveModel {
        id: Set(id),
        kind: Set(item.kind.clone()),
        lane: Set(item.lane.clone()),
        subject: Set(item.subject.clone()),
        payload: Set(item.payload.to_string()),
        state: Set(if claimed.is_some() { RUNNING } else { QUEUED }.to_owned()),
        attempts: Set(i32::from(claimed.is_some())),
        max_attempts: Set(i32::try_from(item.max_attempts).unwrap_or(i32::MAX)),
        run_after: Set(item.run_after),
        every_seconds: Set(item.every.map(|every| every.num_seconds().max(1))),
        lease_owner: Set(claimed.map(|(owner, _)| owner.to_owned())),
        lease_until: Set(claimed.map(|(_, until)| until)),
        last_error: Set(None),
        last_note: Set(None),
        last_run_at: Set(None),
        dedupe_key: Set(item.dedupe_key.clone()),
        created_at: Set(now),
        updated_at: Set(now),
        finished_at: Set(None),
    }
}

/// Inserts rows, skipping those whose dedupe key an unfinished item holds.
async fn insert_new(
    db: &impl ConnectionTrait,
    rows: Vec<work_item::ActiveModel>,
) -> Result<u64, StorageError> {
    let written = work_item::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::column(work_item::Column::DedupeKey)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(written)
}

/// Sets a schedule's period (it runs first at `first_run`), keeping its
/// state and history when it already exists.
///
/// # Errors
/// Database failures.
pub async fn ensure_schedule(
    db: &impl ConnectionTrait,
    schedule: &NewWork,
    now: DateTime<Utc>,
) -> Result<(), StorageError> {
    let Some(key) = &schedule.dedupe_key else {
        return Err(StorageError::Corrupt(
            "a schedule needs a dedupe key".to_owned(),
        ));
    };
    if enqueue(db, std::slice::from_ref(schedule), now).await? == 0 {
        work_item::Entity::update_many()
            .col_expr(
                work_item::Column::EverySeconds,
                Expr::value(schedule.every.map(|every| every.num_seconds().max(1))),
            )
            .col_expr(work_item::Column::Lane, Expr::value(schedule.lane.clone()))
            .filter(work_item::Column::DedupeKey.eq(key.clone()))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// Whether the lane has anything a worker could claim now (a read, so an
/// idle runner polls without writing).
///
/// # Errors
/// Database failures.
pub async fn has_due(
    db: &impl ConnectionTrait,
    lane: &str,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    for due in [queued_due(now), lease_expired(now)] {
        let found: Option<String> = work_item::Entity::find()
            .select_only()
            .column(work_item::Column::Id)
            .filter(work_item::Column::Lane.eq(lane))
            .filter(due)
            .limit(1)
            .into_tuple()
            .one(db)
            .await?;
        if found.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The kinds of the lane with something claimable now, each with whether
/// it is a schedule (a read: the runner asks a schedule's handler whether
/// it has work before it writes a claim).
///
/// # Errors
/// Database failures.
pub async fn due_kinds(
    db: &impl ConnectionTrait,
    lane: &str,
    now: DateTime<Utc>,
) -> Result<Vec<(String, bool)>, StorageError> {
    let rows: Vec<(String, Option<i64>)> = work_item::Entity::find()
        .select_only()
        .column(work_item::Column::Kind)
        .column(work_item::Column::EverySeconds)
        .filter(work_item::Column::Lane.eq(lane))
        .filter(claimable(now))
        .distinct()
        .limit(256)
        .into_tuple()
        .all(db)
        .await?;
    let mut kinds: Vec<(String, bool)> = Vec::new();
    for (kind, every) in rows {
        match kinds.iter_mut().find(|(known, _)| *known == kind) {
            // A kind with one-off items due as well as its schedule runs.
            Some(entry) => entry.1 &= every.is_some(),
            None => kinds.push((kind, every.is_some())),
        }
    }
    Ok(kinds)
}

/// The earliest time something of the lane falls due, if anything waits.
///
/// # Errors
/// Database failures.
pub async fn next_due(
    db: &impl ConnectionTrait,
    lane: &str,
) -> Result<Option<DateTime<Utc>>, StorageError> {
    let queued: Option<DateTime<Utc>> = work_item::Entity::find()
        .select_only()
        .column(work_item::Column::RunAfter)
        .filter(work_item::Column::Lane.eq(lane))
        .filter(work_item::Column::State.eq(QUEUED))
        .order_by_asc(work_item::Column::RunAfter)
        .limit(1)
        .into_tuple()
        .one(db)
        .await?;
    let lease: Option<Option<DateTime<Utc>>> = work_item::Entity::find()
        .select_only()
        .column(work_item::Column::LeaseUntil)
        .filter(work_item::Column::Lane.eq(lane))
        .filter(work_item::Column::State.eq(RUNNING))
        .order_by_asc(work_item::Column::LeaseUntil)
        .limit(1)
        .into_tuple()
        .one(db)
        .await?;
    Ok(match (queued, lease.flatten()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

/// Due now: queued and past its time, or running under a lease that ran
/// out (its worker died or stalled).
fn claimable(now: DateTime<Utc>) -> Condition {
    Condition::any()
        .add(queued_due(now))
        .add(lease_expired(now))
}

/// Queued and past its time: one range of the (lane, state, run_after)
/// index, already in claiming order.
fn queued_due(now: DateTime<Utc>) -> Condition {
    Condition::all()
        .add(work_item::Column::State.eq(QUEUED))
        .add(work_item::Column::RunAfter.lte(now))
}

/// Running under a lease that ran out.
fn lease_expired(now: DateTime<Utc>) -> Condition {
    Condition::all()
        .add(work_item::Column::State.eq(RUNNING))
        .add(work_item::Column::LeaseUntil.lte(now))
}

/// Claims up to `limit` due items of the lane (of these kinds, or any) for `owner` until
/// `lease_until`, oldest first, counting an attempt on each. Run it in a
/// write transaction: on PostgreSQL the rows are locked with `SKIP LOCKED`
/// so concurrent workers take different items; on SQLite the write lock
/// serialises claims.
///
/// # Errors
/// Database failures.
pub async fn claim(
    db: &impl ConnectionTrait,
    lane: &str,
    kinds: Option<&[String]>,
    owner: &str,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<WorkItem>, StorageError> {
    // Items whose worker died first, then the oldest queued ones; each a
    // range of the (lane, state, run_after) index, so a backlog of ten
    // thousand costs no more to claim from than an empty queue.
    let mut ids: Vec<String> = Vec::new();
    for due in [lease_expired(now), queued_due(now)] {
        let wanted = limit.saturating_sub(ids.len() as u64);
        if wanted == 0 {
            break;
        }
        let mut query = work_item::Entity::find()
            .select_only()
            .column(work_item::Column::Id)
            .filter(work_item::Column::Lane.eq(lane))
            .filter(due)
            .order_by_asc(work_item::Column::RunAfter)
            .limit(wanted);
        if let Some(kinds) = kinds {
            query = query.filter(work_item::Column::Kind.is_in(kinds.to_vec()));
        }
        if db.get_database_backend() == DbBackend::Postgres {
            query = query.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked);
        }
        let found: Vec<String> = query.into_tuple().all(db).await?;
        ids.extend(found);
    }
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    work_item::Entity::update_many()
        .col_expr(work_item::Column::State, Expr::value(RUNNING))
        .col_expr(work_item::Column::LeaseOwner, Expr::value(owner))
        .col_expr(work_item::Column::LeaseUntil, Expr::value(lease_until))
        .col_expr(
            work_item::Column::Attempts,
            Expr::col(work_item::Column::Attempts).add(1),
        )
        .col_expr(work_item::Column::UpdatedAt, Expr::value(now))
        .filter(work_item::Column::Id.is_in(ids.clone()))
        .exec(db)
        .await?;
    let rows = work_item::Entity::find()
        .filter(work_item::Column::Id.is_in(ids))
        .order_by_asc(work_item::Column::RunAfter)
        .all(db)
        .await?;
    rows.into_iter().map(decode).collect()
}

/// Extends the leases `owner` still holds on these items.
///
/// # Errors
/// Database failures.
pub async fn renew(
    db: &impl ConnectionTrait,
    ids: &[String],
    owner: &str,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<u64, StorageError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let result = work_item::Entity::update_many()
        .col_expr(work_item::Column::LeaseUntil, Expr::value(lease_until))
        .col_expr(work_item::Column::UpdatedAt, Expr::value(now))
        .filter(work_item::Column::Id.is_in(ids.to_vec()))
        .filter(work_item::Column::LeaseOwner.eq(owner))
        .filter(work_item::Column::State.eq(RUNNING))
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}

/// Records how claimed items ended, each only while `owner` still holds it.
/// Returns the ids whose lease had passed to another worker (their result
/// is dropped: the other worker's counts). Items that ended alike (a batch
/// of sends all done) are written by one statement.
///
/// # Errors
/// Database failures.
pub async fn finish(
    db: &impl ConnectionTrait,
    outcomes: &[Finish],
    owner: &str,
    now: DateTime<Utc>,
) -> Result<Vec<String>, StorageError> {
    if outcomes.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = outcomes.iter().map(|o| o.id().to_owned()).collect();
    let mut query = work_item::Entity::find()
        .select_only()
        .column(work_item::Column::Id)
        .filter(work_item::Column::Id.is_in(ids))
        .filter(work_item::Column::LeaseOwner.eq(owner))
        .filter(work_item::Column::State.eq(RUNNING));
    if db.get_database_backend() == DbBackend::Postgres {
        // Held until commit: no other worker takes them over meanwhile.
        query = query.lock(LockType::Update);
    }
    let held: std::collections::HashSet<String> =
        query.into_tuple().all(db).await?.into_iter().collect();
    let mut alike: Vec<(Ending, Vec<String>)> = Vec::new();
    let mut lost = Vec::new();
    for outcome in outcomes {
        if !held.contains(outcome.id()) {
            lost.push(outcome.id().to_owned());
            continue;
        }
        let ending = Ending::of(outcome);
        match alike.iter_mut().find(|(known, _)| *known == ending) {
            Some((_, ids)) => ids.push(outcome.id().to_owned()),
            None => alike.push((ending, vec![outcome.id().to_owned()])),
        }
    }
    for (ending, ids) in alike {
        ending
            .update(now)
            .filter(work_item::Column::Id.is_in(ids))
            .filter(work_item::Column::LeaseOwner.eq(owner))
            .filter(work_item::Column::State.eq(RUNNING))
            .exec(db)
            .await?;
    }
    Ok(lost)
}

/// What an item's end writes, without its id.
#[derive(Debug, PartialEq, Eq)]
enum Ending<'a> {
    Done {
        note: Option<&'a str>,
        next_run: Option<DateTime<Utc>>,
    },
    Retry {
        error: &'a str,
        at: DateTime<Utc>,
    },
    Dead {
        error: &'a str,
    },
}

impl<'a> Ending<'a> {
    fn of(outcome: &'a Finish) -> Self {
        match outcome {
            Finish::Done { note, next_run, .. } => Ending::Done {
                note: note.as_deref(),
                next_run: *next_run,
            },
            Finish::Retry { error, at, .. } => Ending::Retry { error, at: *at },
            Finish::Dead { error, .. } => Ending::Dead { error },
        }
    }

    fn update(&self, now: DateTime<Utc>) -> sea_orm::UpdateMany<work_item::Entity> {
        let update = work_item::Entity::update_many()
            .col_expr(work_item::Column::LeaseOwner, Expr::value(None::<String>))
            .col_expr(
                work_item::Column::LeaseUntil,
                Expr::value(None::<DateTime<Utc>>),
            )
            .col_expr(work_item::Column::UpdatedAt, Expr::value(now))
            .col_expr(work_item::Column::LastRunAt, Expr::value(now));
        match *self {
            Ending::Done {
                note,
                next_run: Some(next),
            } => update
                .col_expr(work_item::Column::State, Expr::value(QUEUED))
                .col_expr(work_item::Column::RunAfter, Expr::value(next))
                .col_expr(work_item::Column::Attempts, Expr::value(0))
                .col_expr(work_item::Column::LastNote, Expr::value(note))
                .col_expr(work_item::Column::LastError, Expr::value(None::<String>)),
            Ending::Done {
                note,
                next_run: None,
            } => update
                .col_expr(work_item::Column::State, Expr::value(DONE))
                .col_expr(work_item::Column::LastNote, Expr::value(note))
                .col_expr(work_item::Column::FinishedAt, Expr::value(now))
                // The key is free again: the same work may be asked for anew.
                .col_expr(work_item::Column::DedupeKey, Expr::value(None::<String>)),
            Ending::Retry { error, at } => update
                .col_expr(work_item::Column::State, Expr::value(QUEUED))
                .col_expr(work_item::Column::RunAfter, Expr::value(at))
                .col_expr(work_item::Column::LastError, Expr::value(error)),
            // A dead item keeps its key: the same work is not asked for
            // again until a person settles this one.
            Ending::Dead { error } => update
                .col_expr(work_item::Column::State, Expr::value(DEAD))
                .col_expr(work_item::Column::LastError, Expr::value(error))
                .col_expr(work_item::Column::FinishedAt, Expr::value(now)),
        }
    }
}

/// Hands items `owner` holds back to the queue without counting the attempt
/// (a graceful shutdown that did not finish them). `None`: all it holds.
///
/// # Errors
/// Database failures.
pub async fn release(
    db: &impl ConnectionTrait,
    owner: &str,
    ids: Option<&[String]>,
    now: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let mut update = work_item::Entity::update_many()
        .col_expr(work_item::Column::State, Expr::value(QUEUED))
        .col_expr(work_item::Column::LeaseOwner, Expr::value(None::<String>))
        .col_expr(
            work_item::Column::LeaseUntil,
            Expr::value(None::<DateTime<Utc>>),
        )
        .col_expr(
            work_item::Column::Attempts,
            Expr::col(work_item::Column::Attempts).sub(1),
        )
        .col_expr(work_item::Column::RunAfter, Expr::value(now))
        .col_expr(work_item::Column::UpdatedAt, Expr::value(now))
        .filter(work_item::Column::LeaseOwner.eq(owner))
        .filter(work_item::Column::State.eq(RUNNING))
        .filter(work_item::Column::Attempts.gt(0));
    if let Some(ids) = ids {
        update = update.filter(work_item::Column::Id.is_in(ids.to_vec()));
    }
    Ok(update.exec(db).await?.rows_affected)
}

/// Makes items still leased to `owner` claimable at once. A process calls
/// it as it starts under the name it had before a crash: those leases are
/// its own previous life's, and nobody else will finish that work. The
/// attempt is kept, so work that kills the process each time ends up
/// dead-lettered instead of looping.
///
/// # Errors
/// Database failures.
pub async fn take_back(
    db: &impl ConnectionTrait,
    owner: &str,
    now: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let result = work_item::Entity::update_many()
        .col_expr(work_item::Column::LeaseUntil, Expr::value(now))
        .filter(work_item::Column::LeaseOwner.eq(owner))
        .filter(work_item::Column::State.eq(RUNNING))
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}

/// A person's action on one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intervention {
    /// Dead → queued, attempts from zero.
    Retry,
    /// Queued (not yet run) or dead → cancelled.
    Cancel,
    /// Dead → resolved (settled by hand).
    Resolve,
}

/// Applies a person's action if the item is in a state that allows it;
/// returns the item afterwards, or None when it was not allowed (or the
/// item does not exist).
///
/// # Errors
/// Database failures.
pub async fn intervene(
    db: &impl ConnectionTrait,
    id: &str,
    action: Intervention,
    note: &str,
    now: DateTime<Utc>,
) -> Result<Option<WorkItem>, StorageError> {
    let update = work_item::Entity::update_many()
        .col_expr(work_item::Column::UpdatedAt, Expr::value(now))
        .col_expr(work_item::Column::LastNote, Expr::value(note.to_owned()))
        .filter(work_item::Column::Id.eq(id));
    let update = match action {
        Intervention::Retry => update
            .col_expr(work_item::Column::State, Expr::value(QUEUED))
            .col_expr(work_item::Column::Attempts, Expr::value(0))
            .col_expr(work_item::Column::RunAfter, Expr::value(now))
            .col_expr(
                work_item::Column::FinishedAt,
                Expr::value(None::<DateTime<Utc>>),
            )
            .filter(work_item::Column::State.eq(DEAD)),
        Intervention::Cancel => update
            .col_expr(work_item::Column::State, Expr::value(CANCELLED))
            .col_expr(work_item::Column::FinishedAt, Expr::value(now))
            .col_expr(work_item::Column::DedupeKey, Expr::value(None::<String>))
            .filter(work_item::Column::State.is_in([QUEUED, DEAD]))
            .filter(work_item::Column::EverySeconds.is_null()),
        Intervention::Resolve => update
            .col_expr(work_item::Column::State, Expr::value(RESOLVED))
            .col_expr(work_item::Column::FinishedAt, Expr::value(now))
            .col_expr(work_item::Column::DedupeKey, Expr::value(None::<String>))
            .filter(work_item::Column::State.eq(DEAD)),
    };
    if update.exec(db).await?.rows_affected == 0 {
        return Ok(None);
    }
    get(db, id).await
}

/// One item.
///
/// # Errors
/// Database failures.
pub async fn get(db: &impl ConnectionTrait, id: &str) -> Result<Option<WorkItem>, StorageError> {
    work_item::Entity::find_by_id(id.to_owned())
        .one(db)
        .await?
        .map(decode)
        .transpose()
}

/// What to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkFilter {
    pub lane: Option<String>,
    pub states: Vec<String>,
    pub kind: Option<String>,
    pub subject: Option<String>,
}

/// Items matching the filter, most recently changed first.
///
/// # Errors
/// Database failures.
pub async fn list(
    db: &impl ConnectionTrait,
    filter: &WorkFilter,
    limit: u64,
) -> Result<Vec<WorkItem>, StorageError> {
    let mut query = work_item::Entity::find();
    if let Some(lane) = &filter.lane {
        query = query.filter(work_item::Column::Lane.eq(lane.clone()));
    }
    if !filter.states.is_empty() {
        query = query.filter(work_item::Column::State.is_in(filter.states.clone()));
    }
    if let Some(kind) = &filter.kind {
        query = query.filter(work_item::Column::Kind.eq(kind.clone()));
    }
    if let Some(subject) = &filter.subject {
        query = query.filter(work_item::Column::Subject.eq(subject.clone()));
    }
    query
        .order_by_desc(work_item::Column::UpdatedAt)
        .order_by_desc(work_item::Column::Id)
        .limit(limit)
        .all(db)
        .await?
        .into_iter()
        .map(decode)
        .collect()
}

/// Deletes items finished before `before` (their history is in the
/// journal and the logs). Returns how many.
///
/// # Errors
/// Database failures.
pub async fn prune_finished(
    db: &impl ConnectionTrait,
    before: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let result = work_item::Entity::delete_many()
        .filter(work_item::Column::State.is_in([DONE, CANCELLED, RESOLVED]))
        .filter(work_item::Column::FinishedAt.lt(before))
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}

fn decode(row: work_item::Model) -> Result<WorkItem, StorageError> {
    let payload = serde_json::from_str(&row.payload)
        .map_err(|e| StorageError::Corrupt(format!("work item {}: {e}", row.id)))?;
    Ok(WorkItem {
        payload,
        attempts: u32::try_from(row.attempts).unwrap_or(0),
        max_attempts: u32::try_from(row.max_attempts).unwrap_or(0),
        every: row.every_seconds.map(Duration::seconds),
        id: row.id,
        kind: row.kind,
        lane: row.lane,
        subject: row.subject,
        state: row.state,
        run_after: row.run_after,
        lease_owner: row.lease_owner,
        lease_until: row.lease_until,
        last_error: row.last_error,
        last_note: row.last_note,
        last_run_at: row.last_run_at,
        created_at: row.created_at,
        updated_at: row.updated_at,
        finished_at: row.finished_at,
    })
}
