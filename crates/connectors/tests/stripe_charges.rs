//! What Stripe holds for a payment (its amount, what is refunded, every
//! refund on it), the pinned API version, and status queries that fail: an
//! outcome asked about stays unknown whatever went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod stripe_support;

use connectors::stripe::STRIPE_VERSION;
use connectors::{PaymentProvider, ProviderError, ProviderRefundStatus};
use serde_json::{Value, json};
use stripe_support::{SECRET, lookup, provider, request, stripe_error, stripe_refund};
use wiremock::matchers::{header, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn refund_on(id: &str, key: Option<&str>, amount: i64, status: &str, created: i64) -> Value {
    let metadata = key.map_or_else(|| json!({}), |key| json!({"idempotency_key": key}));
    json!({
        "id": id, "object": "refund", "amount": amount, "currency": "eur",
        "status": status, "created": created, "payment_intent": "pi_4821",
        "charge": "ch_4821", "metadata": metadata
    })
}

fn list(data: Vec<Value>, has_more: bool) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "object": "list", "url": "/v1/refunds", "has_more": has_more, "data": data
    }))
}

fn payment_intent() -> Value {
    json!({
        "id": "pi_4821", "object": "payment_intent", "amount": 7900,
        "amount_received": 7900, "currency": "eur", "status": "succeeded",
        "latest_charge": {
            "id": "ch_4821", "object": "charge", "amount": 7900,
            "amount_captured": 7900, "amount_refunded": 7900, "currency": "eur"
        }
    })
}

