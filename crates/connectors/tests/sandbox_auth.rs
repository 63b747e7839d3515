//! The sandbox sits on the main listener: without its secret key nobody may
//! read its ledger, change its fault plan or make a refund.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{lookup, refund, spawn};
use connectors::sandbox::{SandboxConfig, SandboxProvider, SandboxState, endpoints};
use connectors::{HttpTimeouts, PaymentProvider, ProviderError};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

/// A concrete path for a routed one: `{name}` parameters become `x`.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "x"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn every_sandbox_endpoint_refuses_a_request_without_the_right_key() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let routes = endpoints();
    // The list is the router's own table; make sure it is the real one.
    for expected in [
        ("POST", "/v1/refunds"),
        ("GET", "/v1/ledger"),
        ("PUT", "/v1/faults"),
        ("GET", "/v1/charges/{id}"),
    ] {
        assert!(
            routes
                .iter()
                .any(|route| (route.method, route.path) == expected),
            "{expected:?} missing from {routes:?}"
        );
    }

    let wrong_key = "Bearer sk_sbx_not_the_key".to_owned();
    let right_key_as_basic = format!("Basic {}", sandbox.state.secret_key().expose_secret());
    for route in &routes {
        let url = format!("{}{}", sandbox.base_url, concrete(route.path));
        for authorization in [None, Some(&wrong_key), Some(&right_key_as_basic)] {
            let method = reqwest::Method::from_bytes(route.method.as_bytes()).unwrap();
            let mut request = sandbox
                .anonymous
                .request(method, &url)
                .header("Idempotency-Key", "anonymous-1")
                .json(
                    &json!({"payment_reference": "pay_4821", "amount_minor": 7900,
                              "currency": "EUR"}),
                );
            if let Some(value) = authorization {
                request = request.header("Authorization", value.as_str());
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                response.status(),
                401,
                "{} {} with {authorization:?}",
                route.method,
                route.path
            );
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"]["type"], "invalid_request_error");
            assert_eq!(body["error"]["code"], "api_key_invalid");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(
                !message.contains(sandbox.state.secret_key().expose_secret()),
                "the key must never be echoed"
            );
        }
    }
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
    assert_eq!(sandbox.state.fault_status().requests_seen, 0);
}

#[tokio::test]
async fn a_path_the_sandbox_does_not_route_also_needs_the_key() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let response = sandbox
        .anonymous
        .get(format!("{}/v1/nothing-here", sandbox.base_url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn a_client_with_a_wrong_key_is_told_so_on_a_send_and_learns_nothing_from_a_query() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let client = SandboxProvider::new(
        &sandbox.base_url,
        SecretString::from("sk_sbx_rolled"),
        HttpTimeouts::default(),
    )
    .unwrap();
    let err = client.refund(&refund("prop-1")).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::Configuration { status: 401, .. }),
        "{err:?}"
    );
    // A status query that is refused says nothing about the refund.
    let err = client.lookup(&lookup("prop-1")).await.unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
    let err = client.refunds_for_key(&lookup("prop-1")).await.unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
    let err = client.charge("pay_4821").await.unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
}

#[tokio::test]
async fn a_configured_key_is_the_one_required_and_a_generated_one_is_a_fresh_sk_sbx_key() {
    let configured = SandboxState::new(
        SandboxConfig::default().with_secret_key(SecretString::from("sk_sbx_configured")),
    )
    .unwrap();
    assert_eq!(configured.secret_key().expose_secret(), "sk_sbx_configured");
    let a = SandboxState::new(SandboxConfig::default()).unwrap();
    let b = SandboxState::new(SandboxConfig::default()).unwrap();
    assert!(a.secret_key().expose_secret().starts_with("sk_sbx_"));
    assert!(a.secret_key().expose_secret().len() >= 39);
    assert_ne!(
        a.secret_key().expose_secret(),
        b.secret_key().expose_secret()
    );
}

#[tokio::test]
async fn the_key_never_shows_in_debug_output_or_serialised_config() {
    let config = SandboxConfig::default().with_secret_key(SecretString::from("sk_sbx_hidden"));
    assert!(!format!("{config:?}").contains("sk_sbx_hidden"));
    assert!(
        !serde_json::to_string(&config)
            .unwrap()
            .contains("sk_sbx_hidden")
    );
    let state = SandboxState::new(config).unwrap();
    assert!(!format!("{state:?}").contains("sk_sbx_hidden"));
    let client = SandboxProvider::new(
        "http://127.0.0.1:9",
        state.secret_key(),
        HttpTimeouts::default(),
    )
    .unwrap();
    assert!(!format!("{client:?}").contains("sk_sbx_hidden"));
}
