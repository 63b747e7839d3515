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
//!   watcher reads;
//! - `4 subagents`: the turn waits on four order investigators (subagents),
//!   each in its model call; the clock stops when the turn has saved, which
//!   it does only after every investigator has ended.
//! - `sign-in wait`: a visitor who has not signed in asks where their
//!   refund is; the specialist (offline rules) waits inside the turn for
//!   them to sign in, and Stop ends the wait.
//! - `browser step`: customer2 asks to return order 4824, which the records
//!   show as shipped; the specialist reads the sandbox carrier's page in
//!   headless Chromium (the exclusive browser lane), the page is held, and
//!   Stop lands while the browser waits for it (needs Debian's Chromium).
//!
//! ```sh
//! cargo run --release -p engine --example stop_latency   # TEST_DATABASE_URL=postgres://… for PostgreSQL
//! ```
//! Options (environment): BENCH_ROUNDS (200 per case), BENCH_WARMUP (10),
//! BENCH_BROWSER_ROUNDS (50: each round starts a browser).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{env_or, percentile};

use agents::{ChatModel, ModelError, ModelRequest, ModelResponse, ToolCall};
use async_trait::async_trait;
use connectors::HttpTimeouts;
use connectors::sandbox::SandboxProvider;
use engine::assistant::{Assistant, Delivery, Priority, TurnControl};
use engine::{Actor, Engine, EngineSettings};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use storage::testing::TestDatabase;
use tokio::sync::Notify;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A model that never answers: the turn's own call, or (with
/// `investigators`) each order investigator's after the specialist started
/// them. It says when the calls it waits for have reached it.
struct Hanging {
    called: Arc<Notify>,
    investigators: usize,
    in_call: AtomicUsize,
}

const ORDERS: [&str; 4] = ["4821", "4823", "4822", "4824"];

