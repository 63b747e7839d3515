//! Benchmark: the work runner.
//!
//! 1. Throughput: no-op items claimed, run and finished per second by one
//!    lane of 8, as a ratio of the raw commit rate of the same database at
//!    the same concurrency (single-row INSERT transactions) in the same run.
//! 2. Interactive work under a backlog: approval and chat-turn latency
//!    (median, p99) with the runner idle, then with 10,000 background items
//!    (person notifications, each a write) queued and being worked off.
//!
//! ```sh
//! cargo run --release -p engine --example work_lanes                    # SQLite
//! TEST_DATABASE_URL=postgres://countersign:countersign@127.0.0.1:5432/countersign \
//!   cargo run --release -p engine --example work_lanes                  # PostgreSQL
//! ```
//! Options (environment): BENCH_ITEMS (5000), BENCH_BACKLOG (10000),
//! BENCH_ROUNDS (200), BENCH_RAW_SECONDS (3).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{env_or, percentile};

use connectors::HttpTimeouts;
use connectors::sandbox::{SandboxConfig, SandboxProvider, SandboxState};
use engine::assistant::TurnControl;
use engine::proposals::Proposer;
use engine::{Actor, Engine, EngineSettings};
use runner::{Activity, Handler, Job, JobError, LaneSpec, Priority, Runner, Supervisor, Wake};
use sea_orm::ConnectionTrait;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use storage::testing::TestDatabase;
use storage::work::NewWork;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn summary(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (
        ms(percentile(&samples, 50.0)),
        ms(percentile(&samples, 99.0)),
    )
}

struct Noop;

#[async_trait::async_trait]
impl Handler for Noop {
    async fn run(&self, _job: &Job) -> Result<Option<String>, JobError> {
        Ok(None)
    }
}

