//! Benchmark: how long Stop takes to land, from the call to the turn's
//! transcript saved with everything of the conversation stopped. Each round
//! starts a turn whose model never answers and stops it once the call is
//! under way:
//!
//! - `model call`: Stop from this process (the turn's control is here);
//! - `model call + 3 queued`: the same with three messages waiting behind
//!   the turn, which Stop cancels in the same transaction;
//! - `from another replica`: Stop through a second engine on the same
//!   database, which flags the conversation row that the turn's claim
//!   watcher reads.
//!
//! ```sh
//! cargo run --release -p engine --example stop_latency   # TEST_DATABASE_URL=postgres://… for PostgreSQL
//! ```
//! Options (environment): BENCH_ROUNDS (200 per case), BENCH_WARMUP (10).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{env_or, percentile};

use agents::{ChatModel, ModelError, ModelRequest, ModelResponse};
use async_trait::async_trait;
use connectors::HttpTimeouts;
use connectors::sandbox::SandboxProvider;
use engine::assistant::{Assistant, Delivery, Priority, TurnControl};
use engine::{Actor, Engine, EngineSettings};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::testing::TestDatabase;
use tokio::sync::Notify;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A model that says when a call reached it and never answers.
struct Hanging {
    called: Arc<Notify>,
}

#[async_trait]
impl ChatModel for Hanging {
    fn name(&self) -> &str {
        "hanging"
    }

    async fn complete(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.called.notify_one();
        std::future::pending().await
    }
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let millis = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<24} n={:<4} median {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms",
        samples.len(),
        millis(percentile(&samples, 50.0)),
        millis(percentile(&samples, 99.0)),
        millis(*samples.last().unwrap()),
    );
}

async fn engine_on(test_db: &TestDatabase, called: &Arc<Notify>) -> Engine {
    let provider = SandboxProvider::new(
        "http://127.0.0.1:9",
        "sk_sbx_unused".into(),
        HttpTimeouts {
            connect: Duration::from_millis(100),
            request: Duration::from_millis(100),
        },
    )
    .unwrap();
    let policies = engine::policies::PolicyLibrary::load(test_db.db.clone())
        .await
        .unwrap();
    Engine::new(
        test_db.db.clone(),
        Arc::new(provider),
        policies,
        EngineSettings::default(),
    )
    .with_assistant(
        Assistant::new(Arc::new(Hanging {
            called: called.clone(),
        }))
        .unwrap(),
    )
}

/// One round: a turn in its model call, `queued` messages behind it, Stop
/// from `stopper`; the time from the Stop to the turn's saved end.
async fn round(
    engine: &Engine,
    stopper: &Engine,
    customer: &Actor,
    called: &Notify,
    queued: usize,
) -> Duration {
    let id = engine
        .chat
        .create_conversation(customer, None)
        .await
        .unwrap()
        .id;
    let turn = {
        let (engine, customer, id) = (engine.clone(), customer.clone(), id.clone());
        tokio::spawn(async move {
            engine
                .chat
                .chat_turn(
                    &customer,
                    &id,
                    "what is your refund policy?",
                    Priority::Later,
                    TurnControl::new(),
                )
                .await
        })
    };
    called.notified().await;
    for n in 0..queued {
        let sent = engine
            .chat
            .chat_turn(
                customer,
                &id,
                &format!("and one more thing ({n})"),
                Priority::Later,
                TurnControl::new(),
            )
            .await
            .unwrap();
        assert!(matches!(sent, Delivery::Queued(_)));
    }
    let started = Instant::now();
    let receipt = stopper.chat.stop_turn(customer, &id).await.unwrap();
    let ended = turn.await.unwrap().unwrap();
    let elapsed = started.elapsed();
    assert_eq!(receipt.cancelled_messages.len(), queued);
    assert!(ended.answered().is_some());
    elapsed
}

#[tokio::main]
async fn main() {
    let rounds = env_or("BENCH_ROUNDS", 200);
    let warmup = env_or("BENCH_WARMUP", 10);
    let test_db = TestDatabase::new().await;
    engine::demo::seed_demo(
        &test_db.db,
        "bench-password-1",
        engine::demo::ReferenceStyle::Sandbox,
        engine::now(),
    )
    .await
    .unwrap();
    let called = Arc::new(Notify::new());
    let engine = engine_on(&test_db, &called).await;
    // Another replica: its own engine (and its own running turns) on the
    // same database.
    let replica = engine_on(&test_db, &Arc::new(Notify::new())).await;
    let user = storage::users::find_by_name(engine.db.conn(), "customer")
        .await
        .unwrap()
        .unwrap();
    let customer = Actor::from(user);
    println!("Stop latency on {:?}", engine.db.backend());
    for (name, stopper, queued) in [
        ("model call", &engine, 0),
        ("model call + 3 queued", &engine, 3),
        ("from another replica", &replica, 0),
    ] {
        let mut samples = Vec::with_capacity(rounds);
        for n in 0..warmup + rounds {
            let took = round(&engine, stopper, &customer, &called, queued).await;
            if n >= warmup {
                samples.push(took);
            }
        }
        report(name, samples);
    }
}
