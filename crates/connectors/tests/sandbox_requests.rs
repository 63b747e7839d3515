//! The sandbox validates requests, declines by reference, and answers status
//! queries without ever creating a refund.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{lookup, refund, refund_body, refund_of, spawn, spawn_standalone};
use connectors::sandbox::{IDEMPOTENT_REPLAYED, SandboxConfig, SandboxProvider};
use connectors::{
    HttpTimeouts, PaymentProvider, ProviderError, ProviderRefundStatus, RefundOutcome,
};
use serde_json::{Value, json};

#[tokio::test]
async fn a_request_without_idempotency_key_is_refused_with_400() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let response = sandbox
        .http
        .post(format!("{}/v1/refunds", sandbox.base_url))
        .json(&refund_body(7900))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["error"]["message"],
        "the Idempotency-Key header is required"
    );
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
}

#[tokio::test]
async fn invalid_amount_currency_or_reference_is_refused_with_a_precise_400() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let cases = [
        (
            json!({"payment_reference": "pay_1", "amount_minor": 0, "currency": "EUR"}),
            "amount_minor must be greater than 0, got 0",
        ),
        (
            json!({"payment_reference": "pay_1", "amount_minor": 5, "currency": "EURO"}),
            "currency must be a three-letter ISO 4217 code, got \"EURO\"",
        ),
        (
            json!({"payment_reference": " ", "amount_minor": 5, "currency": "EUR"}),
            "payment_reference must not be empty",
        ),
    ];
    for (index, (body, message)) in cases.into_iter().enumerate() {
        let response = sandbox
            .http
            .post(format!("{}/v1/refunds", sandbox.base_url))
            .header("Idempotency-Key", format!("bad-{index}"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["message"], message);
    }
    let err = sandbox
        .provider
        .refund(&refund_of("bad-client", "pay_1", -5))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Rejected { status: 400, .. }),
        "{err:?}"
    );
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
}

#[tokio::test]
async fn a_declined_payment_answers_402_and_the_decline_is_replayed() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let request = refund_of("prop-declined", "pay_declined_4821", 7900);
    let first = sandbox.provider.refund(&request).await.unwrap();
    let RefundOutcome::Declined { code, .. } = &first else {
        panic!("expected a decline, got {first:?}");
    };
    assert_eq!(code, "charge_declined");

    let replay = sandbox
        .http
        .post(format!("{}/v1/refunds", sandbox.base_url))
        .header("Idempotency-Key", "prop-declined")
        .json(&json!({
            "payment_reference": "pay_declined_4821", "amount_minor": 7900,
            "currency": "EUR", "metadata": {"proposal_id": "prop-declined"}
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 402);
    assert_eq!(replay.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(
        sandbox
            .provider
            .lookup(&request.lookup_key())
            .await
            .unwrap(),
        None
    );
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
}

#[tokio::test]
async fn pending_and_failed_references_give_pending_and_failed_refunds() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let pending = sandbox
        .provider
        .refund(&refund_of("p-pending", "pay_pending_1", 100))
        .await
        .unwrap();
    assert!(matches!(pending, RefundOutcome::Pending(_)), "{pending:?}");
    let failed = sandbox
        .provider
        .refund(&refund_of("p-failed", "pay_failed_1", 100))
        .await
        .unwrap();
    let RefundOutcome::Failed(refund) = failed else {
        panic!("expected a failed refund, got {failed:?}");
    };
    assert_eq!(
        refund.status,
        ProviderRefundStatus::Failed {
            reason: "expired_or_canceled_card".to_owned()
        }
    );
}

#[tokio::test]
async fn lookup_finds_the_refund_by_key_and_never_creates_one() {
    let sandbox = spawn_standalone(SandboxConfig::default()).await;
    assert_eq!(
        sandbox.provider.lookup(&lookup("prop-9")).await.unwrap(),
        None
    );
    assert!(
        sandbox
            .provider
            .refunds_for_key(&lookup("prop-9"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(sandbox.state.ledger().total_refunds, 0);

    let outcome = sandbox.provider.refund(&refund("prop-9")).await.unwrap();
    let found = sandbox.provider.lookup(&lookup("prop-9")).await.unwrap();
    assert_eq!(found.as_ref(), outcome.refund());
}

#[tokio::test]
async fn the_refund_list_filters_by_key_and_otherwise_lists_the_whole_ledger() {
    let sandbox = spawn(SandboxConfig::default()).await;
    for key in ["a", "b", "c"] {
        sandbox.provider.refund(&refund(key)).await.unwrap();
    }
    let all: Value = sandbox
        .http
        .get(format!("{}/v1/refunds", sandbox.base_url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(all["data"].as_array().unwrap().len(), 3);
    let only_b = sandbox
        .provider
        .refunds_for_key(&lookup("b"))
        .await
        .unwrap();
    assert_eq!(only_b.len(), 1);
    assert_eq!(only_b[0].idempotency_key, "b");
}

#[tokio::test]
async fn a_wrong_base_url_is_not_mistaken_for_no_refund() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let misconfigured = SandboxProvider::new(
        &format!("{}/wrong/mount", sandbox.base_url),
        sandbox.state.secret_key(),
        HttpTimeouts::default(),
    )
    .unwrap();
    let err = misconfigured.lookup(&lookup("prop-1")).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::Unknown { ref reason } if reason.contains("404")),
        "{err:?}"
    );
}
