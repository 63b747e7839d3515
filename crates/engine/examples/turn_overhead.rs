//! Benchmark: the runtime's overhead per flagship chat turn, model latency
//! excluded. A zero-latency scripted model plays the model's part of the
//! brief's flow; everything else is real: the agent runtime (handoff checks,
//! tool dispatch, event recording), the tools (order read, tantivy policy
//! search, the proposal use case), and the conversation's claim, load and
//! save on a SQLite file (or PostgreSQL with TEST_DATABASE_URL).
//!
//! Turn 1: "check order 4821 and refund it if it qualifies" → handoff,
//! get_order, search_policy, record_unknown, reply (5 model calls, 4 tools).
//! Turn 2: "no, still sealed" → prepare_refund (stores a proposal), reply.
//!
//! ```sh
//! cargo run --release -p engine --example turn_overhead
//! ```
//! Options (environment): BENCH_CONVERSATIONS (300), BENCH_WARMUP (20).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{env_or, percentile};

use agents::{ChatModel, ModelError, ModelRequest, ModelResponse, Role, ToolCall};
use async_trait::async_trait;
use connectors::HttpTimeouts;
use connectors::sandbox::SandboxProvider;
use engine::assistant::{Assistant, TurnControl};
use engine::{Actor, Engine, EngineSettings};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::testing::TestDatabase;

// The allocator the server binary uses (server/src/main.rs), so the engine
// runs here as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Answers instantly from the flagship script, by position in the turn.
struct Flagship;

#[async_trait]
impl ChatModel for Flagship {
    fn name(&self) -> &str {
        "scripted-flagship"
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let messages = &request.messages;
        let turn = messages.iter().filter(|m| m.role == Role::User).count();
        let start = messages.iter().rposition(|m| m.role == Role::User).unwrap();
        let step = messages[start..]
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        let id = format!("c{turn}_{step}");
        let call =
            |name: &str, args| Ok(ModelResponse::calls(vec![ToolCall::new(&id, name, args)]));
        match (turn, step) {
            (1, 0) => call(
                "handoff",
                json!({"to": "refund_specialist", "reason": "refund request"}),
            ),
            (1, 1) => call("get_order", json!({"order_id": "4821"})),
            (1, 2) => call(
                "search_policy",
                json!({"query": "return unopened items within 30 days"}),
            ),
            (1, 3) => call(
                "record_unknown",
                json!({"question": "Was the item opened?", "order_id": "4821"}),
            ),
            (1, _) => Ok(ModelResponse::text(
                "Delivered 12 days ago. Was the item opened?",
            )),
            (2, 0) => call(
                "prepare_refund",
                json!({
                    "order_id": "4821",
                    "policy_references": ["returns-policy:section-3"],
                    "recommendation": "Unopened, delivered 12 days ago: refund in full under section 3."
                }),
            ),
            _ => Ok(ModelResponse::text("Prepared; waiting for approval.")),
        }
    }
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    println!(
        "{name:<34} n={:<5} median {:>8.0} µs   p99 {:>8.0} µs   mean {:>8.0} µs   max {:>8.0} µs",
        samples.len(),
        micros(percentile(&samples, 50.0)),
        micros(percentile(&samples, 99.0)),
        micros(mean),
        micros(*samples.last().unwrap()),
    );
}

#[tokio::main]
async fn main() {
    let conversations = env_or("BENCH_CONVERSATIONS", 300);
    let warmup = env_or("BENCH_WARMUP", 20);
    let test_db = TestDatabase::new().await;
    engine::demo::seed_demo(
        &test_db.db,
        "bench-password-1",
        engine::demo::ReferenceStyle::Sandbox,
        engine::now(),
    )
    .await
    .unwrap();
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
    let engine = Engine::new(
        test_db.db.clone(),
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
    )
    .with_assistant(Assistant::new(Arc::new(Flagship)).unwrap());
    let user = storage::users::find_by_name(engine.db.conn(), "customer")
        .await
        .unwrap()
        .unwrap();
    let customer = Actor::from(user);
    let approver = storage::users::find_by_name(engine.db.conn(), "approver")
        .await
        .unwrap()
        .unwrap();
    let approver = Actor {
        user_id: approver.id,
        name: approver.name,
        roles: approver.roles,
        widget_session: None,
    };

    let (mut first, mut second, mut both) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..warmup + conversations {
        let id = engine
            .chat
            .create_conversation(&customer, None)
            .await
            .unwrap()
            .id;
        let started = Instant::now();
        let asked = engine
            .chat
            .chat_turn(
                &customer,
                &id,
                "check order 4821 and refund it if it qualifies",
                engine::assistant::Priority::Later,
                TurnControl::new(),
            )
            .await
            .unwrap()
            .answered()
            .expect("no turn was running");
        let middle = Instant::now();
        let proposed = engine
            .chat
            .chat_turn(
                &customer,
                &id,
                "no, still sealed",
                engine::assistant::Priority::Later,
                TurnControl::new(),
            )
            .await
            .unwrap()
            .answered()
            .expect("no turn was running");
        let done = Instant::now();
        assert_eq!(asked.questions.len(), 1);
        // One live proposal per order: the round's proposal is rejected
        // (outside the timing) so the next round's turn prepares its own.
        let proposal_id = proposed.proposal_id.expect("turn 2 prepares the refund");
        engine
            .approvals
            .reject(&approver, &proposal_id, "benchmark round over")
            .await
            .unwrap();
        if round >= warmup {
            first.push(middle - started);
            second.push(done - middle);
            both.push(done - started);
        }
    }
    println!(
        "flagship chat turns on {:?}, model latency excluded (zero-latency scripted model)",
        engine.db.backend()
    );
    report("turn 1 (handoff + 3 tools + ask)", first);
    report("turn 2 (prepare_refund → proposal)", second);
    report("both turns", both);
}
