//! Benchmark: tasks between two agent groups on one machine.
//!
//! Two real servers (the same router and runner as `countersign serve`),
//! `support` and `returns`, each on a test database of its own, trusting
//! each other as `scripts/run.sh --groups` sets them up. The support group
//! sends `returns.inspection` tasks through its outbox; the returns group
//! admits each, answers it on its gateway lane and signs the answer; the
//! support group's relay follows it and verifies the answer.
//!
//! Printed:
//! - the round trip, one task at a time: `send` to a verified result
//!   (sign, outbox, relay, verify, inbox, answer, sign, look, verify), p50
//!   and p99;
//! - what one hop adds, one at a time: signing and writing the task to the
//!   outbox (`Sender::send`), and the receiving group's `SendMessage`
//!   (verify the chain, write the inbox) called directly over HTTP;
//! - throughput: `BENCH_TASKS` tasks sent by `BENCH_CONCURRENCY` senders at
//!   once, tasks/s from the first send to the last verified answer.
//!
//! ```sh
//! cargo run --release -p server --example gateway_hops                  # SQLite
//! TEST_DATABASE_URL=postgres://countersign:countersign@127.0.0.1:5432/countersign \
//!   cargo run --release -p server --example gateway_hops                # PostgreSQL
//! ```
//! Options (environment): BENCH_ROUNDS (300), BENCH_TASKS (2000),
//! BENCH_CONCURRENCY (32).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use engine::gateway::{OutboundTask, Sender};
use gateway::{Budget, GroupName, TaskKind};
use serde_json::json;
use server::config::Settings;
use server::startup::Application;
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::gateway::{peers, trust};
use storage::testing::TestDatabase;

// The allocator `countersign serve` runs with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Group {
    engine: engine::Engine,
    db: storage::Database,
    base: String,
    _database: TestDatabase,
}

async fn group(name: &str) -> Group {
    let database = TestDatabase::new().await;
    engine::demo::seed_demo(
        &database.db,
        "bench-password",
        engine::demo::ReferenceStyle::Sandbox,
        engine::now(),
    )
    .await
    .unwrap();
    engine::demo::seed_returned_parcels(&database.db, engine::now())
        .await
        .unwrap();
    let settings = Arc::new(Settings {
        listen: "127.0.0.1:0".parse().unwrap(),
        database_url: database.url.clone(),
        seed_demo: Some(false),
        gateway_group: Some(name.to_owned()),
        gateway_master_key: Some(gateway::MasterKey::generate().into()),
        ..Settings::default()
    });
    let app = Application::build(settings, database.db.clone())
        .await
        .unwrap();
    let base = format!("http://{}", app.local_addr().unwrap());
    let engine = app.engine().clone();
    tokio::spawn(async move { app.run_until(std::future::pending()).await.unwrap() });
    Group {
        engine,
        db: database.db.clone(),
        base,
        _database: database,
    }
}

/// `at` pins the published keys of `of`; returns the first signing key's
/// public half for the direct hop measurement.
async fn pin_keys(at: &Group, of: &Group) {
    let keys = of
        .engine
        .gateway
        .as_ref()
        .unwrap()
        .own_keys
        .clone()
        .unwrap();
    for (key, pinned) in keys.published().await.unwrap() {
        trust::pin_key(
            at.db.conn(),
            trust::PinnedKeyRow {
                group_name: key.group.to_string(),
                key_id: key.key_id.to_string(),
                version: i32::try_from(key.version).unwrap(),
                public_key: URL_SAFE_NO_PAD.encode(pinned.public_key),
                valid_from: pinned.valid_from,
                usable_until: pinned.usable_until,
                pinned_by: "bench".into(),
                pinned_at: Utc::now(),
            },
        )
        .await
        .unwrap();
    }
}

fn inspection(order_id: &str) -> OutboundTask {
    OutboundTask {
        to: GroupName::parse("returns").unwrap(),
        kind: TaskKind::parse(engine::gateway::RETURNS_INSPECTION).unwrap(),
        input: json!({ "order_id": order_id }),
        budget: Budget {
            model_calls: 0,
            steps: 4,
            tokens: 0,
            money: None,
            deadline: Utc::now() + chrono::Duration::minutes(10),
        },
        subject: None,
    }
}

