//! The turn loop: step bound, parallel calls, model failures, resuming.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents::{
    ConversationState, EventKind, HANDOFF_TOOL, ModelError, ModelResponse, Role, RunError, Runner,
    ScriptedModel, ToolCall, ToolOutcome, TurnControl, TurnOutcome, UserMessage, Workflow,
};
use common::{FakeTool, agent, outcomes, run_turn, run_turn_with, tool_results};
use serde_json::json;

#[tokio::test]
async fn the_step_bound_ends_a_looping_model_cleanly() {
    let tool = FakeTool::new("search_policy", ToolOutcome::not_found("x"));
    let workflow = Workflow::new(vec![agent("a", vec![tool.clone()], &[])], "a").unwrap();
    // A model that never stops calling the tool.
    let model = Arc::new(ScriptedModel::from_fn(|request| {
        Ok(ModelResponse::calls(vec![ToolCall::new(
            format!("c{}", request.messages.len()),
            "search_policy",
            json!({}),
        )]))
    }));
    let runner = Runner::new(model.clone()).with_max_steps(3);

    let ran = run_turn(&runner, &workflow, "loop").await;

    assert_eq!(
        ran.result.unwrap(),
        TurnOutcome::StepLimit {
            agent: "a".into(),
            steps: 3
        }
    );
    assert_eq!(model.requests().len(), 3);
    assert_eq!(tool.calls().len(), 3);
    let last = ran.state.messages().last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert!(last.tool_calls.is_empty());
    assert!(last.content.contains("within 3 steps"));
    assert!(
        ran.sink
            .kinds()
            .contains(&EventKind::StepLimitReached { steps: 3 })
    );
}

#[tokio::test]
async fn parallel_tool_calls_run_concurrently_and_results_appear_in_call_order() {
    // The first call is the slowest, so completion order is the reverse of
    // call order.
    let slow = FakeTool::slow(
        "a_slow",
        ToolOutcome::not_found("slow"),
        Duration::from_millis(300),
    );
    let medium = FakeTool::slow(
        "b_medium",
        ToolOutcome::not_found("medium"),
        Duration::from_millis(150),
    );
    let fast = FakeTool::new("c_fast", ToolOutcome::not_found("fast"));
    let workflow = Workflow::new(vec![agent("a", vec![slow, medium, fast], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![
            ToolCall::new("1", "a_slow", json!({})),
            ToolCall::new("2", "b_medium", json!({})),
            ToolCall::new("3", "c_fast", json!({})),
        ]),
        ModelResponse::text("done"),
    ]));

    let started = Instant::now();
    let ran = run_turn(&Runner::new(model), &workflow, "go").await;
    let elapsed = started.elapsed();

    ran.result.unwrap();
    assert!(
        elapsed < Duration::from_millis(420),
        "ran one by one: {elapsed:?}"
    );
    let ids: Vec<_> = ran
        .state
        .messages()
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(ids, ["1", "2", "3"]);
    let whats: Vec<_> = tool_results(ran.state.messages())
        .iter()
        .map(|r| r["what"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(whats, ["slow", "medium", "fast"]);
}

#[tokio::test]
async fn repeated_or_missing_call_ids_are_made_unique_so_results_still_match() {
    let tool = FakeTool::new("t", ToolOutcome::not_found("x"));
    let workflow = Workflow::new(vec![agent("a", vec![tool], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![
            ToolCall::new("call_0", "t", json!({})),
            ToolCall::new("call_0", "t", json!({})),
            ToolCall::new("", "t", json!({})),
        ]),
        ModelResponse::text("done"),
    ]));
    let ran = run_turn(&Runner::new(model), &workflow, "go").await;

    ran.result.unwrap();
    assert_eq!(tool_results(ran.state.messages()).len(), 3);
}

