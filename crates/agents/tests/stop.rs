//! Stop always lands, promptly, and leaves a consistent transcript.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents::{
    ConversationState, EventKind, ModelResponse, OutcomeKind, Role, Runner, ScriptedModel,
    StopPoint, ToolCall, ToolOutcome, TurnControl, TurnOutcome, Workflow,
};
use common::{FakeTool, agent, finished_calls, outcomes, run_turn_with, tool_results};
use serde_json::json;

fn stop_after(control: &TurnControl, delay: Duration) {
    let control = control.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        control.stop();
    });
}

#[tokio::test]
async fn stop_during_a_slow_model_call_ends_the_turn_quickly_with_a_consistent_transcript() {
    let workflow = Workflow::new(vec![agent("a", vec![], &[])], "a").unwrap();
    let model = Arc::new(
        ScriptedModel::new([ModelResponse::text("too late")]).with_delay(Duration::from_secs(10)),
    );
    let control = TurnControl::new();
    stop_after(&control, Duration::from_millis(50));

    let started = Instant::now();
    let ran = run_turn_with(
        &Runner::new(model),
        &workflow,
        ConversationState::new(),
        "hello",
        &control,
    )
    .await;

    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        ran.result.unwrap(),
        TurnOutcome::Stopped {
            agent: "a".into(),
            during: StopPoint::ModelCall
        }
    );
    let roles: Vec<Role> = ran.state.messages().iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);
    let kinds = ran.sink.kinds();
    assert!(kinds.iter().any(|k| matches!(
        k,
        EventKind::StopRequested {
            during: StopPoint::ModelCall,
            ..
        }
    )));
    assert!(kinds.iter().any(|k| matches!(
        k,
        EventKind::StopLanded { latency_ms: Some(ms), .. } if *ms < 2000
    )));
}

