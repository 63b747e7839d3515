//! Handoffs are checked in code against `can_handoff_to`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use agents::{
    EventKind, HANDOFF_TOOL, ModelResponse, OutcomeKind, Runner, ScriptedModel, ToolCall,
    ToolOutcome, TurnOutcome, Workflow,
};
use common::{FakeTool, agent, outcomes, run_turn, tool_results};
use serde_json::json;

fn handoff(id: &str, to: &str) -> ToolCall {
    ToolCall::new(
        id,
        HANDOFF_TOOL,
        json!({ "to": to, "reason": "refund request" }),
    )
}

#[tokio::test]
async fn a_handoff_to_a_listed_agent_works_and_the_next_step_runs_as_that_agent() {
    let get_order = FakeTool::new("get_order", ToolOutcome::not_found("order 1"));
    let workflow = Workflow::new(
        vec![
            agent("coordinator", vec![], &["refund_specialist"]),
            agent("refund_specialist", vec![get_order], &["coordinator"]),
        ],
        "coordinator",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![handoff("h1", "refund_specialist")]),
        ModelResponse::text("I am the specialist."),
    ]));
    let runner = Runner::new(model.clone());

    let ran = run_turn(&runner, &workflow, "refund order 4821").await;

    assert_eq!(
        ran.result.unwrap(),
        TurnOutcome::Answered {
            agent: "refund_specialist".into(),
            content: "I am the specialist.".into()
        }
    );
    assert_eq!(ran.state.active_agent(), Some("refund_specialist"));
    let requests = model.requests();
    assert_eq!(requests[0].agent, "coordinator");
    assert_eq!(requests[1].agent, "refund_specialist");
    assert_eq!(requests[1].system, "You are refund_specialist.");
    let tools: Vec<&str> = requests[1].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["get_order", HANDOFF_TOOL]);
    let shown = common::results_shown(&requests[1]);
    assert_eq!(shown[0]["outcome"], "handed_off");
    assert_eq!(shown[0]["to"], "refund_specialist");
    assert!(ran.sink.kinds().iter().any(|k| matches!(
        k,
        EventKind::HandoffAccepted { from, to, .. } if from == "coordinator" && to == "refund_specialist"
    )));
}

#[tokio::test]
async fn an_unlisted_handoff_is_refused_recorded_and_shown_to_the_model() {
    // The specialist exists, but only the coordinator may hand to "payments".
    let workflow = Workflow::new(
        vec![
            agent("coordinator", vec![], &["refund_specialist"]),
            agent("refund_specialist", vec![], &["coordinator"]),
            agent("payments", vec![], &[]),
        ],
        "coordinator",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![handoff("h1", "payments")]),
        ModelResponse::text("I cannot route that."),
    ]));
    let runner = Runner::new(model.clone());

    let ran = run_turn(&runner, &workflow, "pay me").await;

    assert_eq!(ran.result.unwrap().agent(), "coordinator");
    assert_eq!(ran.state.active_agent(), Some("coordinator"));
    let results = tool_results(ran.state.messages());
    assert_eq!(outcomes(&results), ["refused"]);
    assert!(
        results[0]["reason"]
            .as_str()
            .unwrap()
            .contains("may not hand off to \"payments\"")
    );
    assert_eq!(common::results_shown(&model.requests()[1]), results);
    let refused: Vec<_> = ran
        .sink
        .kinds()
        .into_iter()
        .filter(|k| matches!(k, EventKind::HandoffRefused { .. }))
        .collect();
    assert_eq!(refused.len(), 1);
    assert!(matches!(
        &refused[0],
        EventKind::HandoffRefused { from, to, .. } if from == "coordinator" && to == "payments"
    ));
}

#[tokio::test]
async fn an_agent_without_targets_has_no_handoff_tool_and_cannot_hand_off() {
    let workflow = Workflow::new(
        vec![
            agent("coordinator", vec![], &["leaf"]),
            agent("leaf", vec![], &[]),
        ],
        "leaf",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![handoff("h1", "coordinator")]),
        ModelResponse::text("ok"),
    ]));
    let ran = run_turn(&Runner::new(model.clone()), &workflow, "hi").await;

    assert!(model.requests()[0].tools.is_empty());
    assert_eq!(ran.state.active_agent(), Some("leaf"));
    assert_eq!(
        ran.state.messages()[2].outcome,
        Some(OutcomeKind::Refused),
        "{:?}",
        ran.state.messages()
    );
}

#[tokio::test]
async fn only_the_first_of_two_handoffs_in_one_response_is_accepted() {
    let workflow = Workflow::new(
        vec![
            agent("coordinator", vec![], &["a", "b"]),
            agent("a", vec![], &[]),
            agent("b", vec![], &[]),
        ],
        "coordinator",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![handoff("h1", "a"), handoff("h2", "b")]),
        ModelResponse::text("a here"),
    ]));
    let ran = run_turn(&Runner::new(model), &workflow, "hi").await;

    assert_eq!(ran.state.active_agent(), Some("a"));
    assert_eq!(
        outcomes(&tool_results(ran.state.messages())),
        ["handed_off", "refused"]
    );
}

#[tokio::test]
async fn the_handoff_tool_offers_exactly_the_listed_targets_with_their_descriptions() {
    let workflow = Workflow::new(
        vec![
            agent("coordinator", vec![], &["refund_specialist"]),
            agent("refund_specialist", vec![], &[]),
            agent("other", vec![], &[]),
        ],
        "coordinator",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("hello")]));
    run_turn(&Runner::new(model.clone()), &workflow, "hi").await;

    let spec = &model.requests()[0].tools[0];
    assert_eq!(spec.name, HANDOFF_TOOL);
    assert_eq!(
        spec.parameters["properties"]["to"]["enum"],
        json!(["refund_specialist"])
    );
    assert!(
        spec.description
            .contains("refund_specialist: Handles what refund_specialist is responsible for.")
    );
}
