//! Refunds through the Stripe connector against a mock Stripe: the form we
//! send and how every answer is read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod stripe_support;

use std::time::Duration;

use connectors::{HttpTimeouts, PaymentProvider, ProviderError, RefundOutcome};
use serde_json::json;
use stripe_support::{
    FormIs, SECRET, provider, provider_with, refund_answering, request, stripe_error, stripe_refund,
};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn a_refund_is_posted_as_stripe_form_with_bearer_key_and_idempotency_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/refunds"))
        .and(header("authorization", format!("Bearer {SECRET}").as_str()))
        .and(header("idempotency-key", "prop-17"))
        .and(header("content-type", "application/x-www-form-urlencoded"))
        .and(FormIs(vec![
            ("payment_intent", "pi_4821"),
            ("amount", "7900"),
            ("metadata[proposal_id]", "prop-17"),
            ("metadata[idempotency_key]", "prop-17"),
        ]))
        .respond_with(ResponseTemplate::new(200).set_body_json(stripe_refund(
            "re_1",
            "prop-17",
            "succeeded",
            1_700_000_000,
        )))
        .expect(1)
        .mount(&server)
        .await;

    let outcome = provider(&server).refund(&request("pi_4821")).await.unwrap();

    let RefundOutcome::Succeeded(refund) = outcome else {
        panic!("expected success, got {outcome:?}");
    };
    assert_eq!(refund.provider_refund_id, "re_1");
    assert_eq!(refund.currency, "EUR");
    assert_eq!(refund.amount_minor, 7900);
    assert_eq!(refund.payment_reference, "pi_4821");
    assert_eq!(refund.created_at.timestamp(), 1_700_000_000);
    assert_eq!(refund.raw["object"], "refund");
}

#[tokio::test]
async fn a_charge_reference_is_sent_as_charge() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/refunds"))
        .and(FormIs(vec![
            ("charge", "ch_4821"),
            ("amount", "7900"),
            ("metadata[proposal_id]", "prop-17"),
            ("metadata[idempotency_key]", "prop-17"),
        ]))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(stripe_refund("re_1", "prop-17", "pending", 1)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let outcome = provider(&server).refund(&request("ch_4821")).await.unwrap();
    assert!(matches!(outcome, RefundOutcome::Pending(_)), "{outcome:?}");
}

#[tokio::test]
async fn a_replayed_answer_returns_the_same_refund() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/refunds"))
        .and(header("idempotency-key", "prop-17"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Idempotent-Replayed", "true")
                .set_body_json(stripe_refund("re_1", "prop-17", "succeeded", 1)),
        )
        .expect(2)
        .mount(&server)
        .await;
    let stripe = provider(&server);
    let first = stripe.refund(&request("pi_4821")).await.unwrap();
    let second = stripe.refund(&request("pi_4821")).await.unwrap();
    assert_eq!(first, second);
}

#[tokio::test]
async fn a_card_error_is_a_decline() {
    let outcome = refund_answering(ResponseTemplate::new(402).set_body_json(json!({
        "error": {"type": "card_error", "code": "card_declined", "decline_code": "expired_card", "message": "Your card has expired."}
    })))
    .await
    .unwrap();
    assert_eq!(
        outcome,
        RefundOutcome::Declined {
            code: "expired_card".to_owned(),
            message: "Your card has expired.".to_owned()
        }
    );
}

