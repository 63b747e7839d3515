//! Starts a sandbox on 127.0.0.1 port 0 and hands out a client for it.
#![allow(
    dead_code,
    reason = "each test binary uses its own subset of these helpers"
)]

use std::time::Duration;

use connectors::sandbox::{self, SandboxConfig, SandboxProvider, SandboxState};
use connectors::{HttpTimeouts, RefundLookup, RefundRequest};
use serde_json::{Value, json};

/// Hang used by the timeout faults: well past `SHORT_TIMEOUTS.request`.
pub const HANG: Duration = Duration::from_millis(300);

/// Client timeouts for fault tests: the hang always outlasts them.
pub const SHORT_TIMEOUTS: HttpTimeouts = HttpTimeouts {
    connect: Duration::from_millis(500),
    request: Duration::from_millis(100),
};

pub struct Sandbox {
    /// e.g. `http://127.0.0.1:41234/sandbox/payments`
    pub base_url: String,
    pub state: SandboxState,
    pub provider: SandboxProvider,
    pub http: reqwest::Client,
}

/// A sandbox mounted the way the main binary mounts it, under
/// `/sandbox/payments`, with default client timeouts.
pub async fn spawn(config: SandboxConfig) -> Sandbox {
    spawn_with_timeouts(config, HttpTimeouts::default()).await
}

pub async fn spawn_with_timeouts(config: SandboxConfig, timeouts: HttpTimeouts) -> Sandbox {
    let state = SandboxState::new(config).expect("valid sandbox config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind port 0");
    let addr = listener.local_addr().expect("local addr");
    let app = axum::Router::new().nest("/sandbox/payments", sandbox::router(state.clone()));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let base_url = format!("http://{addr}/sandbox/payments");
    Sandbox {
        provider: SandboxProvider::new(&base_url, timeouts).expect("client"),
        base_url,
        state,
        http: reqwest::Client::new(),
    }
}

/// The sandbox alone at the root, through `serve_standalone`.
pub async fn spawn_standalone(config: SandboxConfig) -> Sandbox {
    let state = SandboxState::new(config).expect("valid sandbox config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind port 0");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(sandbox::serve_standalone(listener, state.clone()));
    let base_url = format!("http://{addr}");
    Sandbox {
        provider: SandboxProvider::new(&base_url, HttpTimeouts::default()).expect("client"),
        base_url,
        state,
        http: reqwest::Client::new(),
    }
}

/// Refund proposal `key` of 79.00 EUR for payment `pay_4821`.
pub fn refund(key: &str) -> RefundRequest {
    refund_of(key, "pay_4821", 7900)
}

pub fn refund_of(key: &str, payment_reference: &str, amount_minor: i64) -> RefundRequest {
    RefundRequest {
        idempotency_key: key.to_owned(),
        payment_reference: payment_reference.to_owned(),
        amount_minor,
        currency: "EUR".to_owned(),
        proposal_id: key.to_owned(),
    }
}

pub fn lookup(key: &str) -> RefundLookup {
    refund(key).lookup_key()
}

/// The JSON body of a refund of `pay_4821` for proposal `prop-17`.
pub fn refund_body(amount_minor: i64) -> Value {
    json!({
        "payment_reference": "pay_4821",
        "amount_minor": amount_minor,
        "currency": "EUR",
        "metadata": {"proposal_id": "prop-17"}
    })
}
