//! The caller's identity comes from the application, never from the model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use agents::{ModelResponse, Runner, ScriptedModel, ToolCall, ToolOutcome, Workflow};
use common::{FakeTool, agent, customer, run_turn};
use serde_json::json;

#[tokio::test]
async fn the_principal_reaches_tools_unchanged_whatever_the_model_sends() {
    let tool = FakeTool::new("get_order", ToolOutcome::not_found("order"));
    let workflow = Workflow::new(vec![agent("a", vec![tool.clone()], &[])], "a").unwrap();
    // The model tries to act as someone else through the arguments.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls(vec![ToolCall::new(
            "c1",
            "get_order",
            json!({
                "order_id": "9999",
                "user_id": "admin",
                "customer_id": "cust-1",
                "roles": ["admin"],
                "principal": { "user_id": "admin", "roles": ["admin"] }
            }),
        )]),
        ModelResponse::text("done"),
    ]));

    run_turn(&Runner::new(model), &workflow, "show me order 9999")
        .await
        .result
        .unwrap();

    let calls = tool.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].principal, customer());
    assert_eq!(calls[0].agent.as_deref(), Some("a"));
    assert_eq!(calls[0].call_id.as_deref(), Some("c1"));
    // The arguments reach the tool as sent; scoping is the tool's job, by
    // the principal, not by anything in them.
    assert_eq!(calls[0].args["user_id"], "admin");
}
