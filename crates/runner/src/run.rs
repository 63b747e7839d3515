//! The runner: one loop per lane claiming due items, a task per item under
//! the lane's concurrency, lease renewal while handlers work, and at
//! shutdown a drain, then the release of whatever is still held.

use crate::Clock;
use crate::activity::Activity;
use crate::batch::{Combiner, Request, answer_each};
use crate::lane::LaneSpec;
use crate::supervisor::Supervisor;
use crate::wake::{Taker, Wake};
use chrono::{DateTime, Utc};
use futures::FutureExt;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storage::work::{Finish, NewWork, WorkItem};
use storage::{Database, StorageError};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, broadcast};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// A claimed item handed to its handler.
#[derive(Debug, Clone)]
pub struct Job {
    pub item: WorkItem,
    /// Fires when shutdown gives up waiting: stop at the next safe point
    /// and return [`JobError::Retry`] (the item is handed back).
    pub cancel: CancellationToken,
    /// Written already claimed by this process and handed over right after
    /// its commit ([`Wake::hand_over`]), rather than claimed from the
    /// table: what the writer committed with it is what it found, unless
    /// something moved it since.
    pub handed: bool,
}

/// Why a handler did not finish its item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobError {
    /// Try again after the lane's backoff (dead-lettered after the last
    /// attempt).
    Retry(String),
    /// Retrying cannot help: dead-letter it now for a person.
    Dead(String),
}

/// Does one kind of work. Handlers must be idempotent: an item whose
/// worker died after the handler's own commit but before the item was
/// marked done runs again.
#[async_trait::async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Returns a note for people (e.g. "journal intact: 912 events").
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError>;

    /// For a schedule: whether a run now would find anything to do, by
    /// reading only. A due schedule with nothing to do is left unclaimed
    /// (claiming and finishing it are two writes), so an idle system
    /// writes nothing on its schedules' account. One-off items always run.
    async fn pending(&self) -> Result<bool, JobError> {
        Ok(true)
    }
}

/// An item's run ended and was recorded (for live views and tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub id: String,
    pub kind: String,
    pub lane: String,
    /// `done`, `queued` (a retry or a schedule's next run) or `dead`.
    pub state: String,
    pub error: Option<String>,
}

/// A kind that runs on a timer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub kind: String,
    pub lane: String,
    pub every: chrono::Duration,
    /// First run this long after the schedule is created.
    pub first_in: chrono::Duration,
}

impl Schedule {
    /// The schedule's row: one per kind, across replicas.
    #[must_use]
    pub fn row(&self, now: DateTime<Utc>) -> NewWork {
        NewWork {
            kind: self.kind.clone(),
            lane: self.lane.clone(),
            subject: None,
            payload: serde_json::json!({}),
            run_after: now + self.first_in,
            max_attempts: 3,
            every: Some(self.every),
            dedupe_key: Some(format!("schedule:{}", self.kind)),
        }
    }
}

pub struct RunnerBuilder {
    db: Database,
    clock: Clock,
    owner: String,
    wake: Wake,
    activity: Activity,
    supervisor: Supervisor,
    lanes: Vec<LaneSpec>,
    handlers: HashMap<String, Arc<dyn Handler>>,
    schedules: Vec<Schedule>,
    drain: Duration,
}

impl RunnerBuilder {
    #[must_use]
    pub fn lane(mut self, spec: LaneSpec) -> Self {
        self.lanes.push(spec);
        self
    }

    #[must_use]
    pub fn handle(mut self, kind: &str, handler: impl Handler) -> Self {
        self.handlers.insert(kind.to_owned(), Arc::new(handler));
        self
    }

    #[must_use]
    pub fn schedule(mut self, schedule: Schedule) -> Self {
        self.schedules.push(schedule);
        self
    }

    /// How long shutdown waits for running items before it cancels them
    /// and hands them back.
    #[must_use]
    pub fn drain(mut self, drain: Duration) -> Self {
        self.drain = drain;
        self
    }

