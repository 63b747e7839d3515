//! A mock Stripe and the values the Stripe tests send and expect.
#![allow(
    dead_code,
    reason = "each test binary uses its own subset of these helpers"
)]

use connectors::stripe::{StripeConfig, StripeProvider};
use connectors::{
    HttpTimeouts, PaymentProvider, ProviderError, RefundLookup, RefundOutcome, RefundRequest,
};
use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Match, Mock, MockServer, Request, ResponseTemplate};

pub const SECRET: &str = "sk_test_51Countersign";

/// Matches a form-encoded body holding exactly these pairs.
pub struct FormIs(pub Vec<(&'static str, &'static str)>);

impl Match for FormIs {
    fn matches(&self, request: &Request) -> bool {
        let Ok(mut pairs) = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&request.body)
        else {
            return false;
        };
        let mut expected: Vec<(String, String)> = self
            .0
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        pairs.sort();
        expected.sort();
        pairs == expected
    }
}

pub fn provider(server: &MockServer) -> StripeProvider {
    provider_with(server, HttpTimeouts::default())
}

pub fn provider_with(server: &MockServer, timeouts: HttpTimeouts) -> StripeProvider {
    StripeProvider::new(StripeConfig {
        base_url: server.uri(),
        secret_key: SecretString::from(SECRET),
        timeouts,
    })
    .unwrap()
}

pub fn request(reference: &str) -> RefundRequest {
    RefundRequest {
        idempotency_key: "prop-17".to_owned(),
        payment_reference: reference.to_owned(),
        amount_minor: 7900,
        currency: "EUR".to_owned(),
        proposal_id: "prop-17".to_owned(),
    }
}

pub fn lookup() -> RefundLookup {
    request("pi_4821").lookup_key()
}

pub fn stripe_refund(id: &str, key: &str, status: &str, created: i64) -> Value {
    json!({
        "id": id, "object": "refund", "amount": 7900, "currency": "eur",
        "status": status, "created": created, "payment_intent": "pi_4821",
        "charge": "ch_4821", "reason": null,
        "metadata": {"proposal_id": key, "idempotency_key": key}
    })
}

pub fn stripe_error(kind: &str, code: &str, message: &str) -> Value {
    json!({"error": {"type": kind, "code": code, "message": message}})
}

pub async fn refund_answering(template: ResponseTemplate) -> Result<RefundOutcome, ProviderError> {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/refunds"))
        .respond_with(template)
        .expect(1)
        .mount(&server)
        .await;
    provider(&server).refund(&request("pi_4821")).await
}
