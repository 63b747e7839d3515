//! Helpers shared by the runtime tests: a configurable tool, a customer
//! principal, and a one-call way to run a turn.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod openai;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents::{
    Agent, ConversationState, EventKind, MemorySink, Message, ModelRequest, Principal, Role,
    RunError, Runner, Tool, ToolContext, ToolOutcome, TurnControl, TurnOutcome, Workflow,
};
use async_trait::async_trait;
use serde_json::{Value, json};

/// What a [`FakeTool`] saw on one call.
#[derive(Debug, Clone)]
pub struct SeenCall {
    pub principal: Principal,
    pub agent: Option<String>,
    pub call_id: Option<String>,
    pub args: Value,
}

/// A tool that waits `delay`, then answers with a fixed outcome, and keeps
/// what it was called with.
pub struct FakeTool {
    name: String,
    outcome: ToolOutcome,
    delay: Duration,
    panics: bool,
    pub seen: Mutex<Vec<SeenCall>>,
}

impl FakeTool {
    pub fn new(name: &str, outcome: ToolOutcome) -> Arc<Self> {
        Arc::new(Self::plain(name, outcome))
    }

    pub fn slow(name: &str, outcome: ToolOutcome, delay: Duration) -> Arc<Self> {
        Arc::new(Self {
            delay,
            ..Self::plain(name, outcome)
        })
    }

    pub fn panicking(name: &str) -> Arc<Self> {
        Arc::new(Self {
            panics: true,
            ..Self::plain(name, ToolOutcome::unknown("unreachable"))
        })
    }

    fn plain(name: &str, outcome: ToolOutcome) -> Self {
        Self {
            name: name.to_owned(),
            outcome,
            delay: Duration::ZERO,
            panics: false,
            seen: Mutex::new(Vec::new()),
        }
    }

    pub fn calls(&self) -> Vec<SeenCall> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait]
impl Tool for FakeTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "A test tool."
    }

    fn parameters(&self) -> Value {
        json!({ "type": "object", "properties": { "order_id": { "type": "string" } } })
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> ToolOutcome {
        self.seen.lock().unwrap().push(SeenCall {
            principal: ctx.principal().clone(),
            agent: ctx.agent().map(str::to_owned),
            call_id: ctx.call_id().map(str::to_owned),
            args,
        });
        assert!(!self.panics, "the fake tool was told to panic");
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        self.outcome.clone()
    }
}

pub fn customer() -> Principal {
    Principal {
        user_id: "user-7".to_owned(),
        roles: vec!["customer".to_owned()],
        customer_id: Some("cust-42".to_owned()),
    }
}

pub fn ctx() -> ToolContext {
    ToolContext::new(customer())
}

/// An agent with a valid one-sentence description.
pub fn agent(name: &str, tools: Vec<Arc<dyn Tool>>, handoffs: &[&str]) -> Agent {
    let mut builder = Agent::builder(name)
        .description(format!("Handles what {name} is responsible for."))
        .instructions(format!("You are {name}."));
    for tool in tools {
        builder = builder.tool(tool);
    }
    for target in handoffs {
        builder = builder.can_handoff_to(*target);
    }
    builder.build().unwrap()
}

/// Everything one turn produced.
pub struct Ran {
    pub result: Result<TurnOutcome, RunError>,
    pub state: ConversationState,
    pub sink: MemorySink,
}

pub async fn run_turn(runner: &Runner, workflow: &Workflow, message: &str) -> Ran {
    run_turn_with(
        runner,
        workflow,
        ConversationState::new(),
        message,
        &TurnControl::new(),
    )
    .await
}

pub async fn run_turn_with(
    runner: &Runner,
    workflow: &Workflow,
    mut state: ConversationState,
    message: &str,
    control: &TurnControl,
) -> Ran {
    let sink = MemorySink::new();
    let result = runner
        .run_turn(workflow, &mut state, message, &ctx(), control, &sink)
        .await;
    state.check_consistency().unwrap();
    Ran {
        result,
        state,
        sink,
    }
}

/// The tool messages of a transcript, parsed as JSON.
pub fn tool_results(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.result_json().unwrap())
        .collect()
}

/// The tool messages the model was shown in `request`, parsed as JSON.
pub fn results_shown(request: &ModelRequest) -> Vec<Value> {
    tool_results(&request.messages)
}

/// `"outcome"` of each tool result.
pub fn outcomes(results: &[Value]) -> Vec<String> {
    results
        .iter()
        .map(|r| r["outcome"].as_str().unwrap().to_owned())
        .collect()
}

/// The `ToolCallFinished` events as (tool, outcome) pairs.
pub fn finished_calls(kinds: &[EventKind]) -> Vec<(String, String)> {
    kinds
        .iter()
        .filter_map(|kind| match kind {
            EventKind::ToolCallFinished { tool, outcome, .. } => {
                Some((tool.clone(), outcome.as_str().to_owned()))
            }
            _ => None,
        })
        .collect()
}
