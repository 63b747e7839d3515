//! A refund the way people make one: the agent proposes it through the API,
//! an approver approves it; both signed in with a browser session (cookie
//! and CSRF token), so no credential API is needed.

use crate::support::{TestApp, json};
use engine::live::LiveEvent;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// A JSON POST with the session's cookie and CSRF token.
pub async fn post(app: &TestApp, path: &str, body: &Value) -> reqwest::Response {
    let token = app.csrf_token().await;
    app.client
        .post(app.url(path))
        .header("x-csrf-token", token)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// The agent proposes a full refund of `order`; returns the proposal JSON.
pub async fn propose(app: &TestApp, order: &str) -> Value {
    app.login_ok("agent").await;
    let response = post(
        app,
        "/api/v1/proposals",
        &json!({
            "order_id": order,
            "evidence": [{"reference": format!("order:{order}")}, {"reference": "returns-policy:section-3"}],
            "recommendation": "Refund under section 3.",
        }),
    )
    .await;
    let status = response.status();
    let body = json(response).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.logout().await;
    body
}

/// The signed-in approver approves `proposal`; returns once the refund was
/// sent and the provider's answer recorded (the proposal succeeded or
/// verified).
pub async fn approve_until_refunded(app: &TestApp, proposal: &Value) {
    let id = proposal["id"].as_str().unwrap();
    let mut changes = app.engine.live.subscribe();
    let response = post(
        app,
        &format!("/api/v1/proposals/{id}/approve"),
        &json!({"action_digest": proposal["action_digest"]}),
    )
    .await;
    let status = response.status();
    let body = json(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match changes.recv().await {
                Ok(LiveEvent::Changed(change))
                    if change.proposal_id == id
                        && ["succeeded", "verified"].contains(&change.status.as_str()) =>
                {
                    return;
                }
                Err(RecvError::Closed) => panic!("live updates ended"),
                _ => {}
            }
        }
    })
    .await
    .expect("the approved refund is executed");
}
