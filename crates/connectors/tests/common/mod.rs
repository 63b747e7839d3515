//! Starts a sandbox on 127.0.0.1 port 0 and hands out a client for it.
#![allow(
    dead_code,
    reason = "each test binary uses its own subset of these helpers"
)]

use std::time::Duration;

use connectors::sandbox::{self, SandboxConfig, SandboxProvider, SandboxState};
use connectors::{HttpTimeouts, RefundLookup, RefundRequest};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use secrecy::ExposeSecret;
use serde_json::{Value, json};

/// Hang used by the timeout faults: well past `SHORT_TIMEOUTS.request`.
pub const HANG: Duration = Duration::from_millis(300);

/// Client timeouts for fault tests: the hang always outlasts them.
pub const SHORT_TIMEOUTS: HttpTimeouts = HttpTimeouts {
    connect: Duration::from_millis(500),
    request: Duration::from_millis(100),
};

/// The payments the tests that are not about charges refund: each a charge
/// far larger than any test refunds from it, so those tests stay about what
/// they test (idempotency, faults, requests).
pub const ROOMY_CHARGES: &[&str] = &[
    "pay_4821",
    "pay_1",
    "pay_declined_4821",
    "pay_pending_1",
    "pay_failed_1",
];
pub const ROOMY_AMOUNT: i64 = 100_000_000;

pub struct Sandbox {
    /// e.g. `http://127.0.0.1:41234/sandbox/payments`
    pub base_url: String,
    pub state: SandboxState,
    pub provider: SandboxProvider,
    /// Presents the sandbox's key on every request.
    pub http: reqwest::Client,
    /// Presents no key.
    pub anonymous: reqwest::Client,
}

fn keyed_client(state: &SandboxState) -> reqwest::Client {
    let mut headers = HeaderMap::new();
    let value = format!("Bearer {}", state.secret_key().expose_secret());
    headers.insert(AUTHORIZATION, HeaderValue::from_str(&value).expect("key"));
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("client")
}

fn seed_roomy_charges(state: &SandboxState) {
    for id in ROOMY_CHARGES {
        state.add_charge(id, ROOMY_AMOUNT, "EUR").expect("charge");
    }
}

fn sandbox_at(base_url: String, state: SandboxState, timeouts: HttpTimeouts) -> Sandbox {
    Sandbox {
        provider: SandboxProvider::new(&base_url, state.secret_key(), timeouts).expect("client"),
        http: keyed_client(&state),
        anonymous: reqwest::Client::new(),
        base_url,
        state,
    }
}

/// A sandbox mounted the way the main binary mounts it, under
/// `/sandbox/payments`, with default client timeouts and the
/// [`ROOMY_CHARGES`].
pub async fn spawn(config: SandboxConfig) -> Sandbox {
    spawn_with_timeouts(config, HttpTimeouts::default()).await
}

pub async fn spawn_with_timeouts(config: SandboxConfig, timeouts: HttpTimeouts) -> Sandbox {
    let sandbox = spawn_without_charges(config, timeouts).await;
    seed_roomy_charges(&sandbox.state);
    sandbox
}

/// As [`spawn`], with no charge registered.
pub async fn spawn_without_charges(config: SandboxConfig, timeouts: HttpTimeouts) -> Sandbox {
    let state = SandboxState::new(config).expect("valid sandbox config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind port 0");
    let addr = listener.local_addr().expect("local addr");
    let app = axum::Router::new().nest("/sandbox/payments", sandbox::router(state.clone()));
    tokio::spawn(async move { axum::serve(listener, app).await });
    sandbox_at(format!("http://{addr}/sandbox/payments"), state, timeouts)
}

/// The sandbox alone at the root, through `serve_standalone`.
pub async fn spawn_standalone(config: SandboxConfig) -> Sandbox {
    let state = SandboxState::new(config).expect("valid sandbox config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind port 0");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(sandbox::serve_standalone(listener, state.clone()));
    seed_roomy_charges(&state);
    sandbox_at(format!("http://{addr}"), state, HttpTimeouts::default())
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
