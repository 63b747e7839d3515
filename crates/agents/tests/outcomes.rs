//! Found, not found and unknown stay distinct all the way to the model, the
//! transcript and the event log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use agents::{
    EventKind, Message, ModelResponse, OutcomeKind, Provenance, Runner, RunnerConfig,
    ScriptedModel, ToolCall, ToolOutcome, Workflow,
};
use common::{FakeTool, agent, finished_calls, outcomes, results_shown, run_turn, tool_results};
use serde_json::json;

fn order_provenance() -> Provenance {
    Provenance {
        source: "order:4821".into(),
        title: "Order 4821".into(),
        section: None,
        version: "2024-05-01T10:00:00Z".into(),
        quote: None,
    }
}

#[tokio::test]
async fn found_not_found_and_unknown_are_visible_to_the_model_in_the_transcript_and_in_events() {
    let found = FakeTool::new(
        "get_order",
        ToolOutcome::found(
            json!({ "order_id": "4821", "delivered_days_ago": 12 }),
            vec![order_provenance()],
        ),
    );
    let not_found = FakeTool::new(
        "search_policy",
        ToolOutcome::not_found("policy on gift cards"),
    );
    let unknown = FakeTool::new("get_parcel", ToolOutcome::unknown("carrier API timed out"));
    let workflow = Workflow::new(
        vec![agent("specialist", vec![found, not_found, unknown], &[])],
        "specialist",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![
            ToolCall::new("c1", "get_order", json!({ "order_id": "4821" })),
            ToolCall::new("c2", "search_policy", json!({})),
            ToolCall::new("c3", "get_parcel", json!({})),
        ]),
        ModelResponse::text("done"),
    ]));

    let ran = run_turn(&Runner::new(model.clone()), &workflow, "check 4821").await;
    ran.result.unwrap();

    // What the model was shown on the next step.
    let shown = results_shown(&model.requests()[1]);
    assert_eq!(outcomes(&shown), ["found", "not_found", "unknown"]);
    assert_eq!(shown[0]["value"]["delivered_days_ago"], 12);
    // The model is shown which sources a result came from; the full
    // provenance (titles, versions, quotes) stays in the stored record.
    assert_eq!(shown[0]["sources"], json!(["order:4821"]));
    assert!(shown[0].get("provenance").is_none(), "{}", shown[0]);
    assert_eq!(shown[2]["reason"], "carrier API timed out");
    assert!(
        shown[2]["meaning"]
            .as_str()
            .unwrap()
            .contains("not treat this as not found")
    );

    // The stored transcript, typed and as JSON.
    let kinds: Vec<_> = ran
        .state
        .messages()
        .iter()
        .filter_map(|m| m.outcome)
        .collect();
    assert_eq!(
        kinds,
        [
            OutcomeKind::Found,
            OutcomeKind::NotFound,
            OutcomeKind::Unknown
        ]
    );
    let stored = serde_json::to_value(&ran.state).unwrap();
    let stored_outcomes: Vec<_> = stored["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["outcome"].as_str())
        .collect();
    assert_eq!(stored_outcomes, ["found", "not_found", "unknown"]);
    let found = ran.state.messages().iter().find_map(Message::result_json);
    assert_eq!(
        found.map(|result| result["provenance"][0]["source"].clone()),
        Some(json!("order:4821"))
    );

    // The event log.
    let events = ran.sink.kinds();
    assert_eq!(
        finished_calls(&events),
        [
            ("get_order".to_owned(), "found".to_owned()),
            ("search_policy".to_owned(), "not_found".to_owned()),
            ("get_parcel".to_owned(), "unknown".to_owned()),
        ]
    );
    assert!(events.iter().any(|k| matches!(
        k,
        EventKind::ToolCallFinished { sources, .. } if sources == &["order:4821".to_owned()]
    )));
}

#[tokio::test]
async fn a_call_to_a_tool_the_agent_does_not_have_is_refused_and_never_runs() {
    let other_agents_tool = FakeTool::new("issue_refund", ToolOutcome::found(json!({}), vec![]));
    let workflow = Workflow::new(
        vec![
            agent("coordinator", vec![], &[]),
            agent("payments", vec![other_agents_tool.clone()], &[]),
        ],
        "coordinator",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![ToolCall::new("c1", "issue_refund", json!({}))]),
        ModelResponse::text("I cannot do that."),
    ]));

    let ran = run_turn(&Runner::new(model), &workflow, "refund now").await;

    assert!(other_agents_tool.calls().is_empty());
    let results = tool_results(ran.state.messages());
    assert_eq!(outcomes(&results), ["refused"]);
    assert_eq!(
        finished_calls(&ran.sink.kinds()),
        [("issue_refund".to_owned(), "refused".to_owned())]
    );
}

#[tokio::test]
async fn malformed_arguments_reach_the_model_as_invalid_arguments_and_the_turn_goes_on() {
    let tool = FakeTool::new("get_order", ToolOutcome::not_found("order"));
    let workflow = Workflow::new(vec![agent("a", vec![tool.clone()], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![ToolCall::malformed(
            "c1",
            "get_order",
            "{\"order_id\": 48",
            "invalid JSON: EOF while parsing",
        )]),
        ModelResponse::text("let me try again"),
    ]));

    let ran = run_turn(&Runner::new(model.clone()), &workflow, "check").await;

    ran.result.unwrap();
    assert!(tool.calls().is_empty(), "the tool never sees bad arguments");
    let shown = results_shown(&model.requests()[1]);
    assert_eq!(shown[0]["outcome"], "invalid_arguments");
    assert!(
        shown[0]["message"]
            .as_str()
            .unwrap()
            .contains("{\"order_id\": 48")
    );
}

#[tokio::test]
async fn a_panicking_tool_is_unknown_and_the_turn_continues() {
    let workflow = Workflow::new(
        vec![agent("a", vec![common::FakeTool::panicking("boom")], &[])],
        "a",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![ToolCall::new("c1", "boom", json!({}))]),
        ModelResponse::text("that failed"),
    ]));
    let ran = run_turn(&Runner::new(model), &workflow, "go").await;

    ran.result.unwrap();
    assert_eq!(outcomes(&tool_results(ran.state.messages())), ["unknown"]);
}

#[tokio::test]
async fn a_tool_that_runs_past_its_timeout_is_unknown_not_not_found() {
    let slow = FakeTool::slow(
        "get_order",
        ToolOutcome::not_found("x"),
        Duration::from_secs(10),
    );
    let workflow = Workflow::new(vec![agent("a", vec![slow], &[])], "a").unwrap();
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![ToolCall::new("c1", "get_order", json!({}))]),
        ModelResponse::text("unknown, I will say so"),
    ]));
    let runner = Runner::new(model).with_config(RunnerConfig {
        max_steps: 4,
        tool_timeout: Some(Duration::from_millis(50)),
    });

    let ran = run_turn(&runner, &workflow, "check").await;

    ran.result.unwrap();
    let results = tool_results(ran.state.messages());
    assert_eq!(outcomes(&results), ["unknown"]);
    assert!(
        results[0]["reason"]
            .as_str()
            .unwrap()
            .contains("did not answer")
    );
}