    #[must_use]
    pub fn build(self) -> Runner {
        // Ends of items are written in batches: with many items running,
        // one transaction records dozens of them.
        let finishes = Combiner::new(64, 1, 64, &self.supervisor);
        Runner {
            inner: Arc::new(Inner {
                db: self.db,
                clock: self.clock,
                owner: self.owner,
                wake: self.wake,
                activity: self.activity,
                supervisor: self.supervisor,
                lanes: self.lanes,
                handlers: self.handlers,
                schedules: self.schedules,
                drain: self.drain,
                held: Mutex::default(),
                released: Notify::new(),
                finishes,
                cancel_jobs: CancellationToken::new(),
                finished: broadcast::channel(1024).0,
            }),
        }
    }
}

/// An item's end waiting to be written: whether this worker still held it.
type FinishRequest = Request<Finish, bool, StorageError>;

/// A set of lanes run by this process under one worker name.
#[derive(Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

struct Inner {
    db: Database,
    clock: Clock,
    owner: String,
    wake: Wake,
    activity: Activity,
    supervisor: Supervisor,
    lanes: Vec<LaneSpec>,
    handlers: HashMap<String, Arc<dyn Handler>>,
    schedules: Vec<Schedule>,
    drain: Duration,
    /// Items this process holds now, with their lane's lease.
    held: Mutex<HashMap<String, Duration>>,
    /// Signalled each time an item stops being held.
    released: Notify,
    finishes: Arc<Combiner<FinishRequest>>,
    cancel_jobs: CancellationToken,
    finished: broadcast::Sender<Finished>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("owner", &self.inner.owner)
            .field("lanes", &self.inner.lanes)
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner working under `owner` (a name that stays the same across
    /// restarts of this worker and differs between replicas).
    #[must_use]
    pub fn builder(
        db: Database,
        clock: Clock,
        owner: &str,
        wake: Wake,
        activity: Activity,
        supervisor: Supervisor,
    ) -> RunnerBuilder {
        RunnerBuilder {
            db,
            clock,
            owner: owner.to_owned(),
            wake,
            activity,
            supervisor,
            lanes: Vec::new(),
            handlers: HashMap::new(),
            schedules: Vec::new(),
            drain: Duration::from_secs(10),
        }
    }

    #[must_use]
    pub fn owner(&self) -> &str {
        &self.inner.owner
    }

    #[must_use]
    pub fn lanes(&self) -> &[LaneSpec] {
        &self.inner.lanes
    }

    #[must_use]
    pub fn schedules(&self) -> &[Schedule] {
        &self.inner.schedules
    }

    /// Every recorded end of a run from now on.
    #[must_use]
    pub fn finished(&self) -> broadcast::Receiver<Finished> {
        self.inner.finished.subscribe()
    }

    /// Items this process holds now.
    #[must_use]
    pub fn holding(&self) -> usize {
        self.held().len()
    }

    /// Takes back what this worker's previous life held, writes the
    /// schedules, and starts the lanes under the supervisor.
    ///
    /// # Errors
    /// The database could not be written.
    pub async fn start(&self) -> Result<(), StorageError> {
        let inner = &self.inner;
        let now = (inner.clock)();
        let tx = inner.db.begin_write().await?;
        let taken = storage::work::take_back(&*tx, &inner.owner, now).await?;
        for schedule in &inner.schedules {
            storage::work::ensure_schedule(&*tx, &schedule.row(now), now).await?;
        }
        tx.commit().await?;
        if taken > 0 {
            tracing::warn!(
                items = taken,
                worker = %inner.owner,
                "taking back work this worker held before it stopped"
            );
        }
        for spec in &inner.lanes {
            inner.wake.door(&spec.name).set_taker(Some(Taker {
                owner: inner.owner.clone(),
                lease: spec.lease,
            }));
            let runner = self.clone();
            let spec = spec.clone();
            // Everything a lane does is background work: its writes give
            // way to those a person waits on.
            inner.supervisor.spawn(
                "work lane",
                storage::write_gate::in_background(runner.lane_loop(spec)),
            );
        }
        let runner = self.clone();
        inner.supervisor.spawn(
            "work leases",
            storage::write_gate::in_background(runner.keep_leases()),
        );
        Ok(())
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Duration>> {
        self.inner
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn lane_loop(self, spec: LaneSpec) {
        let inner = &self.inner;
        let stopping = inner.supervisor.stopping();
        let door = inner.wake.door(&spec.name);
        let slots = Arc::new(Semaphore::new(spec.concurrency));
        // Whether to look in the table for claimable work: at start, when
        // a use case rings (it queued an item), and every poll period
        // (other replicas' items, retries whose backoff ran out). Items
        // handed over already claimed need no look, so a stream of them
        // costs no reads.
        let mut look = true;
        let mut next_poll = tokio::time::Instant::now() + spec.poll_every;
        loop {
            let first = tokio::select! {
                permit = slots.clone().acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => break,
                },
                () = stopping.cancelled() => break,
            };
            // Items already claimed for this process go first: their
            // claim is written, and a person's action called for them.
            if let Some(item) = door.take_handed() {
                self.held().insert(item.id.clone(), spec.lease);
                self.spawn_item(&spec, item, first, true);
                continue;
            }
            if look {
                tokio::select! {
                    _ = inner.activity.quiet_or(spec.priority.longest_deferral()) => {}
                    () = stopping.cancelled() => break,
                }
                let mut permits = vec![first];
                while let Ok(permit) = slots.clone().try_acquire_owned() {
                    permits.push(permit);
                }
                match self.claim(&spec, permits.len()).await {
                    Ok(items) if !items.is_empty() => {
                        for (item, permit) in items.into_iter().zip(permits) {
                            self.spawn_item(&spec, item, permit, false);
                        }
                        continue;
                    }
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(%error, lane = %spec.name, "could not claim work; trying again later");
                    }
                }
                look = false;
            } else {
                drop(first);
            }
            // Asleep until rung, until an item this process queued for
            // later falls due, or until the next poll.
            let (due, passed) = door.next_due();
            if passed {
                look = true;
                continue;
            }
            let until = due.map_or(next_poll, |due| due.min(next_poll));
            tokio::select! {
                () = door.bell.notified() => look = true,
                () = door.handed_bell.notified() => {}
                () = door.due_bell.notified() => {}
                () = tokio::time::sleep_until(until) => {
                    look = true;
                    if tokio::time::Instant::now() >= next_poll {
                        next_poll = tokio::time::Instant::now() + spec.poll_every;
                    }
                }
                () = stopping.cancelled() => break,
            }
        }
        // Items written from now on are queued for whichever worker
        // claims them; any handed over meanwhile are handed back below.
        door.set_taker(None);
    }

    fn spawn_item(
        &self,
        spec: &LaneSpec,
        item: WorkItem,
        slot: OwnedSemaphorePermit,
        handed: bool,
    ) {
        let runner = self.clone();
        let spec = spec.clone();
        self.inner.supervisor.spawn("work item", async move {
            runner.run_item(&spec, item, slot, handed).await;
        });
    }

    /// Claims up to `free` due items; reads first, so an idle lane writes
    /// nothing.
    async fn claim(&self, spec: &LaneSpec, free: usize) -> Result<Vec<WorkItem>, StorageError> {
        let inner = &self.inner;
        let now = (inner.clock)();
        // A lane with schedules asks each due schedule (by a read) whether
        // it has work before writing a claim; other lanes claim at once.
        let has_schedules = inner.schedules.iter().any(|s| s.lane == spec.name);
        let kinds = if has_schedules {
            let due = storage::work::due_kinds(inner.db.conn(), &spec.name, now).await?;
            let mut ready = Vec::with_capacity(due.len());
            for (kind, schedule) in due {
                if !schedule || self.schedule_pending(&kind).await {
                    ready.push(kind);
                }
            }
            if ready.is_empty() {
                return Ok(Vec::new());
            }
            Some(ready)
        } else {
            if !storage::work::has_due(inner.db.conn(), &spec.name, now).await? {
                return Ok(Vec::new());
            }
            None
        };
        let lease_until = now + to_chrono(spec.lease);
        let tx = inner.db.begin_write().await?;
        let items = storage::work::claim(
            &*tx,
            &spec.name,
            kinds.as_deref(),
            &inner.owner,
            lease_until,
            now,
            free as u64,
        )
        .await?;
        tx.commit().await?;
        let mut held = self.held();
        for item in &items {
            held.insert(item.id.clone(), spec.lease);
        }
        Ok(items)
    }

    /// Whether a due schedule of this kind has work (a failed check counts
    /// as yes: the run itself reports the failure).
    async fn schedule_pending(&self, kind: &str) -> bool {
        match self.inner.handlers.get(kind) {
            Some(handler) => handler.pending().await.unwrap_or(true),
            None => true,
        }
    }

    async fn run_item(
        &self,
        spec: &LaneSpec,
        item: WorkItem,
        _slot: OwnedSemaphorePermit,
        handed: bool,
    ) {
        let span = tracing::info_span!(
            "job",
            job.id = %item.id,
            job.kind = %item.kind,
            job.subject = item.subject.as_deref().unwrap_or(""),
            job.attempt = item.attempts,
        );
        async {
            let started = Instant::now();
            let outcome = self.outcome(spec, &item, handed).await;
            metrics::histogram!(
                "countersign_work_item_seconds",
                "lane" => spec.name.clone(),
                "kind" => item.kind.clone(),
            )
            .record(started.elapsed().as_secs_f64());
            match outcome {
                Some(outcome) => self.finish(&item, outcome).await,
                None => self.hand_back(std::slice::from_ref(&item.id)).await,
            }
            self.held().remove(&item.id);
            self.inner.released.notify_waiters();
        }
        .instrument(span)
        .await;
    }

    /// Runs the handler and decides how the item ends; None when shutdown
    /// cancelled it (it is handed back instead).
    async fn outcome(&self, spec: &LaneSpec, item: &WorkItem, handed: bool) -> Option<Finish> {
        let inner = &self.inner;
        let id = item.id.clone();
        if !item.is_schedule() && item.attempts > item.max_attempts {
            let error = format!(
                "its worker stopped while running it {} times",
                item.attempts - 1
            );
            tracing::error!(%error, "work item dead-lettered");
            return Some(Finish::Dead { id, error });
        }
        let Some(handler) = inner.handlers.get(&item.kind) else {
            let error = format!("no handler for work of kind {}", item.kind);
            tracing::error!(%error, "work item dead-lettered");
            return Some(Finish::Dead { id, error });
        };
        let job = Job {
            item: item.clone(),
            cancel: inner.cancel_jobs.child_token(),
            handed,
        };
        let result = AssertUnwindSafe(handler.run(&job)).catch_unwind().await;
        if job.cancel.is_cancelled() && !matches!(result, Ok(Ok(_))) {
            return None;
        }
        let now = (inner.clock)();
        let result =
            result.unwrap_or_else(|_| Err(JobError::Retry("the handler panicked".to_owned())));
        Some(match result {
            Ok(note) => {
                tracing::debug!("work item done");
                Finish::Done {
                    id,
                    note,
                    next_run: item.every.map(|every| now + every),
                }
            }
            Err(JobError::Retry(error)) if item.is_schedule() => {
                tracing::warn!(%error, "scheduled work failed; next run as planned");
                let retry = now + spec.backoff.after(item.attempts);
                let next = item.every.map_or(retry, |every| (now + every).min(retry));
                Finish::Retry {
                    id,
                    error,
                    at: next,
                }
            }
            Err(JobError::Retry(error)) if item.attempts < item.max_attempts => {
                let at = now + spec.backoff.after(item.attempts);
                tracing::warn!(%error, retry_at = %at, "work item failed; retrying");
                Finish::Retry { id, error, at }
            }
            Err(JobError::Retry(error) | JobError::Dead(error)) => {
                tracing::error!(%error, "work item dead-lettered");
                Finish::Dead { id, error }
            }
        })
    }

    async fn finish(&self, item: &WorkItem, outcome: Finish) {
        let inner = &self.inner;
        let finished = Finished {
            id: item.id.clone(),
            kind: item.kind.clone(),
            lane: item.lane.clone(),
            state: match &outcome {
                Finish::Done { next_run: None, .. } => storage::work::DONE,
                Finish::Done { .. } | Finish::Retry { .. } => storage::work::QUEUED,
                Finish::Dead { .. } => storage::work::DEAD,
            }
            .to_owned(),
            error: match &outcome {
                Finish::Retry { error, .. } | Finish::Dead { error, .. } => Some(error.clone()),
                Finish::Done { .. } => None,
            },
        };
        let again_at = match &outcome {
            Finish::Retry { at, .. }
            | Finish::Done {
                next_run: Some(at), ..
            } => Some(*at),
            Finish::Done { .. } | Finish::Dead { .. } => None,
        };
        let runner = self.clone();
        let written = inner
            .finishes
            .call(outcome, move |batch| {
                let runner = runner.clone();
                async move {
                    answer_each(batch, |outcomes| runner.write_finishes(outcomes)).await;
                }
            })
            .await
            .unwrap_or_else(|| {
                Err(StorageError::Unavailable(
                    "recording the end of the item was interrupted".to_owned(),
                ))
            });
        match written {
            Ok(true) => {
                // A retry (or a schedule's next run) starts when it falls
                // due, not at the lane's next poll after that.
                if let Some(at) = again_at {
                    let wait = (at - (inner.clock)()).to_std().unwrap_or_default();
                    inner.wake.lane_after(&item.lane, wait);
                }
                let _ = inner.finished.send(finished);
            }
            Ok(false) => tracing::warn!(
                "another worker took this item over after its lease ran out; its result counts"
            ),
            Err(error) => tracing::error!(
                %error,
                item = %item.id,
                "could not record how the item ended; it runs again when its lease runs out"
            ),
        }
    }

    /// Records the ends of a batch of items in one transaction; for each,
    /// whether this worker still held it (otherwise the result is dropped).
    async fn write_finishes(
        &self,
        outcomes: Arc<[Finish]>,
    ) -> Result<Vec<Result<bool, StorageError>>, StorageError> {
        let inner = &self.inner;
        let tx = inner.db.begin_write().await?;
        let lost = storage::work::finish(&*tx, &outcomes, &inner.owner, (inner.clock)()).await?;
        tx.commit().await?;
        Ok(outcomes
            .iter()
            .map(|outcome| Ok(!lost.iter().any(|id| id == outcome.id())))
            .collect())
    }

    /// Renews the leases of held items every third of the shortest lease;
    /// at shutdown waits for running items (up to the drain period),
    /// cancels the rest and hands them back.
    async fn keep_leases(self) {
        let inner = &self.inner;
        let stopping = inner.supervisor.stopping();
        let every = inner
            .lanes
            .iter()
            .map(|lane| lane.lease)
            .min()
            .unwrap_or(Duration::from_secs(30))
            / 3;
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => self.renew().await,
                () = stopping.cancelled() => break,
            }
        }
        let drained = tokio::time::timeout(inner.drain, self.until_nothing_held()).await;
        if drained.is_err() {
            inner.cancel_jobs.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(1), self.until_nothing_held()).await;
        }
        let mut still: Vec<String> = self.held().keys().cloned().collect();
        for spec in &inner.lanes {
            let handed = inner.wake.door(&spec.name).drain_handed();
            still.extend(handed.into_iter().map(|item| item.id));
        }
        self.hand_back(&still).await;
    }

    /// Returns items to the queue without counting the attempt.
    async fn hand_back(&self, ids: &[String]) {
        if ids.is_empty() {
            return;
        }
        let inner = &self.inner;
        let released: Result<u64, StorageError> = async {
            let tx = inner.db.begin_write().await?;
            let count =
                storage::work::release(&*tx, &inner.owner, Some(ids), (inner.clock)()).await?;
            tx.commit().await?;
            Ok(count)
        }
        .await;
        match released {
            Ok(count) => tracing::info!(items = count, "handed unfinished work back at shutdown"),
            Err(error) => {
                tracing::error!(%error, "could not hand work back at shutdown; it is taken over when its lease runs out")
            }
        }
    }

    async fn until_nothing_held(&self) {
        loop {
            let released = self.inner.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if self.held().is_empty() {
                return;
            }
            released.await;
        }
    }

    async fn renew(&self) {
        let inner = &self.inner;
        let mut by_lease: HashMap<Duration, Vec<String>> = HashMap::new();
        for (id, lease) in self.held().iter() {
            by_lease.entry(*lease).or_default().push(id.clone());
        }
        for spec in &inner.lanes {
            let waiting = inner.wake.door(&spec.name).handed_ids();
            if !waiting.is_empty() {
                by_lease.entry(spec.lease).or_default().extend(waiting);
            }
        }
        if by_lease.is_empty() {
            return;
        }
        let renewed: Result<(), StorageError> = async {
            let now = (inner.clock)();
            let tx = inner.db.begin_write().await?;
            for (lease, ids) in by_lease {
                storage::work::renew(&*tx, &ids, &inner.owner, now + to_chrono(lease), now).await?;
            }
            tx.commit().await?;
            Ok(())
        }
        .await;
        if let Err(error) = renewed {
            tracing::warn!(%error, "could not renew work leases");
        }
    }
}

fn to_chrono(duration: Duration) -> chrono::Duration {
    chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::MAX)
}
