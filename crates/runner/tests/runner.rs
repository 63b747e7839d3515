#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The runner against a real database (SQLite, or PostgreSQL with
//! `TEST_DATABASE_URL`): replicas, leases, retries, dead letters, schedules
//! and shutdown.

use chrono::{DateTime, Duration as Span, SubsecRound, Utc};
use runner::{
    Activity, Clock, Finished, Handler, Job, JobError, LaneSpec, Priority, Runner, Schedule,
    Supervisor, Wake,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use storage::Database;
use storage::testing::TestDatabase;
use storage::work::{self, NewWork};
use tokio::sync::{Notify, broadcast, mpsc};

const LANE: &str = "tests";
const WAIT: Duration = Duration::from_secs(60);

/// A clock the test moves.
#[derive(Clone)]
struct TestClock(Arc<Mutex<DateTime<Utc>>>);

impl TestClock {
    fn new() -> Self {
        // PostgreSQL keeps microseconds: times read back compare equal.
        TestClock(Arc::new(Mutex::new(Utc::now().trunc_subsecs(6))))
    }
    fn now(&self) -> DateTime<Utc> {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    fn advance(&self, by: Span) {
        let mut now = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *now += by;
    }
    fn clock(&self) -> Clock {
        let me = self.clone();
        Arc::new(move || me.now())
    }
}

fn item(kind: &str, n: usize, now: DateTime<Utc>, max_attempts: u32) -> NewWork {
    NewWork {
        kind: kind.to_owned(),
        lane: LANE.to_owned(),
        subject: Some(format!("subject-{n}")),
        payload: serde_json::json!({ "n": n }),
        run_after: now,
        max_attempts,
        every: None,
        dedupe_key: Some(format!("{kind}:{n}")),
    }
}

async fn enqueue(db: &Database, items: &[NewWork], now: DateTime<Utc>) {
    let tx = db.begin_write().await.expect("begin");
    work::enqueue(&*tx, items, now).await.expect("enqueue");
    tx.commit().await.expect("commit");
}

struct Parts {
    runner: Runner,
    supervisor: Supervisor,
    wake: Wake,
}

fn runner(
    db: &Database,
    clock: &TestClock,
    owner: &str,
    concurrency: usize,
    handlers: Vec<(&str, Arc<dyn Handler>)>,
) -> Parts {
    let supervisor = Supervisor::new();
    let wake = Wake::default();
    let lane = LaneSpec::new(LANE, "tests", concurrency, Priority::Background)
        .with_poll_every(Duration::from_millis(20));
    let mut builder = Runner::builder(
        db.clone(),
        clock.clock(),
        owner,
        wake.clone(),
        Activity::default(),
        supervisor.clone(),
    )
    .lane(lane)
    .drain(Duration::from_secs(5));
    for (kind, handler) in handlers {
        builder = builder.handle(kind, Shared(handler));
    }
    Parts {
        runner: builder.build(),
        supervisor,
        wake,
    }
}

/// Lets tests keep an `Arc` to their handler.
struct Shared(Arc<dyn Handler>);

#[async_trait::async_trait]
impl Handler for Shared {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        self.0.run(job).await
    }

    async fn pending(&self) -> Result<bool, JobError> {
        self.0.pending().await
    }
}

async fn next_finished(events: &mut broadcast::Receiver<Finished>) -> Finished {
    tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("an item finished in time")
        .expect("the runner is alive")
}

/// Counts how often each item ran.
#[derive(Default)]
struct Count {
    runs: Mutex<HashMap<String, u32>>,
}

#[async_trait::async_trait]
impl Handler for Count {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        *self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(job.item.id.clone())
            .or_default() += 1;
        tokio::task::yield_now().await;
        Ok(None)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_sharing_a_database_never_run_one_item_twice() {
    let test = TestDatabase::new().await;
    let other_replica = Database::connect(&test.url).await.expect("second pool");
    let clock = TestClock::new();
    let items: Vec<NewWork> = (0..300).map(|n| item("count", n, clock.now(), 3)).collect();
    enqueue(&test.db, &items, clock.now()).await;

    let count = Arc::new(Count::default());
    let a = runner(
        &test.db,
        &clock,
        "replica-a",
        4,
        vec![("count", count.clone())],
    );
    let b = runner(
        &other_replica,
        &clock,
        "replica-b",
        4,
        vec![("count", count.clone())],
    );
    let mut done_a = a.runner.finished();
    let mut done_b = b.runner.finished();
    a.runner.start().await.expect("start a");
    b.runner.start().await.expect("start b");

    let mut finished = 0;
    while finished < 300 {
        tokio::select! {
            event = done_a.recv() => { assert_eq!(event.expect("a alive").state, "done"); finished += 1; }
            event = done_b.recv() => { assert_eq!(event.expect("b alive").state, "done"); finished += 1; }
            () = tokio::time::sleep(WAIT) => panic!("only {finished} of 300 items finished"),
        }
    }
    let runs = count.runs.lock().expect("runs").clone();
    assert_eq!(runs.len(), 300, "every item ran");
    let twice: Vec<_> = runs.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "items run more than once: {twice:?}");
    let rows = work::list(test.db.conn(), &work::WorkFilter::default(), 1000)
        .await
        .expect("list");
    assert!(
        rows.iter()
            .all(|row| row.state == work::DONE && row.attempts == 1)
    );
    a.supervisor.shutdown(Duration::from_secs(10)).await;
    b.supervisor.shutdown(Duration::from_secs(10)).await;
}

#[tokio::test]
async fn work_held_by_a_worker_that_died_is_taken_over_when_its_lease_runs_out() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    enqueue(&test.db, &[item("count", 1, clock.now(), 3)], clock.now()).await;
    let tx = test.db.begin_write().await.expect("begin");
    let claimed = work::claim(
        &*tx,
        LANE,
        Some(&["count".to_owned()]),
        "died",
        clock.now() + Span::seconds(30),
        clock.now(),
        10,
    )
    .await
    .expect("claim");
    tx.commit().await.expect("commit");
    assert_eq!(claimed.len(), 1);

    assert!(
        !work::has_due(test.db.conn(), LANE, clock.now() + Span::seconds(29))
            .await
            .expect("read"),
        "nobody may take an item while its lease holds"
    );
    clock.advance(Span::seconds(31));
    let count = Arc::new(Count::default());
    let survivor = runner(
        &test.db,
        &clock,
        "survivor",
        2,
        vec![("count", count.clone())],
    );
    let mut events = survivor.runner.finished();
    survivor.runner.start().await.expect("start");
    assert_eq!(next_finished(&mut events).await.state, "done");
    let row = work::get(test.db.conn(), &claimed[0].id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(row.state, work::DONE);
    assert_eq!(row.attempts, 2, "the dead worker's try counts");
    survivor.supervisor.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_worker_restarted_under_its_name_takes_back_its_work_at_once_instead_of_waiting_for_the_lease()
 {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    enqueue(&test.db, &[item("count", 1, clock.now(), 3)], clock.now()).await;
    let tx = test.db.begin_write().await.expect("begin");
    work::claim(
        &*tx,
        LANE,
        Some(&["count".to_owned()]),
        "worker-1",
        clock.now() + Span::minutes(10),
        clock.now(),
        10,
    )
    .await
    .expect("claim");
    tx.commit().await.expect("commit");

    clock.advance(Span::seconds(1));
    let count = Arc::new(Count::default());
    let restarted = runner(
        &test.db,
        &clock,
        "worker-1",
        2,
        vec![("count", count.clone())],
    );
    let mut events = restarted.runner.finished();
    restarted.runner.start().await.expect("start");
    assert_eq!(next_finished(&mut events).await.state, "done");
    assert_eq!(count.runs.lock().expect("runs").len(), 1);
    restarted.supervisor.shutdown(Duration::from_secs(5)).await;
}

/// Fails until told to succeed.
#[derive(Default)]
struct Flaky {
    healed: AtomicBool,
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl Handler for Flaky {
    async fn run(&self, _job: &Job) -> Result<Option<String>, JobError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.healed.load(Ordering::SeqCst) {
            Ok(Some("healed".to_owned()))
        } else {
            Err(JobError::Retry("provider down".to_owned()))
        }
    }
}

#[tokio::test]
async fn failing_work_is_retried_with_backoff_then_dead_lettered_and_a_person_can_retry_it() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    enqueue(&test.db, &[item("flaky", 1, clock.now(), 3)], clock.now()).await;
    let flaky = Arc::new(Flaky::default());
    let parts = runner(
        &test.db,
        &clock,
        "worker",
        1,
        vec![("flaky", flaky.clone())],
    );
    let mut events = parts.runner.finished();
    parts.runner.start().await.expect("start");

    let first = next_finished(&mut events).await;
    assert_eq!(
        (first.state.as_str(), first.error.as_deref()),
        ("queued", Some("provider down"))
    );
    let row = work::get(test.db.conn(), &first.id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(row.attempts, 1);
    assert!(row.run_after > clock.now(), "a retry waits for its backoff");
    assert!(row.run_after <= clock.now() + Span::seconds(2));
    assert!(
        !work::has_due(test.db.conn(), LANE, clock.now())
            .await
            .expect("read")
    );

    clock.advance(Span::minutes(1));
    parts.wake.lane(LANE);
    assert_eq!(next_finished(&mut events).await.state, "queued");
    clock.advance(Span::minutes(1));
    parts.wake.lane(LANE);
    let last = next_finished(&mut events).await;
    assert_eq!(
        last.state, "dead",
        "after the third attempt it goes to a person"
    );
    let dead = work::get(test.db.conn(), &first.id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(
        (dead.state.as_str(), dead.last_error.as_deref()),
        ("dead", Some("provider down"))
    );
    assert_eq!(flaky.calls.load(Ordering::SeqCst), 3);

    flaky.healed.store(true, Ordering::SeqCst);
    let tx = test.db.begin_write().await.expect("begin");
    let retried = work::intervene(
        &*tx,
        &first.id,
        work::Intervention::Retry,
        "staff retried",
        clock.now(),
    )
    .await
    .expect("retry")
    .expect("a dead item may be retried");
    tx.commit().await.expect("commit");
    assert_eq!((retried.state.as_str(), retried.attempts), ("queued", 0));
    parts.wake.lane(LANE);
    assert_eq!(next_finished(&mut events).await.state, "done");
    parts.supervisor.shutdown(Duration::from_secs(5)).await;
}

struct Hopeless;

#[async_trait::async_trait]
impl Handler for Hopeless {
    async fn run(&self, _job: &Job) -> Result<Option<String>, JobError> {
        Err(JobError::Dead(
            "the payload names a proposal that does not exist".to_owned(),
        ))
    }
}

#[tokio::test]
async fn work_that_cannot_succeed_is_dead_lettered_at_once_and_keeps_its_key_until_settled() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    enqueue(
        &test.db,
        &[item("hopeless", 1, clock.now(), 5)],
        clock.now(),
    )
    .await;
    let parts = runner(
        &test.db,
        &clock,
        "worker",
        1,
        vec![("hopeless", Arc::new(Hopeless))],
    );
    let mut events = parts.runner.finished();
    parts.runner.start().await.expect("start");
    let dead = next_finished(&mut events).await;
    assert_eq!(dead.state, "dead");

    let tx = test.db.begin_write().await.expect("begin");
    let again = work::enqueue(&*tx, &[item("hopeless", 1, clock.now(), 5)], clock.now())
        .await
        .expect("enqueue");
    assert_eq!(
        again, 0,
        "the same work is not queued again while its dead letter is open"
    );
    let resolved = work::intervene(
        &*tx,
        &dead.id,
        work::Intervention::Resolve,
        "refunded by hand",
        clock.now(),
    )
    .await
    .expect("resolve")
    .expect("a dead item may be resolved");
    assert_eq!(resolved.state, work::RESOLVED);
    let after = work::enqueue(&*tx, &[item("hopeless", 1, clock.now(), 5)], clock.now())
        .await
        .expect("enqueue");
    assert_eq!(
        after, 1,
        "once settled, the same work may be asked for again"
    );
    tx.commit().await.expect("commit");
    parts.supervisor.shutdown(Duration::from_secs(5)).await;
}

/// Runs until released, or until shutdown cancels it.
struct Blocking {
    started: mpsc::UnboundedSender<String>,
    release: Notify,
}

#[async_trait::async_trait]
impl Handler for Blocking {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let _ = self.started.send(job.item.id.clone());
        tokio::select! {
            () = self.release.notified() => Ok(None),
            () = job.cancel.cancelled() => Err(JobError::Retry("cancelled by shutdown".to_owned())),
        }
    }
}

#[tokio::test]
async fn shutdown_waits_for_running_work_to_finish() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    enqueue(&test.db, &[item("block", 1, clock.now(), 3)], clock.now()).await;
    let (started, mut started_rx) = mpsc::unbounded_channel();
    let blocking = Arc::new(Blocking {
        started,
        release: Notify::new(),
    });
    let parts = runner(
        &test.db,
        &clock,
        "worker",
        1,
        vec![("block", blocking.clone())],
    );
    parts.runner.start().await.expect("start");
    let id = started_rx.recv().await.expect("the item started");

    let supervisor = parts.supervisor.clone();
    let shutdown = tokio::spawn(async move { supervisor.shutdown(Duration::from_secs(30)).await });
    blocking.release.notify_one();
    assert!(
        shutdown.await.expect("shutdown task"),
        "every task ended within the grace period"
    );
    let row = work::get(test.db.conn(), &id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(
        row.state,
        work::DONE,
        "the running item was allowed to finish"
    );
}

#[tokio::test]
async fn shutdown_hands_back_work_that_outlasts_the_drain_without_counting_an_attempt() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    enqueue(&test.db, &[item("block", 1, clock.now(), 3)], clock.now()).await;
    let (started, mut started_rx) = mpsc::unbounded_channel();
    let blocking = Arc::new(Blocking {
        started,
        release: Notify::new(),
    });
    let supervisor = Supervisor::new();
    let lane = LaneSpec::new(LANE, "tests", 1, Priority::Background);
    let parts = Runner::builder(
        test.db.clone(),
        clock.clock(),
        "worker",
        Wake::default(),
        Activity::default(),
        supervisor.clone(),
    )
    .lane(lane)
    .handle("block", Shared(blocking.clone()))
    .drain(Duration::from_millis(50))
    .build();
    parts.start().await.expect("start");
    let id = started_rx.recv().await.expect("the item started");

    assert!(supervisor.shutdown(Duration::from_secs(30)).await);
    let row = work::get(test.db.conn(), &id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(row.state, work::QUEUED, "handed back for another worker");
    assert_eq!(row.attempts, 0, "a shutdown is not the item's failure");
    assert_eq!(row.lease_owner, None);
    assert!(
        work::has_due(test.db.conn(), LANE, clock.now())
            .await
            .expect("read")
    );
}

#[tokio::test]
async fn a_schedule_runs_again_one_period_after_each_run() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    let count = Arc::new(Count::default());
    let supervisor = Supervisor::new();
    let wake = Wake::default();
    let parts = Runner::builder(
        test.db.clone(),
        clock.clock(),
        "worker",
        wake.clone(),
        Activity::default(),
        supervisor.clone(),
    )
    .lane(
        LaneSpec::new(LANE, "tests", 1, Priority::Scheduled)
            .with_poll_every(Duration::from_millis(20)),
    )
    .handle("sweep", Shared(count.clone()))
    .schedule(Schedule {
        kind: "sweep".to_owned(),
        lane: LANE.to_owned(),
        every: Span::minutes(5),
        first_in: Span::zero(),
    })
    .build();
    let mut events = parts.finished();
    parts.start().await.expect("start");
    let first = next_finished(&mut events).await;
    assert_eq!(first.state, "queued", "a schedule never finishes");
    let row = work::get(test.db.conn(), &first.id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(row.run_after, clock.now() + Span::minutes(5));
    assert_eq!(row.attempts, 0);

    clock.advance(Span::minutes(5));
    wake.lane(LANE);
    let second = next_finished(&mut events).await;
    assert_eq!(second.id, first.id, "one row per schedule");
    assert_eq!(count.runs.lock().expect("runs").get(&first.id), Some(&2));
    supervisor.shutdown(Duration::from_secs(5)).await;
}

/// A sweep that has work only when told so; says each time it was asked.
struct Sweeper {
    has_work: AtomicBool,
    asked: mpsc::UnboundedSender<bool>,
}

#[async_trait::async_trait]
impl Handler for Sweeper {
    async fn run(&self, _job: &Job) -> Result<Option<String>, JobError> {
        Ok(Some("swept".to_owned()))
    }

    async fn pending(&self) -> Result<bool, JobError> {
        let has_work = self.has_work.load(Ordering::SeqCst);
        let _ = self.asked.send(has_work);
        Ok(has_work)
    }
}

#[tokio::test]
async fn a_due_schedule_with_nothing_to_do_is_not_claimed_so_an_idle_system_writes_nothing() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    let (asked, mut asked_rx) = mpsc::unbounded_channel();
    let sweeper = Arc::new(Sweeper {
        has_work: AtomicBool::new(false),
        asked,
    });
    let supervisor = Supervisor::new();
    let wake = Wake::default();
    let parts = Runner::builder(
        test.db.clone(),
        clock.clock(),
        "worker",
        wake.clone(),
        Activity::default(),
        supervisor.clone(),
    )
    .lane(
        LaneSpec::new(LANE, "tests", 1, Priority::Scheduled)
            .with_poll_every(Duration::from_millis(10)),
    )
    .handle("sweep", Shared(sweeper.clone()))
    .schedule(Schedule {
        kind: "sweep".to_owned(),
        lane: LANE.to_owned(),
        every: Span::minutes(5),
        first_in: Span::zero(),
    })
    .build();
    let mut events = parts.finished();
    parts.start().await.expect("start");
    let writes_after_start = test.db.write_stats().committed;

    // Two looks at the due schedule, each finding nothing to do.
    assert!(!asked_rx.recv().await.expect("asked"));
    assert!(!asked_rx.recv().await.expect("asked again"));
    assert_eq!(
        test.db.write_stats().committed,
        writes_after_start,
        "looking wrote nothing"
    );

    sweeper.has_work.store(true, Ordering::SeqCst);
    wake.lane(LANE);
    let run = next_finished(&mut events).await;
    assert_eq!(run.state, "queued");
    assert!(test.db.write_stats().committed > writes_after_start);
    supervisor.shutdown(Duration::from_secs(5)).await;
}

