//! Each injected fault reaches the client as the right outcome, and the
//! ledger tells the truth about what was executed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{HANG, SHORT_TIMEOUTS, lookup, refund, spawn, spawn_with_timeouts};
use connectors::sandbox::{FaultMode, FaultPlan, FaultRule, FaultUpdate, SandboxConfig};
use connectors::{PaymentProvider, ProviderError, RefundOutcome};

fn with_rules(rules: Vec<FaultRule>) -> SandboxConfig {
    SandboxConfig::default()
        .with_hang(HANG)
        .with_faults(FaultPlan::new(rules))
}

fn always(mode: FaultMode) -> SandboxConfig {
    with_rules(vec![FaultRule::always(mode)])
}

#[tokio::test]
async fn execute_then_timeout_is_unknown_and_the_later_lookup_finds_the_refund() {
    let sandbox = spawn_with_timeouts(always(FaultMode::ExecuteThenTimeout), SHORT_TIMEOUTS).await;

    let err = sandbox
        .provider
        .refund(&refund("prop-17"))
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
    assert!(err.may_have_executed());

    let found = sandbox.provider.lookup(&lookup("prop-17")).await.unwrap();
    let found = found.expect("the refund was executed before the timeout");
    assert_eq!(found.amount_minor, 7900);
    assert_eq!(sandbox.state.ledger().count_for("prop-17"), 1);
}

#[tokio::test]
async fn a_resend_after_execute_then_timeout_never_makes_a_second_refund() {
    let sandbox = spawn_with_timeouts(always(FaultMode::ExecuteThenTimeout), SHORT_TIMEOUTS).await;

    for _ in 0..3 {
        let err = sandbox
            .provider
            .refund(&refund("prop-17"))
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
    }
    assert_eq!(sandbox.state.ledger().count_for("prop-17"), 1);
    let all = sandbox
        .provider
        .refunds_for_key(&lookup("prop-17"))
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
}

#[tokio::test]
async fn a_retry_after_a_first_attempt_timeout_replays_the_executed_refund() {
    let config = with_rules(vec![
        FaultRule::always(FaultMode::ExecuteThenTimeout).first_attempt_only(),
    ]);
    let sandbox = spawn_with_timeouts(config, SHORT_TIMEOUTS).await;

    let err = sandbox
        .provider
        .refund(&refund("prop-17"))
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }));
    let retried = sandbox.provider.refund(&refund("prop-17")).await.unwrap();
    let looked_up = sandbox.provider.lookup(&lookup("prop-17")).await.unwrap();

    assert!(matches!(retried, RefundOutcome::Succeeded(_)));
    assert_eq!(retried.refund(), looked_up.as_ref());
    assert_eq!(sandbox.state.ledger().count_for("prop-17"), 1);
}

#[tokio::test]
async fn timeout_before_execute_is_unknown_and_the_lookup_finds_nothing() {
    let sandbox =
        spawn_with_timeouts(always(FaultMode::TimeoutBeforeExecute), SHORT_TIMEOUTS).await;

    let err = sandbox
        .provider
        .refund(&refund("prop-17"))
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");

    assert_eq!(
        sandbox.provider.lookup(&lookup("prop-17")).await.unwrap(),
        None
    );
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
}

#[tokio::test]
async fn timeout_before_execute_answers_504_to_a_patient_client() {
    let sandbox = spawn(always(FaultMode::TimeoutBeforeExecute)).await;
    let err = sandbox
        .provider
        .refund(&refund("prop-17"))
        .await
        .unwrap_err();
    let ProviderError::Unknown { reason } = err else {
        panic!("expected unknown, got {err:?}");
    };
    assert!(reason.contains("504"), "{reason}");
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
}

#[tokio::test]
async fn a_server_error_is_unknown_and_executes_nothing() {
    let sandbox = spawn(always(FaultMode::ServerError)).await;
    let err = sandbox
        .provider
        .refund(&refund("prop-17"))
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unknown { .. }), "{err:?}");
    assert_eq!(
        sandbox.provider.lookup(&lookup("prop-17")).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn rate_limiting_carries_retry_after_and_executes_nothing() {
    let sandbox = spawn(always(FaultMode::RateLimited)).await;
    let err = sandbox
        .provider
        .refund(&refund("prop-17"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(1))
        }
    );
    assert!(!err.may_have_executed());
    assert_eq!(sandbox.state.ledger().total_refunds, 0);
}

#[tokio::test]
async fn latency_delays_the_answer_but_the_refund_succeeds() {
    let sandbox = spawn(always(FaultMode::Latency { ms: 50 })).await;
    let outcome = sandbox.provider.refund(&refund("prop-17")).await.unwrap();
    assert!(matches!(outcome, RefundOutcome::Succeeded(_)));
    assert_eq!(sandbox.state.ledger().count_for("prop-17"), 1);
}