#[tokio::test]
async fn a_refund_made_at_stripe_by_someone_else_shows_on_the_payment_intent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/payment_intents/pi_4821"))
        .and(query_param("expand[]", "latest_charge"))
        .and(header("authorization", format!("Bearer {SECRET}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(payment_intent()))
        .expect(1)
        .mount(&server)
        .await;
    // Two pages, newest first as Stripe lists them: ours, then one made in
    // the Dashboard without our metadata.
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .and(query_param("payment_intent", "pi_4821"))
        .and(query_param_is_missing("starting_after"))
        .respond_with(list(
            vec![refund_on("re_ours", Some("prop-17"), 2900, "pending", 20)],
            true,
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .and(query_param("payment_intent", "pi_4821"))
        .and(query_param("starting_after", "re_ours"))
        .respond_with(list(
            vec![refund_on("re_dashboard", None, 5000, "succeeded", 10)],
            false,
        ))
        .expect(1)
        .mount(&server)
        .await;

    let charge = provider(&server).charge("pi_4821").await.unwrap();

    assert_eq!(charge.payment_reference, "pi_4821");
    assert_eq!(charge.amount_minor, 7900);
    assert_eq!(charge.currency, "EUR");
    assert_eq!(charge.amount_refunded_minor, 7900);
    assert_eq!(charge.remaining_minor(), 0);
    let ids: Vec<&str> = charge
        .refunds
        .iter()
        .map(|refund| refund.provider_refund_id.as_str())
        .collect();
    assert_eq!(ids, vec!["re_dashboard", "re_ours"], "oldest first");
    assert_eq!(charge.refunds[0].idempotency_key, "", "made elsewhere");
    assert_eq!(charge.refunds_under_key("prop-17").len(), 1);
    assert_eq!(charge.refunds[1].status, ProviderRefundStatus::Pending);
    assert_eq!(charge.raw["id"], "pi_4821");
}

#[tokio::test]
async fn refunds_on_an_earlier_charge_of_the_payment_intent_are_not_missed() {
    // The latest charge counts nothing refunded, but the PaymentIntent's
    // refund list holds a refund (made on an earlier charge).
    let server = MockServer::start().await;
    let mut intent = payment_intent();
    intent["latest_charge"]["amount_refunded"] = json!(0);
    Mock::given(method("GET"))
        .and(path("/v1/payment_intents/pi_4821"))
        .respond_with(ResponseTemplate::new(200).set_body_json(intent))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .respond_with(list(
            vec![
                refund_on("re_failed", None, 7900, "failed", 11),
                refund_on("re_early", None, 3000, "succeeded", 10),
            ],
            false,
        ))
        .mount(&server)
        .await;

    let charge = provider(&server).charge("pi_4821").await.unwrap();

    assert_eq!(
        charge.amount_refunded_minor, 3000,
        "a failed refund gave the money back"
    );
    assert_eq!(charge.remaining_minor(), 4900);
}

#[tokio::test]
async fn a_charge_reference_reads_the_charge_and_its_refunds() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/charges/ch_4821"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "ch_4821", "object": "charge", "amount": 12900, "amount_captured": 12900,
            "amount_refunded": 2000, "currency": "usd", "refunded": false
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .and(query_param("charge", "ch_4821"))
        .and(query_param("limit", "100"))
        .respond_with(list(
            vec![json!({
                "id": "re_1", "object": "refund", "amount": 2000, "currency": "usd",
                "status": "succeeded", "created": 5, "charge": "ch_4821",
                "metadata": {"proposal_id": "prop-3"}
            })],
            false,
        ))
        .expect(1)
        .mount(&server)
        .await;

    let charge = provider(&server).charge("ch_4821").await.unwrap();

    assert_eq!(charge.amount_minor, 12900);
    assert_eq!(charge.currency, "USD");
    assert_eq!(charge.amount_refunded_minor, 2000);
    assert_eq!(charge.remaining_minor(), 10900);
    assert_eq!(
        charge.refunds[0].idempotency_key, "prop-3",
        "the proposal id stands in for the key"
    );
}

/// A Stripe whose every status query answers `template`.
async fn queries_answering(template: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(template)
        .mount(&server)
        .await;
    server
}

fn assert_unknown(result: Result<impl std::fmt::Debug, ProviderError>, what: &str) {
    let err = result.unwrap_err();
    assert!(
        matches!(err, ProviderError::Unknown { .. }),
        "{what}: {err:?}"
    );
    assert!(err.may_have_executed(), "{what}");
}

#[tokio::test]
async fn a_status_query_that_fails_in_any_way_leaves_the_refund_unknown_never_failed() {
    let failures = [
        (
            "401 rolled key",
            ResponseTemplate::new(401).set_body_json(stripe_error(
                "invalid_request_error",
                "",
                "Invalid API Key provided: sk_test_****",
            )),
        ),
        (
            "403 restricted key",
            ResponseTemplate::new(403).set_body_json(stripe_error(
                "invalid_request_error",
                "",
                "The provided key does not have the required permissions",
            )),
        ),
        (
            "404",
            ResponseTemplate::new(404).set_body_json(stripe_error(
                "invalid_request_error",
                "resource_missing",
                "No such payment_intent: 'pi_4821'",
            )),
        ),
        (
            "402 card_error",
            ResponseTemplate::new(402).set_body_json(stripe_error("card_error", "x", "declined")),
        ),
        ("500", ResponseTemplate::new(500)),
        (
            "malformed 200",
            ResponseTemplate::new(200).set_body_string("<html>"),
        ),
        (
            "200 without the expected fields",
            ResponseTemplate::new(200).set_body_json(json!({"object": "list"})),
        ),
    ];
    for (what, template) in failures {
        let server = queries_answering(template).await;
        let stripe = provider(&server);
        assert_unknown(stripe.lookup(&lookup()).await, what);
        assert_unknown(stripe.refunds_for_key(&lookup()).await, what);
        assert_unknown(stripe.charge("pi_4821").await, what);
        assert_unknown(stripe.charge("ch_4821").await, what);
    }
}

#[tokio::test]
async fn a_payment_intent_answer_without_amount_refunded_is_unknown_not_zero() {
    let server = MockServer::start().await;
    let mut intent = payment_intent();
    intent["latest_charge"]
        .as_object_mut()
        .unwrap()
        .remove("amount_refunded");
    Mock::given(method("GET"))
        .and(path("/v1/payment_intents/pi_4821"))
        .respond_with(ResponseTemplate::new(200).set_body_json(intent))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .respond_with(list(vec![], false))
        .mount(&server)
        .await;
    assert_unknown(
        provider(&server).charge("pi_4821").await,
        "no amount_refunded",
    );
}

#[tokio::test]
async fn a_rate_limited_status_query_says_when_to_ask_again() {
    let server =
        queries_answering(ResponseTemplate::new(429).insert_header("Retry-After", "2")).await;
    let err = provider(&server).charge("pi_4821").await.unwrap_err();
    assert!(
        matches!(err, ProviderError::RateLimited { retry_after: Some(d) } if d.as_secs() == 2),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_reference_stripe_cannot_hold_is_refused_with_the_accepted_forms_before_any_call() {
    let server = MockServer::start().await;
    let stripe = provider(&server);
    for reference in ["pay_4821", "pi_", "pi_12 34"] {
        let err = stripe.check_reference(reference).unwrap_err();
        let ProviderError::InvalidRequest { message } = &err else {
            panic!("{reference}: {err:?}");
        };
        assert!(message.contains("pi_"), "{message}");
        assert!(matches!(
            stripe.charge(reference).await,
            Err(ProviderError::InvalidRequest { .. })
        ));
    }
    for reference in ["pi_3Mtw", "ch_3Mtw", "py_3Mtw"] {
        assert_eq!(stripe.check_reference(reference), Ok(()));
    }
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn every_call_pins_the_stripe_api_version_so_an_account_upgrade_cannot_change_what_we_read() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/refunds"))
        .respond_with(ResponseTemplate::new(200).set_body_json(stripe_refund(
            "re_1",
            "prop-17",
            "succeeded",
            1,
        )))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .respond_with(list(vec![], false))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/payment_intents/pi_4821"))
        .respond_with(ResponseTemplate::new(200).set_body_json(payment_intent()))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/charges/ch_4821"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "ch_4821", "amount": 7900, "amount_refunded": 0, "currency": "eur"
        })))
        .mount(&server)
        .await;
    let stripe = provider(&server);

    stripe.refund(&request("pi_4821")).await.unwrap();
    stripe.lookup(&lookup()).await.unwrap();
    stripe.refunds_for_key(&lookup()).await.unwrap();
    stripe.charge("pi_4821").await.unwrap();
    stripe.charge("ch_4821").await.unwrap();

    let requests = server.received_requests().await.unwrap();
    let paths: std::collections::BTreeSet<String> = requests
        .iter()
        .map(|request| format!("{} {}", request.method, request.url.path()))
        .collect();
    assert_eq!(
        paths.into_iter().collect::<Vec<_>>(),
        vec![
            "GET /v1/charges/ch_4821",
            "GET /v1/payment_intents/pi_4821",
            "GET /v1/refunds",
            "POST /v1/refunds",
        ]
    );
    for request in &requests {
        assert_eq!(
            request
                .headers
                .get("stripe-version")
                .and_then(|value| value.to_str().ok()),
            Some(STRIPE_VERSION),
            "{} {}",
            request.method,
            request.url
        );
    }
}