/// Writes items already claimed for the worker that takes the lane here.
async fn write_claimed(
    db: &Database,
    wake: &Wake,
    items: &[NewWork],
    now: DateTime<Utc>,
) -> Vec<work::WorkItem> {
    let taker = wake.taker(LANE).expect("a running lane takes claimed work");
    let lease = Span::from_std(taker.lease).expect("lease");
    let tx = db.begin_write().await.expect("begin");
    let written = work::enqueue_claimed(&*tx, items, &taker.owner, now + lease, now)
        .await
        .expect("enqueue claimed");
    tx.commit().await.expect("commit");
    written
}

#[tokio::test]
async fn work_written_already_claimed_by_this_process_runs_without_a_claim_of_its_own() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    let count = Arc::new(Count::default());
    let parts = runner(
        &test.db,
        &clock,
        "worker",
        1,
        vec![("count", count.clone())],
    );
    assert_eq!(
        parts.wake.taker(LANE),
        None,
        "before the lane runs, new work is written queued"
    );
    let mut finished = parts.runner.finished();
    parts.runner.start().await.expect("start");

    let items: Vec<NewWork> = (0..3).map(|n| item("count", n, clock.now(), 3)).collect();
    let written = write_claimed(&test.db, &parts.wake, &items, clock.now()).await;
    assert_eq!(written.len(), 3);
    assert!(
        written
            .iter()
            .all(|row| row.state == work::RUNNING && row.lease_owner.as_deref() == Some("worker")),
        "written as held by this worker, so no other worker claims them: {written:?}"
    );
    parts.wake.hand_over(written.clone());
    for _ in 0..3 {
        assert_eq!(next_finished(&mut finished).await.state, work::DONE);
    }
    for row in &written {
        let row = work::get(test.db.conn(), &row.id)
            .await
            .expect("read")
            .expect("row");
        assert_eq!(row.state, work::DONE);
        assert_eq!(row.attempts, 1, "the write was the only claim");
    }
    assert!(
        count
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .all(|runs| *runs == 1),
        "each ran once"
    );
    assert!(parts.supervisor.shutdown(WAIT).await);
    assert_eq!(
        parts.wake.taker(LANE),
        None,
        "after shutdown, new work is written queued for another worker"
    );
}

