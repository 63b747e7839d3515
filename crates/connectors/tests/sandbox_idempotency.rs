//! The sandbox keeps Stripe's idempotency promises over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{lookup, refund, refund_body, refund_of, spawn};
use connectors::sandbox::{
    FaultMode, FaultPlan, FaultRule, IDEMPOTENT_REPLAYED, LedgerView, SandboxConfig, SandboxRefund,
};
use connectors::{PaymentProvider, ProviderError, RefundOutcome};
use futures::future::join_all;
use serde_json::Value;

#[tokio::test]
async fn a_resend_replays_the_same_refund_with_the_idempotent_replayed_header() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let url = format!("{}/v1/refunds", sandbox.base_url);
    let send = || {
        sandbox
            .http
            .post(&url)
            .header("Idempotency-Key", "prop-17")
            .json(&refund_body(7900))
            .send()
    };

    let first = send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert!(first.headers().get(IDEMPOTENT_REPLAYED).is_none());
    let first: SandboxRefund = first.json().await.unwrap();

    let second = send().await.unwrap();
    assert_eq!(second.status(), 200);
    assert_eq!(second.headers()[IDEMPOTENT_REPLAYED], "true");
    let second: SandboxRefund = second.json().await.unwrap();

    assert_eq!(first, second);
    assert_eq!(sandbox.state.ledger().count_for("prop-17"), 1);
}

#[tokio::test]
async fn the_client_gets_the_same_refund_back_when_it_resends() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let first = sandbox.provider.refund(&refund("prop-1")).await.unwrap();
    let second = sandbox.provider.refund(&refund("prop-1")).await.unwrap();
    let RefundOutcome::Succeeded(refund) = &first else {
        panic!("expected success, got {first:?}");
    };
    assert_eq!(first, second);
    assert_eq!(refund.amount_minor, 7900);
    assert_eq!(refund.currency, "EUR");
    assert_eq!(refund.idempotency_key, "prop-1");
    assert_eq!(refund.raw["metadata"]["proposal_id"], "prop-1");
    assert_eq!(sandbox.provider.ledger().await.unwrap().total_refunds, 1);
}

#[tokio::test]
async fn same_key_with_different_amount_is_refused_with_422() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let url = format!("{}/v1/refunds", sandbox.base_url);
    for (amount, expected) in [(7900, 200), (7000, 422)] {
        let response = sandbox
            .http
            .post(&url)
            .header("Idempotency-Key", "prop-17")
            .json(&refund_body(amount))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), expected);
        if expected == 422 {
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"]["type"], "idempotency_error");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("amount_minor")
            );
        }
    }

    let err = sandbox
        .provider
        .refund(&refund_of("prop-17", "pay_4821", 1))
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        ProviderError::KeyReusedWithDifferentParameters { .. }
    ));
    assert_eq!(sandbox.state.ledger().count_for("prop-17"), 1);
}

#[tokio::test]
async fn concurrent_resends_during_latency_get_409_and_only_one_refund_is_made() {
    let config = SandboxConfig::default().with_faults(FaultPlan::new(vec![FaultRule::always(
        FaultMode::Latency { ms: 300 },
    )]));
    let sandbox = spawn(config).await;
    let request = refund("prop-busy");

    let results = join_all((0..8).map(|_| sandbox.provider.refund(&request))).await;

    let succeeded = results
        .iter()
        .filter(|r| matches!(r, Ok(RefundOutcome::Succeeded(_))))
        .count();
    let in_flight = results
        .iter()
        .filter(|r| matches!(r, Err(ProviderError::InFlight)))
        .count();
    assert_eq!((succeeded, in_flight), (1, 7), "{results:?}");
    assert_eq!(sandbox.state.ledger().count_for("prop-busy"), 1);
}

#[tokio::test]
async fn sixty_four_concurrent_identical_requests_make_exactly_one_refund() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let request = refund("prop-64");

    let results = join_all((0..64).map(|_| sandbox.provider.refund(&request))).await;

    let mut refund_ids = Vec::new();
    for result in &results {
        match result {
            Ok(RefundOutcome::Succeeded(refund)) => {
                refund_ids.push(refund.provider_refund_id.clone())
            }
            Err(ProviderError::InFlight) => {}
            other => panic!("unexpected result {other:?}"),
        }
    }
    refund_ids.sort();
    refund_ids.dedup();
    assert_eq!(refund_ids.len(), 1, "every success names the same refund");

    let ledger: LedgerView = sandbox.provider.ledger().await.unwrap();
    assert_eq!(ledger.total_refunds, 1);
    assert_eq!(ledger.count_for("prop-64"), 1);
    assert!(ledger.duplicated_keys.is_empty());
    let listed = sandbox
        .provider
        .refunds_for_key(&lookup("prop-64"))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
}

#[tokio::test]
async fn a_key_is_forgotten_after_the_retention_window_but_the_ledger_keeps_its_refund() {
    let config = SandboxConfig::default().with_retention(Duration::from_secs(3600));
    let sandbox = spawn(config).await;
    let first = sandbox.provider.refund(&refund("prop-old")).await.unwrap();
    sandbox.state.advance_clock(Duration::from_secs(1800));
    let replayed = sandbox.provider.refund(&refund("prop-old")).await.unwrap();
    assert_eq!(first, replayed, "within retention the key replays");

    sandbox.state.advance_clock(Duration::from_secs(3600));
    let looked_up = sandbox.provider.lookup(&lookup("prop-old")).await.unwrap();
    assert_eq!(
        looked_up.as_ref(),
        first.refund(),
        "the ledger still holds it"
    );

    let fresh = sandbox.provider.refund(&refund("prop-old")).await.unwrap();
    assert_ne!(
        fresh.refund().map(|r| &r.provider_refund_id),
        first.refund().map(|r| &r.provider_refund_id),
        "after retention the same key executes again"
    );
    let ledger = sandbox.state.ledger();
    assert_eq!(ledger.count_for("prop-old"), 2);
    assert_eq!(ledger.duplicated_keys, vec!["prop-old".to_owned()]);
}