#[tokio::test]
async fn an_already_refunded_charge_is_a_decline() {
    let outcome = refund_answering(ResponseTemplate::new(400).set_body_json(stripe_error(
        "invalid_request_error",
        "charge_already_refunded",
        "Charge ch_4821 has already been refunded.",
    )))
    .await
    .unwrap();
    assert!(
        matches!(&outcome, RefundOutcome::Declined { code, .. } if code == "charge_already_refunded"),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn an_idempotency_error_means_the_key_was_reused_with_other_parameters() {
    let err = refund_answering(ResponseTemplate::new(400).set_body_json(stripe_error(
        "idempotency_error",
        "",
        "Keys for idempotent requests can only be used with the same parameters they were first used with.",
    )))
    .await
    .unwrap_err();
    assert!(
        matches!(err, ProviderError::KeyReusedWithDifferentParameters { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_concurrent_request_with_the_same_key_is_in_flight() {
    let err = refund_answering(ResponseTemplate::new(409).set_body_json(stripe_error(
        "idempotency_error",
        "",
        "There is currently another in-progress request using this Idempotency Key.",
    )))
    .await
    .unwrap_err();
    assert_eq!(err, ProviderError::InFlight);
}

#[tokio::test]
async fn rate_limiting_carries_retry_after() {
    let err = refund_answering(
        ResponseTemplate::new(429)
            .insert_header("Retry-After", "2")
            .set_body_json(stripe_error(
                "rate_limit_error",
                "rate_limit",
                "Too many requests",
            )),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(2))
        }
    );
}

#[tokio::test]
async fn a_server_error_is_unknown_not_a_failure() {
    let err = refund_answering(ResponseTemplate::new(500).set_body_json(stripe_error(
        "api_error",
        "",
        "Something went wrong",
    )))
    .await
    .unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
}

#[tokio::test]
async fn an_unreadable_success_is_unknown_not_a_failure() {
    let err = refund_answering(ResponseTemplate::new(200).set_body_string("<html>"))
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
}

#[tokio::test]
async fn a_rolled_or_restricted_key_sends_the_refund_to_a_person_not_to_failed() {
    for status in [401, 403] {
        let err = refund_answering(ResponseTemplate::new(status).set_body_json(stripe_error(
            "invalid_request_error",
            "",
            "Invalid API Key provided: sk_test_****",
        )))
        .await
        .unwrap_err();
        assert!(
            matches!(err, ProviderError::Configuration { status: s, .. } if s == status),
            "HTTP {status}: {err:?}"
        );
        assert!(!err.may_have_executed());
    }
}

#[tokio::test]
async fn a_payment_stripe_does_not_know_sends_the_refund_to_a_person_not_to_failed() {
    let err = refund_answering(ResponseTemplate::new(404).set_body_json(stripe_error(
        "invalid_request_error",
        "resource_missing",
        "No such payment_intent: 'pi_4821'",
    )))
    .await
    .unwrap_err();
    assert!(
        matches!(err, ProviderError::Configuration { status: 404, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_stored_500_replayed_under_the_key_is_escalated_instead_of_resent_for_a_day() {
    let err = refund_answering(
        ResponseTemplate::new(500)
            .insert_header("Idempotent-Replayed", "true")
            .set_body_json(stripe_error("api_error", "", "An unknown error occurred")),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, ProviderError::ReplayedError { status: 500, .. }),
        "{err:?}"
    );
    assert!(
        err.may_have_executed(),
        "the original 500 may have executed"
    );
}

#[tokio::test]
async fn a_fresh_500_stays_unknown_so_the_engine_asks_again() {
    let err = refund_answering(ResponseTemplate::new(500).set_body_json(stripe_error(
        "api_error",
        "",
        "An unknown error occurred",
    )))
    .await
    .unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
}

#[tokio::test]
async fn a_slow_answer_beyond_the_client_timeout_is_unknown() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/refunds"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(stripe_refund("re_1", "prop-17", "succeeded", 1))
                .set_delay(Duration::from_millis(500)),
        )
        .mount(&server)
        .await;
    let stripe = provider_with(
        &server,
        HttpTimeouts {
            connect: Duration::from_millis(500),
            request: Duration::from_millis(100),
        },
    );
    let err = stripe.refund(&request("pi_4821")).await.unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
    assert!(err.may_have_executed());
}

#[tokio::test]
async fn a_reference_stripe_cannot_address_is_refused_before_sending() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&server)
        .await;
    let err = provider(&server)
        .refund(&request("pay_4821"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::InvalidRequest { .. }),
        "{err:?}"
    );
}