async fn round_trip(sender: &Sender, order_id: &str) -> Duration {
    let started = Instant::now();
    let sent = sender.send(inspection(order_id)).await.unwrap();
    let task = sender
        .wait_for(&sent.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(task.state, "completed", "{task:?}");
    started.elapsed()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let rank = ((samples.len() as f64) * p).ceil() as usize;
    samples[rank.clamp(1, samples.len()) - 1]
}

fn report(what: &str, samples: &mut [Duration]) {
    println!(
        "{what:<52} p50 {:>8.2} ms   p99 {:>8.2} ms   ({} samples)",
        percentile(samples, 0.50).as_secs_f64() * 1000.0,
        percentile(samples, 0.99).as_secs_f64() * 1000.0,
        samples.len()
    );
}

#[tokio::main]
async fn main() {
    let rounds = env_or("BENCH_ROUNDS", 300);
    let tasks = env_or("BENCH_TASKS", 2000);
    let concurrency = env_or("BENCH_CONCURRENCY", 32);
    let store = if std::env::var("TEST_DATABASE_URL").is_ok() {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    let support = group("support").await;
    let returns = group("returns").await;
    pin_keys(&returns, &support).await;
    pin_keys(&support, &returns).await;
    trust::allow_pair(
        returns.db.conn(),
        trust::PairRow {
            from_group: "support".into(),
            to_group: "returns".into(),
            kind: "returns.inspection".into(),
            allowed_by: "bench".into(),
            allowed_at: Utc::now(),
        },
    )
    .await
    .unwrap();
    peers::set(
        support.db.conn(),
        peers::Peer {
            group_name: "returns".into(),
            url: format!("{}/a2a", returns.base),
            updated_by: "bench".into(),
            updated_at: Utc::now(),
        },
    )
    .await
    .unwrap();
    let sender = support
        .engine
        .gateway
        .as_ref()
        .unwrap()
        .sender
        .clone()
        .unwrap();
    println!("gateway hops on {store}: {rounds} rounds, {tasks} tasks at {concurrency}");

    for _ in 0..20 {
        round_trip(&sender, "4821").await;
    }
    let mut trips = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        trips.push(round_trip(&sender, "4821").await);
    }
    report("round trip (send → verified signed answer)", &mut trips);

    // One hop's parts. Signing and the outbox: `send` alone (its relay runs
    // after, off the clock).
    let mut outbox = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        sender.send(inspection("4822")).await.unwrap();
        outbox.push(started.elapsed());
    }
    report(
        "  sender: sign + outbox (task, event, relay item)",
        &mut outbox,
    );
    // The receiver: SendMessage with a fresh signed envelope each time.
    let keys = support
        .engine
        .gateway
        .as_ref()
        .unwrap()
        .own_keys
        .clone()
        .unwrap();
    let signer = keys.current().await.unwrap();
    let client = reqwest::Client::new();
    let mut inbox = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let envelope = gateway::build::root(gateway::build::NewTask {
            task_key: gateway::TaskKey::parse(&storage::ids::new_id("bench")).unwrap(),
            kind: TaskKind::parse("returns.inspection").unwrap(),
            input: json!({ "order_id": "4830" }),
            to: GroupName::parse("returns").unwrap(),
            budget: inspection("4830").budget,
            signer: signer.clone(),
            created: Utc::now(),
        })
        .unwrap();
        let signed = gateway::SignedEnvelope {
            signature: keys
                .detached(gateway::jws::envelope_to_sign(&envelope))
                .await
                .unwrap(),
            envelope,
        };
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": { "message": {
                "messageId": "m", "role": "ROLE_USER", "parts": [{ "text": "task" }],
                "metadata": { gateway::EXTENSION: signed }
            } }
        });
        let started = Instant::now();
        let answer: serde_json::Value = client
            .post(format!("{}/a2a", returns.base))
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        inbox.push(started.elapsed());
        assert!(answer["result"]["task"]["id"].is_string(), "{answer}");
    }
    report(
        "  receiver: SendMessage (verify + inbox), over HTTP",
        &mut inbox,
    );

    // Throughput: many senders at once.
    let started = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (sender, next) = (sender.clone(), next.clone());
        workers.push(tokio::spawn(async move {
            while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < tasks {
                round_trip(&sender, "4821").await;
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    let elapsed = started.elapsed();
    println!(
        "throughput: {tasks} tasks in {:.2} s = {:.0} tasks/s (each sent, delivered, answered, signed, verified)",
        elapsed.as_secs_f64(),
        tasks as f64 / elapsed.as_secs_f64()
    );
}
