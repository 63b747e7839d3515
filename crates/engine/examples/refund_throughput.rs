//! Benchmark: refunds approved → verified per second with 32 concurrent
//! approvers against the sandbox provider on loopback, next to the raw commit
//! rate of the same database at the same concurrency (single-row UPDATE
//! transactions), measured in the same run.
//!
//! ```sh
//! cargo run --release -p engine --example refund_throughput               # SQLite
//! TEST_DATABASE_URL=postgres://countersign:countersign@127.0.0.1:5432/countersign \
//!   cargo run --release -p engine --example refund_throughput             # PostgreSQL
//! ```
//! Options (environment): BENCH_CONCURRENCY (32), BENCH_REFUNDS (4096),
//! BENCH_RAW_SECONDS (3), BENCH_RAW_STATEMENTS (1; more shows what a
//! transaction of that many statements costs on the same write path).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use connectors::HttpTimeouts;
use connectors::sandbox::{SandboxConfig, SandboxProvider, SandboxState};
use domain::proposal::ProposalStatus;
use domain::{Currency, Money, PastRefund};
use engine::live::LiveEvent;
use engine::proposals::Proposer;
use engine::{Actor, Engine, EngineSettings};
use sea_orm::ConnectionTrait;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use storage::testing::TestDatabase;

// The allocator the server binary uses (server/src/main.rs), so the engine
// runs here as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU seconds this process has used (user + system), from /proc on Linux.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start at ") ".
    let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split(' ').collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CPU seconds the whole machine has spent busy (all cores), from /proc/stat.
fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
    let busy: f64 = fields.iter().take(8).sum::<f64>() - fields.get(3)? - fields.get(4)?;
    Some(busy / 100.0)
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    let concurrency = env_or("BENCH_CONCURRENCY", 32) as usize;
    let refunds = env_or("BENCH_REFUNDS", 4096) as usize;
    let raw_seconds = env_or("BENCH_RAW_SECONDS", 3);
    // Diagnostic only: statements per raw transaction (the target's measure is 1).
    let raw_statements = env_or("BENCH_RAW_STATEMENTS", 1);
    let test_db = TestDatabase::new().await;
    let db = test_db.db.clone();
    let backend = format!("{:?}", db.backend());

    // --- raw commit rate: single-row UPDATE transactions ---------------------
    let conn = db.conn();
    conn.execute_unprepared(
        "CREATE TABLE bench_counter (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)",
    )
    .await
    .unwrap();
    for id in 0..concurrency {
        conn.execute_unprepared(&format!("INSERT INTO bench_counter VALUES ({id}, 0)"))
            .await
            .unwrap();
    }
    let commits = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(raw_seconds);
    let started = Instant::now();
    let mut workers = Vec::new();
    for id in 0..concurrency {
        let (db, commits) = (db.clone(), commits.clone());
        workers.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                let tx = db.begin_write().await.unwrap();
                for _ in 0..raw_statements {
                    tx.execute_unprepared(&format!(
                        "UPDATE bench_counter SET n = n + 1 WHERE id = {id}"
                    ))
                    .await
                    .unwrap();
                }
                tx.commit().await.unwrap();
                commits.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    let raw_rate = commits.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();

    // --- refunds approved → verified ----------------------------------------
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
            // One customer asks for every refund of the run.
            submission_limit: engine::proposals::SubmissionLimit {
                max_per_window: u64::MAX,
                window: chrono::Duration::hours(1),
            },
            ..EngineSettings::default()
        },
    );
    // Approved refunds are sent by the work runner, as in the server.
    engine
        .work
        .runner(&engine::work::WorkSchedule {
            sweeps: false,
            ..engine::work::WorkSchedule::default()
        })
        .start()
        .await
        .unwrap();
    let actor = |name: &str| {
        let db = db.clone();
        let name = name.to_owned();
        async move {
            let user = storage::users::find_by_name(db.conn(), &name)
                .await
                .unwrap()
                .unwrap();
            Actor::from(user)
        }
    };
    let customer = actor("customer3").await;
    let approver = actor("approver").await;
    let now = engine::now();
    // The orders to refund, and as many earlier ones that were refunded
    // through another channel: a store that has been running has a refund
    // history.
    let tx = db.begin_write().await.unwrap();
    for n in 0..refunds {
        let mut earlier =
            engine::demo::delivered_cap_order(&format!("h{n}"), &customer.user_id, now);
        earlier.refunds.push(PastRefund {
            id: format!("hist_{n}"),
            amount: Money::new(2500, Currency::EUR),
            channel: "support desk".into(),
            reference: format!("ticket {n}"),
            created_at: now - chrono::Duration::days(1),
        });
        storage::orders::insert(&*tx, &earlier).await.unwrap();
        let order = engine::demo::delivered_cap_order(&format!("b{n}"), &customer.user_id, now);
        // The customer paid through the provider, which therefore knows the
        // charge that revalidation and verification read.
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
    let mut proposals = Vec::with_capacity(refunds);
    for n in 0..refunds {
        let stored = engine
            .proposals
            .submit(
                Proposer::Assistant {
                    agent: "bench",
                    sender: &customer,
                    customer_id: &customer.user_id,
                },
                engine::demo::whole_order_refund(&format!("b{n}")),
            )
            .await
            .unwrap();
        proposals.push((stored.proposal.id, stored.proposal.action_digest));
    }
    // A store that has been running has statistics on its tables
    // (autovacuum's ANALYZE, run here at once, after the last setup write):
    // without them PostgreSQL plans as if the tables were nearly empty, and
    // each connection's cached statements keep those plans, scanning
    // the order refunds for every batch and the journal's stream heads for
    // every append (README, refund throughput). SQLite's planner prefers
    // the indexes without statistics.
    if db.backend() == storage::Backend::Postgres {
        db.conn().execute_unprepared("ANALYZE").await.unwrap();
    }
    let mut verified_events = engine.live.subscribe();
    let proposals = Arc::new(proposals);
    let next = Arc::new(AtomicU64::new(0));
    let cpu_before = cpu_seconds();
    let machine_before = machine_busy_seconds();
    let writes_before = db.write_stats();
    // A mark for a profiler attached to the measured phase only.
    eprintln!("measuring refunds");
    let started = Instant::now();
    let waiter = tokio::spawn(async move {
        let mut verified = 0;
        while verified < refunds {
            match verified_events.recv().await {
                Ok(LiveEvent::Changed(change))
                    if change.status == ProposalStatus::Verified.as_str() =>
                {
                    verified += 1
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => break,
            }
        }
    });
    let mut approvers = Vec::new();
    for _ in 0..concurrency {
        let (engine, approver, proposals, next) = (
            engine.clone(),
            approver.clone(),
            proposals.clone(),
            next.clone(),
        );
        approvers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some((id, digest)) = proposals.get(i) else {
                    break;
                };
                engine
                    .approvals
                    .approve(&approver, id, digest)
                    .await
                    .unwrap();
            }
        }));
    }
    for a in approvers {
        a.await.unwrap();
    }
    tokio::time::timeout(Duration::from_secs(600), waiter)
        .await
        .unwrap()
        .unwrap();
    let elapsed = started.elapsed();
    let cpu_used = cpu_seconds()
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    let machine_used = machine_busy_seconds()
        .zip(machine_before)
        .map(|(after, before)| after - before);
    let refund_rate = refunds as f64 / elapsed.as_secs_f64();
    let ledger = sandbox.ledger();
    assert_eq!(
        ledger.total_refunds, refunds,
        "exactly one refund per proposal"
    );
    assert!(ledger.duplicated_keys.is_empty());
    let verified = storage::proposals::count(db.conn(), ProposalStatus::Verified)
        .await
        .unwrap();
    assert_eq!(verified as usize, refunds);

    println!("backend            {backend}");
    println!("concurrency        {concurrency}");
    println!(
        "raw commits/s      {raw_rate:.0}   ({raw_statements} single-row UPDATE(s) per transaction, {raw_seconds} s)"
    );
    println!(
        "refunds/s          {refund_rate:.0}   ({refunds} approved -> verified in {:.2} s)",
        elapsed.as_secs_f64()
    );
    if let Some(cpu) = cpu_used {
        println!(
            "cpu during refunds {:.2} cores busy (this process, incl. the sandbox; {:.2} ms CPU per refund)",
            cpu / elapsed.as_secs_f64(),
            cpu * 1000.0 / refunds as f64
        );
    }
    if let Some(busy) = machine_used {
        println!(
            "cpu, whole machine {:.2} of {} cores busy ({:.2} ms CPU per refund, the database server included)",
            busy / elapsed.as_secs_f64(),
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            busy * 1000.0 / refunds as f64
        );
    }
    let writes = db.write_stats();
    let (held, committing) = (
        writes.held - writes_before.held,
        writes.committing - writes_before.committing,
    );
    println!(
        "write transactions {} per refund; {:.2} open at once on average (commit {:.0}% of their time)",
        (writes.committed - writes_before.committed) as f64 / refunds as f64,
        held.as_secs_f64() / elapsed.as_secs_f64(),
        100.0 * committing.as_secs_f64() / held.as_secs_f64().max(f64::EPSILON),
    );
    println!("ratio              {:.3}", refund_rate / raw_rate);
}
