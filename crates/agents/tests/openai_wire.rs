//! The OpenAI-compatible backend: what it sends and how it reads answers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use agents::{
    ChatModel, FinishReason, Message, ModelRequest, OutcomeKind, ToolCall, ToolOutcome, ToolSpec,
};
use common::openai::{completion, config, model, mount, request, tool_call};
use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::MockServer;

#[tokio::test]
async fn a_plain_answer_is_read() {
    let server = MockServer::start().await;
    mount(
        &server,
        completion(json!({ "role": "assistant", "content": "Hello!" }), "stop"),
    )
    .await;

    let response = model(config(&server)).complete(request()).await.unwrap();

    assert_eq!(response.content.as_deref(), Some("Hello!"));
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.finish_reason, FinishReason::Stop);
}

#[tokio::test]
async fn a_single_tool_call_is_read_with_its_arguments() {
    let server = MockServer::start().await;
    mount(
        &server,
        completion(
            json!({ "role": "assistant", "content": null,
                    "tool_calls": [tool_call("call_1", "get_order", "{\"order_id\":\"4821\"}")] }),
            "tool_calls",
        ),
    )
    .await;

    let response = model(config(&server)).complete(request()).await.unwrap();

    assert_eq!(response.content, None);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        response.tool_calls,
        [ToolCall::new(
            "call_1",
            "get_order",
            json!({ "order_id": "4821" })
        )]
    );
}

#[tokio::test]
async fn parallel_tool_calls_are_read_in_order() {
    let server = MockServer::start().await;
    mount(
        &server,
        completion(
            json!({ "role": "assistant", "content": "Looking both up.",
                    "tool_calls": [
                        tool_call("call_a", "get_order", "{\"order_id\":\"4821\"}"),
                        tool_call("call_b", "search_policy", "{\"question\":\"returns\"}"),
                    ] }),
            "tool_calls",
        ),
    )
    .await;

    let response = model(config(&server)).complete(request()).await.unwrap();

    let names: Vec<_> = response
        .tool_calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["get_order", "search_policy"]);
    assert_eq!(response.tool_calls[1].arguments["question"], "returns");
    assert_eq!(response.content.as_deref(), Some("Looking both up."));
}

#[tokio::test]
async fn malformed_tool_arguments_become_a_malformed_call_rather_than_an_error() {
    let server = MockServer::start().await;
    mount(
        &server,
        completion(
            json!({ "role": "assistant", "content": null,
                    "tool_calls": [
                        tool_call("call_1", "get_order", "{\"order_id\": 48"),
                        tool_call("call_2", "get_order", "[1, 2]"),
                        tool_call("call_3", "list_all", ""),
                    ] }),
            "tool_calls",
        ),
    )
    .await;

    let response = model(config(&server)).complete(request()).await.unwrap();

    let first = &response.tool_calls[0];
    let malformed = first.malformed_arguments.as_ref().unwrap();
    assert_eq!(malformed.raw, "{\"order_id\": 48");
    assert!(malformed.error.contains("invalid JSON"));
    assert!(response.tool_calls[1].malformed_arguments.is_some());
    assert_eq!(response.tool_calls[2].arguments, json!({}));
    assert!(response.tool_calls[2].malformed_arguments.is_none());
}

#[tokio::test]
async fn the_request_body_carries_tools_tool_messages_and_the_bearer_key() {
    let server = MockServer::start().await;
    mount(
        &server,
        completion(json!({ "role": "assistant", "content": "ok" }), "stop"),
    )
    .await;
    let mut config = config(&server);
    config.api_key = Some(SecretString::from("sk-test".to_owned()));
    let request = ModelRequest {
        system: "You are the specialist.".into(),
        messages: vec![
            Message::user("check 4821"),
            Message::assistant(
                "a",
                "",
                vec![
                    ToolCall::new("call_1", "get_order", json!({ "order_id": "4821" })),
                    ToolCall::malformed("call_2", "get_order", "{oops", "invalid JSON"),
                ],
            ),
            Message::tool_result(
                "a",
                "call_1",
                OutcomeKind::NotFound,
                &ToolOutcome::not_found("order 4821").to_model_json(),
            ),
            Message::tool_result(
                "a",
                "call_2",
                OutcomeKind::InvalidArguments,
                &ToolOutcome::invalid_arguments("bad").to_model_json(),
            ),
        ],
        tools: vec![ToolSpec {
            name: "get_order".into(),
            description: "Load one order.".into(),
            parameters: json!({ "type": "object", "properties": { "order_id": { "type": "string" } } }),
        }],
        agent: "a".into(),
    };

    model(config).complete(request).await.unwrap();

    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        "Bearer sk-test"
    );
    let body: Value = requests[0].body_json().unwrap();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(
        body["tools"],
        json!([{ "type": "function", "function": {
            "name": "get_order",
            "description": "Load one order.",
            "parameters": { "type": "object", "properties": { "order_id": { "type": "string" } } },
        } }])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[0],
        json!({ "role": "system", "content": "You are the specialist." })
    );
    assert_eq!(
        messages[1],
        json!({ "role": "user", "content": "check 4821" })
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], Value::Null);
    assert_eq!(
        messages[2]["tool_calls"][0],
        json!({ "id": "call_1", "type": "function",
                "function": { "name": "get_order", "arguments": "{\"order_id\":\"4821\"}" } })
    );
    // Malformed arguments are echoed as `{}` so strict servers accept the history.
    assert_eq!(messages[2]["tool_calls"][1]["function"]["arguments"], "{}");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    let result: Value = serde_json::from_str(messages[3]["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["outcome"], "not_found");
    assert_eq!(messages[4]["tool_call_id"], "call_2");
}

#[tokio::test]
async fn no_tools_means_no_tool_choice_and_no_key_means_no_authorization_header() {
    let server = MockServer::start().await;
    mount(
        &server,
        completion(json!({ "role": "assistant", "content": "ok" }), "stop"),
    )
    .await;

    model(config(&server)).complete(request()).await.unwrap();

    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("authorization").is_none());
    let body: Value = requests[0].body_json().unwrap();
    assert!(body.get("tools").is_none());
    assert!(body.get("tool_choice").is_none());
}

#[tokio::test]
async fn two_customer_messages_in_a_row_travel_as_one_so_templates_that_need_alternation_accept_them()
 {
    // While a person held the chat the customer wrote twice, and the
    // person's reply followed the note that they joined.
    let server = MockServer::start().await;
    mount(
        &server,
        completion(json!({ "role": "assistant", "content": "ok" }), "stop"),
    )
    .await;
    let request = ModelRequest {
        system: "You are a test.".into(),
        messages: vec![
            Message::user("can I talk to a human?"),
            Message::assistant(
                "coordinator",
                "I've asked a member of our team to join.",
                vec![],
            ),
            Message::user("my tent arrived torn"),
            Message::user("are you there?"),
            Message::assistant("handover", "Ada joined the conversation.", vec![]),
            Message::assistant("person:Ada", "Yes, I'm here.", vec![]),
            Message::user("thanks"),
        ],
        tools: vec![],
        agent: "coordinator".into(),
    };

    model(config(&server)).complete(request).await.unwrap();

    let requests = server.received_requests().await.unwrap();
    let body: Value = requests[0].body_json().unwrap();
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user", "assistant", "user"]
    );
    assert_eq!(
        body["messages"][3]["content"],
        "my tent arrived torn\n\nare you there?"
    );
    assert_eq!(
        body["messages"][4]["content"],
        "Ada joined the conversation.\n\nYes, I'm here."
    );
}
