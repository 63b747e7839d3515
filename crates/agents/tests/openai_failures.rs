//! The OpenAI-compatible backend: retries, timeouts, API errors, and Stop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents::{
    ChatModel, ConversationState, ModelError, Runner, ToolOutcome, TurnControl, TurnOutcome,
    Workflow,
};
use common::openai::{ENDPOINT, completion, config, model, mount, received, request, tool_call};
use common::{FakeTool, agent, run_turn, run_turn_with};
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn a_429_is_retried_after_retry_after_and_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("Retry-After", "1")
                .set_body_json(json!({ "error": { "message": "slow down", "type": "requests", "code": "rate_limit_exceeded" } })),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount(
        &server,
        completion(json!({ "role": "assistant", "content": "ok" }), "stop"),
    )
    .await;

    let started = Instant::now();
    let response = model(config(&server)).complete(request()).await.unwrap();

    assert_eq!(response.content.as_deref(), Some("ok"));
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was not honoured"
    );
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn a_500_is_retried_until_the_retries_are_exhausted() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(500).set_body_json(
            json!({ "error": { "message": "boom", "type": "server_error", "code": null } }),
        ),
    )
    .await;

    let err = model(config(&server))
        .complete(request())
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Server {
            status: 500,
            message: "boom".into()
        }
    );
    assert_eq!(
        received(&server).await.len(),
        3,
        "one attempt plus two retries"
    );
}

#[tokio::test]
async fn a_server_that_answers_too_slowly_times_out() {
    let server = MockServer::start().await;
    mount(
        &server,
        completion(json!({ "role": "assistant", "content": "late" }), "stop")
            .set_delay(Duration::from_secs(3)),
    )
    .await;
    let mut config = config(&server);
    config.timeout = Duration::from_millis(100);
    config.max_retries = 1;

    let started = Instant::now();
    let err = model(config).complete(request()).await.unwrap_err();

    assert_eq!(
        err,
        ModelError::Timeout {
            after: Duration::from_millis(100)
        }
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(received(&server).await.len(), 2, "a timeout is retried");
}

#[tokio::test]
async fn api_error_bodies_map_to_distinct_model_errors_without_pointless_retries() {
    let cases = [
        (
            401,
            json!({ "error": { "message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key" } }),
            "rejected",
        ),
        (
            400,
            json!({ "error": { "message": "no", "type": "invalid_request_error", "code": "content_policy_violation" } }),
            "refused",
        ),
        (
            429,
            json!({ "error": { "message": "pay up", "type": "insufficient_quota", "code": "insufficient_quota" } }),
            "rejected",
        ),
        (404, json!({ "error": "model \"x\" not found" }), "rejected"),
    ];
    for (status, body, kind) in cases {
        let server = MockServer::start().await;
        mount(&server, ResponseTemplate::new(status).set_body_json(body)).await;

        let err = model(config(&server))
            .complete(request())
            .await
            .unwrap_err();

        assert_eq!(err.kind(), kind, "HTTP {status}: {err}");
        assert_eq!(
            received(&server).await.len(),
            1,
            "HTTP {status} is not retried"
        );
    }
}

#[tokio::test]
async fn a_retry_after_longer_than_the_backoff_cap_is_returned_not_waited_out() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(429).insert_header("Retry-After", "120"),
    )
    .await;

    let err = model(config(&server))
        .complete(request())
        .await
        .unwrap_err();

    assert!(matches!(
        err,
        ModelError::RateLimited { retry_after: Some(wait), .. } if wait == Duration::from_secs(120)
    ));
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn a_turn_over_http_sends_typed_tool_results_back_to_the_model() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .and(body_string_contains("\"role\":\"tool\""))
        .respond_with(completion(
            json!({ "role": "assistant", "content": "I could not load the order, so I do not know yet." }),
            "stop",
        ))
        .with_priority(1)
        .mount(&server)
        .await;
    mount(
        &server,
        completion(
            json!({ "role": "assistant", "content": null,
                    "tool_calls": [tool_call("call_1", "get_order", "{\"order_id\":\"4821\"}")] }),
            "tool_calls",
        ),
    )
    .await;
    let get_order = FakeTool::new("get_order", ToolOutcome::unknown("orders API timed out"));
    let workflow = Workflow::new(vec![agent("a", vec![get_order], &[])], "a").unwrap();
    let runner = Runner::new(Arc::new(model(config(&server))));

    let ran = run_turn(&runner, &workflow, "check 4821").await;

    assert!(matches!(ran.result.unwrap(), TurnOutcome::Answered { .. }));
    let bodies = received(&server).await;
    assert_eq!(bodies.len(), 2);
    let tool_message = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool_message["tool_call_id"], "call_1");
    let result: Value = serde_json::from_str(tool_message["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["outcome"], "unknown");
}

#[tokio::test]
async fn stop_during_a_slow_http_model_call_lands_promptly() {
    let server = MockServer::start().await;
    mount(
        &server,
        completion(json!({ "role": "assistant", "content": "late" }), "stop")
            .set_delay(Duration::from_secs(10)),
    )
    .await;
    let mut config = config(&server);
    config.timeout = Duration::from_secs(30);
    let workflow = Workflow::new(vec![agent("a", vec![], &[])], "a").unwrap();
    let runner = Runner::new(Arc::new(model(config)));
    let control = TurnControl::new();
    let stopper = control.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        stopper.stop();
    });

    let started = Instant::now();
    let ran = run_turn_with(&runner, &workflow, ConversationState::new(), "hi", &control).await;

    assert!(matches!(ran.result.unwrap(), TurnOutcome::Stopped { .. }));
    assert!(started.elapsed() < Duration::from_secs(2));
}