#[tokio::test]
async fn claimed_work_still_waiting_for_a_slot_at_shutdown_is_handed_back_not_stranded() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    let (started, mut started_rx) = mpsc::unbounded_channel();
    let blocking = Arc::new(Blocking {
        started,
        release: Notify::new(),
    });
    let supervisor = Supervisor::new();
    let wake = Wake::default();
    let runner = Runner::builder(
        test.db.clone(),
        clock.clock(),
        "worker",
        wake.clone(),
        Activity::default(),
        supervisor.clone(),
    )
    .lane(LaneSpec::new(LANE, "tests", 1, Priority::Background))
    .handle("block", Shared(blocking.clone()))
    .drain(Duration::from_millis(50))
    .build();
    runner.start().await.expect("start");
    let items: Vec<NewWork> = (0..2).map(|n| item("block", n, clock.now(), 3)).collect();
    let written = write_claimed(&test.db, &wake, &items, clock.now()).await;
    wake.hand_over(written.clone());
    started_rx.recv().await.expect("the first item started");

    // The first outlasts the drain; the second never got the one slot.
    supervisor.shutdown(WAIT).await;
    for row in &written {
        let row = work::get(test.db.conn(), &row.id)
            .await
            .expect("read")
            .expect("row");
        assert_eq!(row.state, work::QUEUED, "{} is queued again", row.id);
        assert_eq!(row.lease_owner, None);
        assert_eq!(row.attempts, 0, "handing back does not count an attempt");
    }
}