#[tokio::test]
async fn a_model_failure_ends_the_turn_with_an_error_and_a_consistent_transcript() {
    let tool = FakeTool::new("t", ToolOutcome::not_found("x"));
    let workflow = Workflow::new(vec![agent("a", vec![tool], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::with_results([
        Ok(ModelResponse::calls(vec![ToolCall::new(
            "1",
            "t",
            json!({}),
        )])),
        Err(ModelError::Server {
            status: 503,
            message: "overloaded".into(),
        }),
    ]));

    let ran = run_turn(&Runner::new(model), &workflow, "go").await;

    assert!(matches!(
        ran.result,
        Err(RunError::Model {
            step: 2,
            source: ModelError::Server { status: 503, .. },
            ..
        })
    ));
    assert_eq!(outcomes(&tool_results(ran.state.messages())), ["not_found"]);
    assert!(ran.sink.kinds().iter().any(|k| matches!(
        k,
        EventKind::ModelCallFailed { error_kind, .. } if error_kind == "server_error"
    )));
}

#[tokio::test]
async fn a_stored_conversation_resumes_with_the_agent_that_holds_it() {
    let workflow = Workflow::new(
        vec![
            agent("coordinator", vec![], &["refund_specialist"]),
            agent("refund_specialist", vec![], &["coordinator"]),
        ],
        "coordinator",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![ToolCall::new(
            "h1",
            HANDOFF_TOOL,
            json!({ "to": "refund_specialist", "reason": "refund" }),
        )]),
        ModelResponse::text("Was the parcel opened?"),
        ModelResponse::text("Thanks, noted."),
    ]));
    let runner = Runner::new(model.clone());
    let first = run_turn(&runner, &workflow, "refund 4821").await;

    let stored = serde_json::to_string(&first.state).unwrap();
    let restored = serde_json::from_str(&stored).unwrap();
    let second = run_turn_with(&runner, &workflow, restored, "no", &TurnControl::new()).await;

    assert_eq!(second.result.unwrap().agent(), "refund_specialist");
    assert_eq!(model.requests()[2].agent, "refund_specialist");
    assert_eq!(second.state.turns(), 2);
    assert!(second.sink.events().iter().all(|e| e.turn == 2));
}

#[tokio::test]
async fn a_state_held_by_an_agent_the_workflow_lacks_is_an_error_and_left_untouched() {
    let workflow = Workflow::new(vec![agent("a", vec![], &[])], "a").unwrap();
    let other = Workflow::new(
        vec![agent("b", vec![], &["c"]), agent("c", vec![], &[])],
        "b",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![ToolCall::new(
            "h",
            HANDOFF_TOOL,
            json!({ "to": "c", "reason": "r" }),
        )]),
        ModelResponse::text("c here"),
    ]));
    let runner = Runner::new(model);
    let held_by_c = run_turn(&runner, &other, "hi").await.state;
    let before = held_by_c.clone();

    let ran = run_turn_with(&runner, &workflow, held_by_c, "again", &TurnControl::new()).await;

    assert_eq!(
        ran.result,
        Err(RunError::UnknownActiveAgent { agent: "c".into() })
    );
    assert_eq!(ran.state, before);
}

#[tokio::test]
async fn a_customer_message_lands_where_the_application_was_told_and_keeps_when_it_was_sent() {
    // What an interrupted older turn left: a call without a result, and
    // (another one) a customer message no reply answers. The turn closes
    // both before the new message, and the application, which refers to the
    // message by its position, must know where it lands before it does.
    let dangling: ConversationState = serde_json::from_value(json!({
        "messages": [
            { "role": "user", "content": "check 4821" },
            { "role": "assistant", "agent": "a", "content": "",
              "tool_calls": [{ "id": "c1", "name": "t", "arguments": {} }] },
        ],
        "active_agent": "a", "turns": 1,
    }))
    .unwrap();
    let unanswered: ConversationState = serde_json::from_value(json!({
        "messages": [{ "role": "user", "content": "hello" }],
        "active_agent": "a", "turns": 1,
    }))
    .unwrap();
    let workflow = Workflow::new(vec![agent("a", vec![], &[])], "a").unwrap();
    for stored in [dangling, unanswered, ConversationState::new()] {
        let expected = stored.next_user_message_index();
        let sent_at = chrono::DateTime::parse_from_rfc3339("2026-12-01T18:00:00Z")
            .unwrap()
            .to_utc();
        let model = Arc::new(ScriptedModel::new([ModelResponse::text("ok")]));
        let runner = Runner::new(model);
        let mut state = stored;
        runner
            .run_turn(
                &workflow,
                &mut state,
                UserMessage::new("no, still sealed", sent_at),
                &common::ctx(),
                &TurnControl::new(),
                &agents::NoopSink,
            )
            .await
            .unwrap();
        let message = &state.messages()[expected];
        assert_eq!(message.role, Role::User);
        assert_eq!(message.content, "no, still sealed");
        assert_eq!(message.at, Some(sent_at));
    }
}
