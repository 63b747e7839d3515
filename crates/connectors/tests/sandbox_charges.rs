//! The sandbox models charges like Stripe: each payment has an amount and an
//! amount refunded, a refund over what is left is refused the way Stripe
//! refuses it, and refunds made through another channel count too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use common::{Sandbox, refund_of, spawn_without_charges};
use connectors::sandbox::{ChargeSeed, ChargeSource, IDEMPOTENT_REPLAYED, SandboxConfig};
use connectors::{HttpTimeouts, PaymentProvider, ProviderError, RefundOutcome};
use serde_json::{Value, json};

async fn sandbox() -> Sandbox {
    spawn_without_charges(SandboxConfig::default(), HttpTimeouts::default()).await
}

fn declined_code(outcome: &RefundOutcome) -> Option<&str> {
    match outcome {
        RefundOutcome::Declined { code, .. } => Some(code),
        _ => None,
    }
}

#[tokio::test]
async fn a_customer_payment_created_over_http_is_read_back_with_what_is_refunded() {
    let sandbox = sandbox().await;
    let created: Value = sandbox
        .http
        .post(format!("{}/v1/charges", sandbox.base_url))
        .json(&json!({"id": "pay_4821", "amount_minor": 7900, "currency": "eur"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        created,
        json!({"id": "pay_4821", "amount_minor": 7900, "currency": "EUR",
               "amount_refunded_minor": 0, "refunded": false, "refunds": []})
    );

    let generated = sandbox
        .provider
        .create_charge(None, 500, "USD")
        .await
        .unwrap();
    assert!(generated.id.starts_with("pay_sbx_"), "{}", generated.id);

    // The same payment again is idempotent; another amount under its id is not.
    let again = sandbox
        .provider
        .create_charge(Some("pay_4821"), 7900, "EUR")
        .await
        .unwrap();
    assert_eq!(again.amount_minor, 7900);
    let conflict = sandbox
        .http
        .post(format!("{}/v1/charges", sandbox.base_url))
        .json(&json!({"id": "pay_4821", "amount_minor": 100, "currency": "EUR"}))
        .send()
        .await
        .unwrap();
    assert_eq!(conflict.status(), 409);
    let err = sandbox
        .provider
        .create_charge(Some("pay_4821"), 100, "EUR")
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Rejected { status: 409, ref message } if message.contains("7900")),
        "{err:?}"
    );

    sandbox
        .provider
        .refund(&refund_of("prop-1", "pay_4821", 2900))
        .await
        .unwrap();
    let read: Value = sandbox
        .http
        .get(format!("{}/v1/charges/pay_4821", sandbox.base_url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(read["amount_refunded_minor"], 2900);
    assert_eq!(read["refunded"], false);
    assert_eq!(read["refunds"][0]["idempotency_key"], "prop-1");
}

#[tokio::test]
async fn an_unknown_charge_reads_as_stripe_resource_missing() {
    let sandbox = sandbox().await;
    let response = sandbox
        .http
        .get(format!("{}/v1/charges/pay_nope", sandbox.base_url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({"error": {"type": "invalid_request_error", "code": "resource_missing",
                         "message": "No such charge: 'pay_nope'"}})
    );
    // Through the client, a status query that gets no charge is unknown,
    // never "nothing refunded".
    let err = sandbox.provider.charge("pay_nope").await.unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
}

#[tokio::test]
async fn a_second_full_refund_of_a_payment_is_refused_so_the_customer_is_not_paid_twice() {
    let sandbox = sandbox().await;
    sandbox.state.add_charge("pay_4821", 7900, "EUR").unwrap();

    let first = sandbox
        .provider
        .refund(&refund_of("prop-1", "pay_4821", 5000))
        .await
        .unwrap();
    assert!(matches!(first, RefundOutcome::Succeeded(_)), "{first:?}");
    let too_large = sandbox
        .provider
        .refund(&refund_of("prop-2", "pay_4821", 3000))
        .await
        .unwrap();
    assert_eq!(declined_code(&too_large), Some("amount_too_large"));
    let RefundOutcome::Declined { message, .. } = &too_large else {
        unreachable!()
    };
    assert!(
        message.contains("3000") && message.contains("2900"),
        "the message names both amounts: {message}"
    );
    let rest = sandbox
        .provider
        .refund(&refund_of("prop-3", "pay_4821", 2900))
        .await
        .unwrap();
    assert!(matches!(rest, RefundOutcome::Succeeded(_)), "{rest:?}");
    let already = sandbox
        .provider
        .refund(&refund_of("prop-4", "pay_4821", 7900))
        .await
        .unwrap();
    assert_eq!(declined_code(&already), Some("charge_already_refunded"));

    // A refusal is stored under its key and replayed, as Stripe does once a
    // request began executing.
    let replay = sandbox
        .http
        .post(format!("{}/v1/refunds", sandbox.base_url))
        .header("Idempotency-Key", "prop-2")
        .json(
            &json!({"payment_reference": "pay_4821", "amount_minor": 3000,
                      "currency": "EUR", "metadata": {"proposal_id": "prop-2"}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 400);
    assert_eq!(replay.headers()[IDEMPOTENT_REPLAYED], "true");
    let body: Value = replay.json().await.unwrap();
    assert_eq!(body["error"]["code"], "amount_too_large");

    let charge = sandbox.provider.charge("pay_4821").await.unwrap();
    assert_eq!(charge.amount_refunded_minor, 7900);
    assert_eq!(charge.remaining_minor(), 0);
    assert_eq!(charge.refunds.len(), 2);
    assert_eq!(sandbox.state.ledger().total_refunds, 2);
}

#[tokio::test]
async fn concurrent_refunds_on_one_payment_can_never_together_exceed_it() {
    let sandbox = sandbox().await;
    sandbox.state.add_charge("pay_4821", 7900, "EUR").unwrap();

    let attempts = (0..16).map(|i| {
        let provider = sandbox.provider.clone();
        async move {
            provider
                .refund(&refund_of(&format!("prop-{i}"), "pay_4821", 5000))
                .await
                .unwrap()
        }
    });
    let outcomes = futures::future::join_all(attempts).await;

    let succeeded = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, RefundOutcome::Succeeded(_)))
        .count();
    let refused = outcomes
        .iter()
        .filter(|outcome| declined_code(outcome) == Some("amount_too_large"))
        .count();
    assert_eq!((succeeded, refused), (1, 15), "{outcomes:?}");
    let charge = sandbox.provider.charge("pay_4821").await.unwrap();
    assert_eq!(charge.amount_refunded_minor, 5000);
    assert_eq!(sandbox.state.ledger().total_refunds, 1);
}

#[tokio::test]
async fn a_refund_made_directly_at_the_provider_counts_so_ours_cannot_pay_again() {
    let sandbox = sandbox().await;
    sandbox.state.add_charge("pay_4821", 7900, "EUR").unwrap();
    // Someone refunds the whole payment at the provider, under a key of
    // their own and without our metadata.
    let other = sandbox
        .http
        .post(format!("{}/v1/refunds", sandbox.base_url))
        .header("Idempotency-Key", "dashboard-refund-1")
        .json(&json!({"payment_reference": "pay_4821", "amount_minor": 7900, "currency": "EUR"}))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);

    let charge = sandbox.provider.charge("pay_4821").await.unwrap();
    assert_eq!(charge.amount_refunded_minor, 7900);
    assert_eq!(charge.remaining_minor(), 0);
    assert_eq!(charge.refunds.len(), 1);
    assert_eq!(charge.refunds[0].idempotency_key, "dashboard-refund-1");
    assert!(charge.refunds_under_key("prop-17").is_empty());

    let ours = sandbox
        .provider
        .refund(&refund_of("prop-17", "pay_4821", 7900))
        .await
        .unwrap();
    assert_eq!(declined_code(&ours), Some("charge_already_refunded"));
    assert_eq!(sandbox.state.ledger().total_refunds, 1);
}

#[tokio::test]
async fn a_failed_refund_gives_the_money_back_and_a_pending_one_counts() {
    let sandbox = sandbox().await;
    sandbox
        .state
        .add_charge("pay_failed_1", 1000, "EUR")
        .unwrap();
    sandbox
        .state
        .add_charge("pay_pending_1", 1000, "EUR")
        .unwrap();
    for reference in ["pay_failed_1", "pay_pending_1"] {
        sandbox
            .provider
            .refund(&refund_of(&format!("k-{reference}"), reference, 1000))
            .await
            .unwrap();
    }
    let failed = sandbox.provider.charge("pay_failed_1").await.unwrap();
    assert_eq!(failed.amount_refunded_minor, 0);
    assert_eq!(failed.refunds.len(), 1, "the failed refund is still listed");
    let pending = sandbox.provider.charge("pay_pending_1").await.unwrap();
    assert_eq!(pending.amount_refunded_minor, 1000);
}

#[tokio::test]
async fn a_refund_in_another_currency_than_the_payment_is_refused_with_both_named() {
    let sandbox = sandbox().await;
    sandbox.state.add_charge("pay_4821", 7900, "EUR").unwrap();
    let mut request = refund_of("prop-usd", "pay_4821", 100);
    request.currency = "USD".to_owned();
    let err = sandbox.provider.refund(&request).await.unwrap_err();
    let ProviderError::Rejected {
        status: 400,
        message,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert!(
        message.contains("USD") && message.contains("EUR"),
        "{message}"
    );
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
}

#[tokio::test]
async fn a_refund_of_a_payment_the_sandbox_does_not_know_goes_to_a_person_and_can_be_sent_later() {
    let sandbox = sandbox().await;
    let request = refund_of("prop-1", "pay_4821", 7900);
    let err = sandbox.provider.refund(&request).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::Configuration { status: 404, ref message } if message.contains("pay_4821")),
        "{err:?}"
    );
    assert!(!err.may_have_executed());
    // Not stored under the key: once the payment is known, the same
    // request executes.
    sandbox.state.add_charge("pay_4821", 7900, "EUR").unwrap();
    let outcome = sandbox.provider.refund(&request).await.unwrap();
    assert!(
        matches!(outcome, RefundOutcome::Succeeded(_)),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_reference_the_sandbox_cannot_hold_is_refused_before_sending() {
    let sandbox = sandbox().await;
    let too_long = format!("pay_{}", "x".repeat(252));
    for reference in ["", "pay 1", "pay_é", too_long.as_str()] {
        let err = sandbox.provider.check_reference(reference).unwrap_err();
        assert!(
            matches!(err, ProviderError::InvalidRequest { ref message } if message.contains("255") || message.contains("printable ASCII")),
            "{reference:?}: {err:?}"
        );
        let sent = sandbox
            .provider
            .refund(&refund_of("prop-1", reference, 100))
            .await
            .unwrap_err();
        assert!(matches!(sent, ProviderError::InvalidRequest { .. }));
    }
    assert_eq!(
        sandbox
            .provider
            .check_reference(&format!("pay_{}", "x".repeat(251))),
        Ok(())
    );
    assert_eq!(sandbox.state.fault_status().requests_seen, 0);
}

/// Knows one payment, and counts how often it is asked.
struct Shop {
    asked: AtomicUsize,
}

#[async_trait]
impl ChargeSource for Shop {
    async fn charge(&self, id: &str) -> Option<ChargeSeed> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        (id == "pay_4821").then(|| ChargeSeed {
            amount_minor: 7900,
            currency: "eur".to_owned(),
            amount_refunded_minor: 2900,
        })
    }
}

#[tokio::test]
async fn after_a_restart_the_sandbox_learns_the_shops_payments_from_its_charge_source() {
    let sandbox = sandbox().await;
    let shop = Arc::new(Shop {
        asked: AtomicUsize::new(0),
    });
    sandbox.state.set_charge_source(shop.clone());

    let charge = sandbox.provider.charge("pay_4821").await.unwrap();
    assert_eq!(charge.amount_minor, 7900);
    assert_eq!(charge.currency, "EUR");
    assert_eq!(
        charge.amount_refunded_minor, 2900,
        "what the shop had refunded"
    );
    assert_eq!(shop.asked.load(Ordering::SeqCst), 1);

    // Known now: the registry answers, counting refunds made here.
    let outcome = sandbox
        .provider
        .refund(&refund_of("prop-1", "pay_4821", 6000))
        .await
        .unwrap();
    assert_eq!(declined_code(&outcome), Some("amount_too_large"));
    assert_eq!(shop.asked.load(Ordering::SeqCst), 1);

    // A refund naming a payment nobody knows: asked once, then 404.
    let err = sandbox
        .provider
        .refund(&refund_of("prop-2", "pay_other", 100))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Configuration { status: 404, .. }),
        "{err:?}"
    );
    assert_eq!(shop.asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_refund_is_the_first_request_to_name_a_payment_the_charge_source_knows() {
    let sandbox = sandbox().await;
    sandbox.state.set_charge_source(Arc::new(Shop {
        asked: AtomicUsize::new(0),
    }));
    let outcome = sandbox
        .provider
        .refund(&refund_of("prop-1", "pay_4821", 5000))
        .await
        .unwrap();
    assert!(
        matches!(outcome, RefundOutcome::Succeeded(_)),
        "{outcome:?}"
    );
    let charge = sandbox.state.charge("pay_4821").await.unwrap();
    assert_eq!(charge.amount_refunded_minor, 7900);
    assert!(charge.refunded);
}