async fn raw_commit_rate(test_db: &TestDatabase, concurrency: usize, seconds: u64) -> f64 {
    let db = test_db.db.clone();
    db.conn()
        .execute_unprepared(
            "CREATE TABLE bench_commits (worker INTEGER NOT NULL, n BIGINT NOT NULL)",
        )
        .await
        .unwrap();
    let commits = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut workers = Vec::new();
    for worker in 0..concurrency {
        let (db, commits) = (db.clone(), commits.clone());
        workers.push(tokio::spawn(async move {
            let mut n = 0;
            while Instant::now() < deadline {
                let tx = db.begin_write().await.unwrap();
                tx.execute_unprepared(&format!("INSERT INTO bench_commits VALUES ({worker}, {n})"))
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
                n += 1;
                commits.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    commits.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

async fn runner_rate(test_db: &TestDatabase, concurrency: usize, items: usize) -> f64 {
    let db = test_db.db.clone();
    let now = engine::now();
    let work: Vec<NewWork> = (0..items)
        .map(|n| NewWork {
            kind: "bench.noop".into(),
            lane: "bench".into(),
            subject: None,
            payload: serde_json::json!({ "n": n }),
            run_after: now,
            max_attempts: 3,
            every: None,
            dedupe_key: None,
        })
        .collect();
    for chunk in work.chunks(500) {
        let tx = db.begin_write().await.unwrap();
        storage::work::enqueue(&*tx, chunk, now).await.unwrap();
        tx.commit().await.unwrap();
    }
    let supervisor = Supervisor::new();
    let runner = Runner::builder(
        db.clone(),
        Arc::new(engine::now),
        "bench",
        Wake::default(),
        Activity::default(),
        supervisor.clone(),
    )
    .lane(LaneSpec::new(
        "bench",
        "benchmark",
        concurrency,
        Priority::Background,
    ))
    .handle("bench.noop", Noop)
    .build();
    let mut finished = runner.finished();
    let started = Instant::now();
    runner.start().await.unwrap();
    let mut done = 0;
    while done < items {
        match finished.recv().await {
            Ok(_) => done += 1,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                done += missed as usize
            }
            Err(_) => break,
        }
    }
    let rate = items as f64 / started.elapsed().as_secs_f64();
    supervisor.shutdown(Duration::from_secs(10)).await;
    rate
}

async fn actor(db: &storage::Database, name: &str) -> Actor {
    let user = storage::users::find_by_name(db.conn(), name)
        .await
        .unwrap()
        .unwrap();
    Actor::from(user)
}

/// Proposals on fresh orders, ready to approve.
async fn proposals(
    engine: &Engine,
    sandbox: &SandboxState,
    customer: &Actor,
    prefix: &str,
    count: usize,
) -> Vec<(String, String)> {
    let now = engine::now();
    let tx = engine.db.begin_write().await.unwrap();
    for n in 0..count {
        let order =
            engine::demo::delivered_cap_order(&format!("{prefix}{n}"), &customer.user_id, now);
        sandbox
            .add_charge(
                &order.payment_reference,
                order.total.amount_minor,
                order.total.currency.code(),
            )
            .unwrap();
        storage::orders::insert(&*tx, &order).await.unwrap();
    }
    tx.commit().await.unwrap();
    let mut out = Vec::with_capacity(count);
    for n in 0..count {
        let stored = engine
            .proposals
            .submit(
                Proposer::Assistant {
                    agent: "bench",
                    sender: customer,
                    customer_id: &customer.user_id,
                },
                engine::demo::whole_order_refund(&format!("{prefix}{n}")),
            )
            .await
            .unwrap();
        out.push((stored.proposal.id, stored.proposal.action_digest));
    }
    out
}

/// Approval and chat-turn latencies over `rounds` rounds, one of each per round.
async fn interactive(
    engine: &Engine,
    customer: &Actor,
    approver: &Actor,
    batch: &[(String, String)],
) -> (Vec<Duration>, Vec<Duration>) {
    let (mut approvals, mut turns) = (Vec::new(), Vec::new());
    for (id, digest) in batch {
        let started = Instant::now();
        engine
            .approvals
            .approve(approver, id, digest)
            .await
            .unwrap();
        approvals.push(started.elapsed());
        let conversation = engine
            .chat
            .create_conversation(customer, None)
            .await
            .unwrap()
            .id;
        let started = Instant::now();
        engine
            .chat
            .chat_turn(
                customer,
                &conversation,
                "what is the status of order 4821?",
                engine::assistant::Priority::Later,
                TurnControl::new(),
            )
            .await
            .unwrap()
            .answered()
            .expect("no turn was running");
        turns.push(started.elapsed());
    }
    (approvals, turns)
}

#[tokio::main]
async fn main() {
    let items = env_or::<u64>("BENCH_ITEMS", 5000) as usize;
    let backlog = env_or("BENCH_BACKLOG", 10_000) as usize;
    let rounds = env_or("BENCH_ROUNDS", 200) as usize;
    let raw_seconds = env_or("BENCH_RAW_SECONDS", 3);
    let concurrency = 8;

    let throughput_db = TestDatabase::new().await;
    let backend = format!("{:?}", throughput_db.db.backend());
    let raw = raw_commit_rate(&throughput_db, concurrency, raw_seconds).await;
    let rate = runner_rate(&throughput_db, concurrency, items).await;
    println!("backend              {backend}");
    println!(
        "raw commits/s        {raw:.0}   (single-row INSERT transactions, {concurrency} writers)"
    );
    println!("runner items/s       {rate:.0}   ({items} no-op items, one lane of {concurrency})");
    println!("ratio                {:.3}", rate / raw);

    let test_db = TestDatabase::new().await;
    let db = test_db.db.clone();
    engine::demo::seed_demo(
        &db,
        "bench-password",
        engine::demo::ReferenceStyle::Sandbox,
        engine::now(),
    )
    .await
    .unwrap();
    let sandbox = SandboxState::new(SandboxConfig::default()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(connectors::sandbox::serve_standalone(
        listener,
        sandbox.clone(),
    ));
    let provider =
        SandboxProvider::new(&url, sandbox.secret_key(), HttpTimeouts::default()).unwrap();
    let policies = engine::policies::PolicyLibrary::load(db.clone())
        .await
        .unwrap();
    let engine = Engine::new(
        db.clone(),
        Arc::new(provider),
        policies,
        EngineSettings {
            submission_limit: engine::proposals::SubmissionLimit {
                max_per_window: u64::MAX,
                window: chrono::Duration::hours(1),
            },
            default_approval_limit_minor: None,
            ..EngineSettings::default()
        },
    );
    engine
        .work
        .runner(&engine::work::WorkSchedule {
            sweeps: false,
            ..engine::work::WorkSchedule::default()
        })
        .start()
        .await
        .unwrap();
    let customer = actor(&db, "customer3").await;
    let approver = actor(&db, "approver").await;
    let idle_batch = proposals(&engine, &sandbox, &customer, "idle", rounds).await;
    let busy_batch = proposals(&engine, &sandbox, &customer, "busy", rounds).await;

    let (idle_approvals, idle_turns) =
        interactive(&engine, &customer, &approver, &idle_batch).await;

    let now = engine::now();
    let some_proposal = &idle_batch[0].0;
    let flood: Vec<NewWork> = (0..backlog)
        .map(|n| engine::work::person_notify(some_proposal, &format!("benchmark notice {n}"), now))
        .collect();
    for chunk in flood.chunks(500) {
        let tx = db.begin_write().await.unwrap();
        storage::work::enqueue(&*tx, chunk, now).await.unwrap();
        tx.commit().await.unwrap();
    }
    engine.work.wake.lane(engine::work::NOTIFICATIONS);
    let (busy_approvals, busy_turns) =
        interactive(&engine, &customer, &approver, &busy_batch).await;
    let left = storage::work::lane_summary(db.conn(), engine::now())
        .await
        .unwrap()
        .into_iter()
        .find(|lane| lane.lane == engine::work::NOTIFICATIONS)
        .map_or(0, |lane| lane.queued + lane.running + lane.retrying);

    let row = |name: &str, idle: Vec<Duration>, busy: Vec<Duration>| {
        let (idle50, idle99) = summary(idle);
        let (busy50, busy99) = summary(busy);
        println!(
            "{name:<10} idle median {idle50:>7.2} ms  p99 {idle99:>7.2} ms | backlog median {busy50:>7.2} ms  p99 {busy99:>7.2} ms | p99 ratio {:.2}",
            busy99 / idle99
        );
    };
    println!(
        "interactive latency, {rounds} rounds each, backlog of {backlog} notifications ({left} still waiting at the end)"
    );
    row("approval", idle_approvals, busy_approvals);
    row("chat turn", idle_turns, busy_turns);
}