#[async_trait]
impl ChatModel for Hanging {
    fn name(&self) -> &str {
        "hanging"
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.investigators > 0 {
            match request.agent.as_str() {
                "coordinator" => {
                    return Ok(ModelResponse::calls(vec![ToolCall::new(
                        "h",
                        "handoff",
                        json!({ "to": "refund_specialist", "reason": "refunds" }),
                    )]));
                }
                "refund_specialist" => {
                    return Ok(ModelResponse::calls(vec![ToolCall::new(
                        "inv",
                        "investigate_orders",
                        json!({ "order_ids": ORDERS }),
                    )]));
                }
                _ => {
                    let reached = self.in_call.fetch_add(1, Ordering::SeqCst) + 1;
                    if reached.is_multiple_of(self.investigators) {
                        self.called.notify_one();
                    }
                    return std::future::pending().await;
                }
            }
        }
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

async fn engine_on(test_db: &TestDatabase, called: &Arc<Notify>, investigators: usize) -> Engine {
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
            investigators,
            in_call: AtomicUsize::new(0),
        }))
        .unwrap()
        .with_subagent_limit(investigators.max(1)),
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
    assert!(engine.chat.assistant().running().subagents(&id).is_empty());
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
    let engine = engine_on(&test_db, &called, 0).await;
    // Another replica: its own engine (and its own running turns) on the
    // same database.
    let replica = engine_on(&test_db, &Arc::new(Notify::new()), 0).await;
    let all_in_call = Arc::new(Notify::new());
    let with_subagents = engine_on(&test_db, &all_in_call, ORDERS.len()).await;
    let user = storage::users::find_by_name(engine.db.conn(), "customer")
        .await
        .unwrap()
        .unwrap();
    let customer = Actor::from(user);
    println!("Stop latency on {:?}", engine.db.backend());
    for (name, runs, stopper, called, queued) in [
        ("model call", &engine, &engine, &called, 0),
        ("model call + 3 queued", &engine, &engine, &called, 3),
        ("from another replica", &engine, &replica, &called, 0),
        (
            "4 subagents",
            &with_subagents,
            &with_subagents,
            &all_in_call,
            0,
        ),
    ] {
        let mut samples = Vec::with_capacity(rounds);
        for n in 0..warmup + rounds {
            let took = round(runs, stopper, &customer, called, queued).await;
            if n >= warmup {
                samples.push(took);
            }
        }
        report(name, samples);
    }
    let offline = engine_on(&test_db, &Arc::new(Notify::new()), 0)
        .await
        .with_assistant(Assistant::offline());
    let mut samples = Vec::with_capacity(rounds);
    for n in 0..warmup + rounds {
        let took = sign_in_round(&offline, n).await;
        if n >= warmup {
            samples.push(took);
        }
    }
    report("sign-in wait", samples);

    let carrier = connectors::carrier_sandbox::CarrierSandbox::new(engine::demo::carrier_parcels(
        engine::now(),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tracking_url = format!(
        "http://{}/track/{{tracking_number}}",
        listener.local_addr().unwrap()
    );
    tokio::spawn(connectors::carrier_sandbox::serve_standalone(
        listener,
        carrier.clone(),
    ));
    carrier.hold();
    let browsing = engine_on(&test_db, &Arc::new(Notify::new()), 0)
        .await
        .with_assistant(
            Assistant::for_team(
                Arc::new(engine::assistant::OfflineRules::new()),
                engine::assistant::team::TeamOptions {
                    carrier: true,
                    ..Default::default()
                },
            )
            .unwrap(),
        )
        .with_carrier(engine::CarrierParts {
            carrier: connectors::carrier_sandbox::SANDBOX_CARRIER.to_owned(),
            browser: connectors::browser::DEBIAN_CHROMIUM.into(),
            timeout: Duration::from_secs(30),
            tracking_url,
        });
    let customer2 = Actor::from(
        storage::users::find_by_name(engine.db.conn(), "customer2")
            .await
            .unwrap()
            .unwrap(),
    );
    let browser_rounds = env_or("BENCH_BROWSER_ROUNDS", 50);
    let mut samples = Vec::with_capacity(browser_rounds);
    for n in 0..warmup.min(3) + browser_rounds {
        let took = browser_round(&browsing, &customer2, &carrier).await;
        if n >= warmup.min(3) {
            samples.push(took);
        }
    }
    report("browser step", samples);
}

/// One round: a turn whose browser waits for the held carrier page, then
/// Stop; the time from the Stop to the turn's saved end.
async fn browser_round(
    engine: &Engine,
    customer: &Actor,
    carrier: &connectors::carrier_sandbox::CarrierSandbox,
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
                    "I want to return order 4824",
                    Priority::Later,
                    TurnControl::new(),
                )
                .await
        })
    };
    carrier.answering(1).await;
    let started = Instant::now();
    let receipt = engine.chat.stop_turn(customer, &id).await.unwrap();
    let ended = turn.await.unwrap().unwrap();
    let elapsed = started.elapsed();
    assert!(receipt.turn_stopping);
    assert!(matches!(
        ended.answered().map(|result| result.end),
        Some(engine::assistant::TurnEnd::Stopped { .. })
    ));
    // The next round waits for its own page, not this one's.
    carrier.idle().await;
    elapsed
}

/// One round: a visitor's turn waiting for them to sign in, then Stop; the
/// time from the Stop to the turn's saved end.
async fn sign_in_round(engine: &Engine, n: usize) -> Duration {
    let visitor = Actor::guest(&format!("gst_bench_{n}"));
    let mut changes = engine.live.subscribe();
    let id = engine
        .chat
        .create_conversation(&visitor, None)
        .await
        .unwrap()
        .id;
    let turn = {
        let (engine, visitor, id) = (engine.clone(), visitor.clone(), id.clone());
        tokio::spawn(async move {
            engine
                .chat
                .chat_turn(
                    &visitor,
                    &id,
                    "where is my refund?",
                    Priority::Later,
                    TurnControl::new(),
                )
                .await
        })
    };
    // The wait is announced on the conversation's live updates.
    while !engine
        .chat
        .conversation(&visitor, &id)
        .await
        .unwrap()
        .waiting_for_sign_in
    {
        let _ = changes.recv().await;
    }
    let started = Instant::now();
    let receipt = engine.chat.stop_turn(&visitor, &id).await.unwrap();
    let ended = turn.await.unwrap().unwrap();
    let elapsed = started.elapsed();
    assert!(receipt.turn_stopping);
    assert!(matches!(
        ended.answered().map(|result| result.end),
        Some(engine::assistant::TurnEnd::Stopped { .. })
    ));
    elapsed
}
