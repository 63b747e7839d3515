//! Status queries through the Stripe connector: list the payment's refunds
//! and keep those made under the key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod stripe_support;

use connectors::stripe::StripeConfig;
use connectors::{HttpTimeouts, PaymentProvider, ProviderError, ProviderRefundStatus};
use secrecy::SecretString;
use serde_json::json;
use stripe_support::{SECRET, lookup, provider, stripe_refund};
use wiremock::matchers::{header, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn lookup_lists_the_payments_refunds_and_keeps_only_those_made_under_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .and(header("authorization", format!("Bearer {SECRET}").as_str()))
        .and(query_param("payment_intent", "pi_4821"))
        .and(query_param("limit", "100"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list", "has_more": false, "url": "/v1/refunds",
            "data": [
                stripe_refund("re_other", "prop-99", "succeeded", 3),
                stripe_refund("re_ours", "prop-17", "succeeded", 2),
                {"id": "re_manual", "object": "refund", "amount": 100, "currency": "eur",
                 "status": "succeeded", "created": 1, "payment_intent": "pi_4821", "metadata": {}}
            ]
        })))
        .expect(2)
        .mount(&server)
        .await;
    let stripe = provider(&server);

    let found = stripe.lookup(&lookup()).await.unwrap().unwrap();
    let all = stripe.refunds_for_key(&lookup()).await.unwrap();

    assert_eq!(found.provider_refund_id, "re_ours");
    assert_eq!(found.status, ProviderRefundStatus::Succeeded);
    assert_eq!(all.len(), 1);
}

#[tokio::test]
async fn lookup_follows_pages_until_has_more_is_false() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .and(query_param_is_missing("starting_after"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list", "has_more": true,
            "data": [stripe_refund("re_new", "prop-17", "succeeded", 20)]
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .and(query_param("starting_after", "re_new"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list", "has_more": false,
            "data": [stripe_refund("re_old", "prop-17", "succeeded", 10)]
        })))
        .expect(1)
        .mount(&server)
        .await;

    let all = provider(&server).refunds_for_key(&lookup()).await.unwrap();

    let ids: Vec<&str> = all.iter().map(|r| r.provider_refund_id.as_str()).collect();
    assert_eq!(ids, vec!["re_old", "re_new"], "oldest first, both pages");
}

#[tokio::test]
async fn lookup_with_no_refund_under_the_key_finds_none() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list", "has_more": false,
            "data": [stripe_refund("re_other", "prop-99", "succeeded", 3)]
        })))
        .mount(&server)
        .await;
    assert_eq!(provider(&server).lookup(&lookup()).await.unwrap(), None);
}

#[tokio::test]
async fn a_failed_lookup_is_unknown_never_none() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    let err = provider(&server).lookup(&lookup()).await.unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
}

#[tokio::test]
async fn the_secret_key_never_shows_in_debug_output() {
    let server = MockServer::start().await;
    let stripe = provider(&server);
    assert!(!format!("{stripe:?}").contains(SECRET));
    let config = StripeConfig {
        base_url: server.uri(),
        secret_key: SecretString::from(SECRET),
        timeouts: HttpTimeouts::default(),
    };
    assert!(!format!("{config:?}").contains(SECRET));
}