#[tokio::test]
async fn claimed_work_whose_writer_died_before_handing_it_over_runs_when_its_worker_starts_again() {
    let test = TestDatabase::new().await;
    let clock = TestClock::new();
    let count = Arc::new(Count::default());
    // A first life of the worker wrote the item claimed, then died before
    // handing it over (its runner never took it).
    let first_life = runner(
        &test.db,
        &clock,
        "worker",
        1,
        vec![("count", count.clone())],
    );
    first_life.runner.start().await.expect("start");
    let written = write_claimed(
        &test.db,
        &first_life.wake,
        &[item("count", 1, clock.now(), 3)],
        clock.now(),
    )
    .await;
    first_life.supervisor.shutdown(WAIT).await;
    // A graceful stop hands nothing back it did not know of: still held.
    let row = work::get(test.db.conn(), &written[0].id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(row.state, work::RUNNING);

    let second_life = runner(
        &test.db,
        &clock,
        "worker",
        1,
        vec![("count", count.clone())],
    );
    let mut finished = second_life.runner.finished();
    second_life.runner.start().await.expect("start");
    let done = next_finished(&mut finished).await;
    assert_eq!(
        (done.id.as_str(), done.state.as_str()),
        (written[0].id.as_str(), work::DONE),
        "taken back at start, without waiting for the lease to run out"
    );
}

#[tokio::test]
async fn work_queued_for_a_moment_later_runs_when_it_falls_due_not_at_the_next_poll() {
    // Wall time here: the lane's timer and the claim's clock must agree.
    let test = TestDatabase::new().await;
    let supervisor = Supervisor::new();
    let wake = Wake::default();
    // A poll far away: only the due-time wake can start the item in time.
    let lane = LaneSpec::new(LANE, "tests", 1, Priority::Background)
        .with_poll_every(Duration::from_secs(3600));
    let count = Arc::new(Count::default());
    let runner = Runner::builder(
        test.db.clone(),
        Arc::new(Utc::now),
        "worker",
        wake.clone(),
        Activity::default(),
        supervisor.clone(),
    )
    .lane(lane)
    .handle("later", Shared(count.clone()))
    .build();
    let mut finished = runner.finished();
    runner.start().await.expect("start");

    let queued_at = std::time::Instant::now();
    let later = Span::milliseconds(300);
    let due = item("later", 1, Utc::now() + later, 3);
    enqueue(&test.db, &[due], Utc::now()).await;
    wake.lane_after(LANE, later.to_std().unwrap());

    let end = next_finished(&mut finished).await;
    assert_eq!((end.kind.as_str(), end.state.as_str()), ("later", "done"));
    assert!(
        queued_at.elapsed() >= Duration::from_millis(300),
        "it ran before it was due"
    );
    supervisor.shutdown(Duration::from_secs(5)).await;
}