#[tokio::test]
async fn a_first_attempt_server_error_lets_the_retry_through() {
    let sandbox = spawn(with_rules(vec![
        FaultRule::always(FaultMode::ServerError).first_attempt_only(),
    ]))
    .await;
    let first = sandbox.provider.refund(&refund("prop-17")).await;
    let second = sandbox.provider.refund(&refund("prop-17")).await;
    assert!(matches!(first, Err(ProviderError::Unknown { .. })));
    assert!(matches!(second, Ok(RefundOutcome::Succeeded(_))));
    assert_eq!(sandbox.state.ledger().count_for("prop-17"), 1);
}

#[tokio::test]
async fn an_nth_request_rule_hits_only_that_request() {
    let sandbox = spawn(with_rules(vec![
        FaultRule::always(FaultMode::RateLimited).on_nth_request(2),
    ]))
    .await;
    let results = [
        sandbox.provider.refund(&refund("a")).await,
        sandbox.provider.refund(&refund("b")).await,
        sandbox.provider.refund(&refund("c")).await,
    ];
    assert!(matches!(results[0], Ok(RefundOutcome::Succeeded(_))));
    assert!(matches!(results[1], Err(ProviderError::RateLimited { .. })));
    assert!(matches!(results[2], Ok(RefundOutcome::Succeeded(_))));
}

/// Which of 24 distinct refunds met a fault, for a plan with probability 0.5.
async fn fault_pattern(seed: u64) -> (Vec<bool>, Vec<connectors::sandbox::FaultDecision>) {
    let config = with_rules(vec![
        FaultRule::always(FaultMode::ServerError).with_probability(0.5),
    ])
    .with_seed(seed);
    let sandbox = spawn(config).await;
    let mut faulted = Vec::new();
    for i in 0..24 {
        let result = sandbox.provider.refund(&refund(&format!("prop-{i}"))).await;
        faulted.push(result.is_err());
    }
    let executed = faulted.iter().filter(|f| !**f).count();
    assert_eq!(sandbox.state.ledger().total_refunds, executed);
    let history = sandbox.provider.fault_status().await.unwrap().history;
    (faulted, history)
}

#[tokio::test]
async fn the_same_seed_gives_the_same_fault_sequence_over_http() {
    let (first, first_history) = fault_pattern(42).await;
    let (second, second_history) = fault_pattern(42).await;
    let (other, _) = fault_pattern(43).await;

    assert_eq!(first, second);
    assert_eq!(first_history, second_history);
    assert_eq!(first_history.len(), 24);
    assert!(first.contains(&true) && first.contains(&false), "{first:?}");
    assert_ne!(first, other, "a different seed gives a different run");
}

#[tokio::test]
async fn faults_can_be_replaced_at_runtime_and_apply_by_key_prefix() {
    let sandbox = spawn(SandboxConfig::default()).await;
    assert!(sandbox.provider.refund(&refund("ok-1")).await.is_ok());

    let status = sandbox
        .provider
        .set_faults(&FaultUpdate {
            faults: FaultPlan::new(vec![
                FaultRule::always(FaultMode::ServerError).for_key_prefix("fail-"),
            ]),
            seed: Some(5),
            hang: Some(HANG),
            lookup_latency: None,
        })
        .await
        .unwrap();
    assert_eq!(status.seed, 5);
    assert_eq!(status.hang, HANG);
    assert_eq!(status.requests_seen, 0, "a new plan starts a new run");

    let failed = sandbox.provider.refund(&refund("fail-1")).await;
    let passed = sandbox.provider.refund(&refund("ok-2")).await;
    assert!(matches!(failed, Err(ProviderError::Unknown { .. })));
    assert!(matches!(passed, Ok(RefundOutcome::Succeeded(_))));
}

#[tokio::test]
async fn an_invalid_fault_plan_is_refused_and_the_old_one_kept() {
    let sandbox = spawn(SandboxConfig::default()).await;
    let response = sandbox
        .http
        .put(format!("{}/v1/faults", sandbox.base_url))
        .json(&serde_json::json!({"faults": [{"mode": "server_error", "probability": 2.0}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let typo = sandbox
        .http
        .put(format!("{}/v1/faults", sandbox.base_url))
        .json(&serde_json::json!({"faults": [{"mode": "server_error", "probabilty": 0.5}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        typo.status(),
        400,
        "unknown fields are refused, not ignored"
    );
    assert!(sandbox.state.fault_status().faults.rules.is_empty());
}

#[tokio::test]
async fn lookups_are_never_faulted() {
    let sandbox = spawn(always(FaultMode::ServerError)).await;
    for _ in 0..3 {
        assert_eq!(
            sandbox.provider.lookup(&lookup("prop-17")).await.unwrap(),
            None
        );
    }
    assert!(sandbox.provider.ledger().await.is_ok());
}