#[tokio::test]
async fn stop_during_a_slow_tool_call_synthesises_a_cancelled_result() {
    let fast = FakeTool::new("get_order", ToolOutcome::not_found("order"));
    let slow = FakeTool::slow(
        "search_policy",
        ToolOutcome::not_found("x"),
        Duration::from_secs(10),
    );
    let workflow = Workflow::new(vec![agent("a", vec![fast, slow], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::new([ModelResponse::calls(vec![
        ToolCall::new("c1", "get_order", json!({})),
        ToolCall::new("c2", "search_policy", json!({})),
    ])]));
    let control = TurnControl::new();
    stop_after(&control, Duration::from_millis(50));

    let started = Instant::now();
    let ran = run_turn_with(
        &Runner::new(model),
        &workflow,
        ConversationState::new(),
        "check",
        &control,
    )
    .await;

    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        ran.result.unwrap(),
        TurnOutcome::Stopped {
            agent: "a".into(),
            during: StopPoint::ToolCalls
        }
    );
    // The call that finished keeps its real result; the slow one is cancelled.
    let results = tool_results(ran.state.messages());
    assert_eq!(outcomes(&results), ["not_found", "cancelled"]);
    assert_eq!(results[1]["reason"], "cancelled by stop");
    let last = ran.state.messages().last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert_eq!(
        finished_calls(&ran.sink.kinds()),
        [
            ("get_order".to_owned(), "not_found".to_owned()),
            ("search_policy".to_owned(), "cancelled".to_owned()),
        ]
    );
    assert!(ran.sink.kinds().iter().any(|k| matches!(
        k,
        EventKind::StopLanded {
            cancelled_calls: 1,
            ..
        }
    )));
}

#[tokio::test]
async fn a_stop_requested_before_the_turn_lands_before_any_model_call() {
    let workflow = Workflow::new(vec![agent("a", vec![], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("never")]));
    let control = TurnControl::new();
    control.stop();

    let ran = run_turn_with(
        &Runner::new(model.clone()),
        &workflow,
        ConversationState::new(),
        "hi",
        &control,
    )
    .await;

    assert!(model.requests().is_empty());
    assert!(matches!(
        ran.result.unwrap(),
        TurnOutcome::Stopped {
            during: StopPoint::BetweenSteps,
            ..
        }
    ));
}

#[tokio::test]
async fn tool_calls_left_dangling_by_an_interrupted_turn_are_closed_before_the_next_one() {
    // A stored state from a process that died after the model asked for a tool.
    let state: ConversationState = serde_json::from_value(json!({
        "messages": [
            { "role": "user", "content": "check 4821" },
            { "role": "assistant", "agent": "a", "content": "",
              "tool_calls": [{ "id": "c1", "name": "get_order", "arguments": {} }] }
        ],
        "active_agent": "a",
        "turns": 1
    }))
    .unwrap();
    assert!(state.check_consistency().is_err());
    let workflow = Workflow::new(vec![agent("a", vec![], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("hello again")]));

    let ran = run_turn_with(
        &Runner::new(model.clone()),
        &workflow,
        state,
        "are you there?",
        &TurnControl::new(),
    )
    .await;

    ran.result.unwrap();
    let sent = &model.requests()[0].messages;
    assert_eq!(sent[2].outcome, Some(OutcomeKind::Cancelled));
    assert_eq!(sent[2].tool_call_id.as_deref(), Some("c1"));
    assert_eq!(ran.state.turns(), 2);
    assert!(ran.sink.kinds().iter().any(|k| matches!(
        k,
        EventKind::TranscriptRepaired {
            cancelled_calls: 1,
            ..
        }
    )));
}

/// A tool that says when it has started and then never answers.
struct Hangs {
    started: Arc<tokio::sync::Notify>,
}

#[async_trait::async_trait]
impl agents::Tool for Hangs {
    fn name(&self) -> &str {
        "hangs"
    }

    fn description(&self) -> &str {
        "Never answers."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({ "type": "object" })
    }

    async fn call(&self, _ctx: &agents::ToolContext, _args: serde_json::Value) -> ToolOutcome {
        self.started.notify_one();
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_preempted_turn_ends_at_its_tool_call_saying_a_newer_message_interrupted_it() {
    let started = Arc::new(tokio::sync::Notify::new());
    let hangs: Arc<dyn agents::Tool> = Arc::new(Hangs {
        started: started.clone(),
    });
    let workflow = Workflow::new(vec![agent("a", vec![hangs], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::new([ModelResponse::calls(vec![
        ToolCall::new("c1", "hangs", json!({})),
    ])]));
    let control = TurnControl::new();
    let preempt = {
        let control = control.clone();
        tokio::spawn(async move {
            started.notified().await;
            control.preempt();
        })
    };

    let ran = run_turn_with(
        &Runner::new(model),
        &workflow,
        ConversationState::new(),
        "hello",
        &control,
    )
    .await;
    preempt.await.unwrap();

    assert_eq!(
        ran.result.unwrap(),
        TurnOutcome::Stopped {
            agent: "a".into(),
            during: StopPoint::ToolCalls
        }
    );
    let results = tool_results(ran.state.messages());
    assert_eq!(results[0]["outcome"], "cancelled");
    assert_eq!(results[0]["reason"], "interrupted by a newer message");
}

#[tokio::test]
async fn a_preempt_ends_only_the_turn_while_a_stop_ends_the_turn_and_everything_it_started() {
    let turn = TurnControl::new();
    let started_by_turn = turn.child();
    turn.preempt();
    assert!(turn.is_stop_requested());
    assert!(turn.is_preempted());
    assert!(
        !started_by_turn.is_stop_requested(),
        "background work survives a preempt"
    );

    turn.stop();
    assert!(!turn.is_preempted(), "a stop after a preempt is a stop");
    assert_eq!(turn.cut_reason(), "cancelled by stop");
    tokio::time::timeout(Duration::from_secs(5), started_by_turn.stopped())
        .await
        .expect("a stop reaches what the turn started");

    // Stopping what a turn started leaves the turn running.
    let turn = TurnControl::new();
    let started_by_turn = turn.child();
    started_by_turn.stop();
    assert!(!turn.is_stop_requested());
}

/// A tool whose work takes a minute; it records whether it was cut off
/// (its future dropped) or ran to the end.
struct MinuteLong {
    started: Arc<tokio::sync::Notify>,
    cut_off: Arc<std::sync::atomic::AtomicBool>,
    finished: Arc<std::sync::atomic::AtomicBool>,
}

struct CutOff(Arc<std::sync::atomic::AtomicBool>);

impl Drop for CutOff {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl agents::Tool for MinuteLong {
    fn name(&self) -> &str {
        "minute_long"
    }

    fn description(&self) -> &str {
        "Takes a minute."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({ "type": "object" })
    }

    async fn call(&self, _ctx: &agents::ToolContext, _args: serde_json::Value) -> ToolOutcome {
        let cut_off = CutOff(self.cut_off.clone());
        self.started.notify_one();
        tokio::time::sleep(Duration::from_secs(60)).await;
        std::mem::forget(cut_off);
        self.finished
            .store(true, std::sync::atomic::Ordering::SeqCst);
        ToolOutcome::not_found("nothing")
    }
}

/// openai-agents-js#1521: a cancel that never reached the tools.
#[tokio::test]
async fn stop_during_a_60_second_tool_reaches_the_tool_itself_not_only_the_loop() {
    let started = Arc::new(tokio::sync::Notify::new());
    let tool = Arc::new(MinuteLong {
        started: started.clone(),
        cut_off: Arc::default(),
        finished: Arc::default(),
    });
    let workflow = Workflow::new(
        vec![agent("a", vec![tool.clone() as Arc<dyn agents::Tool>], &[])],
        "a",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([ModelResponse::calls(vec![
        ToolCall::new("c1", "minute_long", json!({})),
    ])]));
    let control = TurnControl::new();
    let stopper = {
        let control = control.clone();
        tokio::spawn(async move {
            started.notified().await;
            control.stop();
        })
    };
    let runner = Runner::new(model).with_config(agents::RunnerConfig {
        max_steps: 4,
        tool_timeout: None,
    });
    let ran = tokio::time::timeout(
        Duration::from_secs(30),
        run_turn_with(&runner, &workflow, ConversationState::new(), "go", &control),
    )
    .await
    .expect("Stop did not end the turn while the tool ran");
    stopper.await.unwrap();

    assert_eq!(
        ran.result.unwrap(),
        TurnOutcome::Stopped {
            agent: "a".into(),
            during: StopPoint::ToolCalls
        }
    );
    use std::sync::atomic::Ordering::SeqCst;
    assert!(
        tool.cut_off.load(SeqCst),
        "the tool's own work was cancelled"
    );
    assert!(!tool.finished.load(SeqCst));
    assert_eq!(
        tool_results(ran.state.messages())[0]["reason"],
        "cancelled by stop"
    );
}
