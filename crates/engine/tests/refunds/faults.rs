use crate::support::{Harness, fast_settings};
use connectors::sandbox::{FaultMode, FaultPlan, FaultRule, SandboxConfig};
use domain::proposal::ProposalStatus;
use std::time::Duration;

fn mixed_faults() -> FaultPlan {
    // A seeded mix: first attempts fail in every way the provider can fail.
    FaultPlan::new(vec![
        FaultRule::always(FaultMode::ExecuteThenTimeout)
            .with_probability(0.2)
            .first_attempt_only(),
        FaultRule::always(FaultMode::TimeoutBeforeExecute)
            .with_probability(0.2)
            .first_attempt_only(),
        FaultRule::always(FaultMode::ServerError)
            .with_probability(0.2)
            .first_attempt_only(),
        FaultRule::always(FaultMode::RateLimited)
            .with_probability(0.2)
            .first_attempt_only(),
        FaultRule::always(FaultMode::Latency { ms: 50 }).with_probability(0.3),
    ])
}

#[tokio::test]
async fn every_fault_mode_over_many_proposals_ends_with_exactly_one_refund_each() {
    let config = SandboxConfig::default()
        .with_seed(4821)
        .with_hang(Duration::from_millis(700))
        .with_faults(mixed_faults());
    let h = Harness::with(config, fast_settings("executor-faults")).await;
    let customer = h.actor("customer3").await;
    let orders = h.more_orders(&customer, 9000, 16, "pay_").await;
    let approver = h.actor("approver").await;
    let mut ids = Vec::new();
    for order in &orders {
        let stored = h.propose(&customer, order).await;
        h.engine
            .approvals
            .approve(
                &approver,
                &stored.proposal.id,
                &stored.proposal.action_digest,
            )
            .await
            .unwrap();
        ids.push(stored.proposal.id);
    }
    for id in &ids {
        h.settle(id, &[ProposalStatus::Verified], Duration::from_secs(30))
            .await;
    }
    let ledger = h.ledger();
    for id in &ids {
        assert_eq!(ledger.count_for(id), 1, "proposal {id}");
    }
    assert!(ledger.duplicated_keys.is_empty());
    let faults = h.sandbox.fault_status();
    assert!(
        faults.history.len() >= ids.len(),
        "faults were injected: {faults:?}"
    );
}

#[tokio::test]
async fn execute_then_timeout_is_unknown_first_and_verified_after_reconciliation() {
    let plan = FaultPlan::new(vec![
        FaultRule::always(FaultMode::ExecuteThenTimeout).first_attempt_only(),
    ]);
    let config = SandboxConfig::default()
        .with_hang(Duration::from_millis(800))
        .with_faults(plan);
    let h = Harness::with(config, fast_settings("executor-ett")).await;
    let id = h.approved_refund(&h.actor("customer").await, "4821").await;
    // The client gives up after 400 ms: the outcome is unknown, never failed.
    let status = h
        .wait_while(&id, ProposalStatus::Executing, Duration::from_secs(5))
        .await;
    assert_eq!(status, ProposalStatus::OutcomeUnknown);
    h.settle(&id, &[ProposalStatus::Verified], Duration::from_secs(10))
        .await;
    assert_eq!(h.ledger().count_for(&id), 1);
}

#[tokio::test]
async fn a_declined_payment_fails_with_the_reason_and_pays_nothing() {
    let h = Harness::start().await;
    let customer = h.actor("customer3").await;
    let orders = h.more_orders(&customer, 9100, 1, "pay_declined_").await;
    let id = h.approved_refund(&customer, &orders[0]).await;
    h.settle(&id, &[ProposalStatus::Failed], Duration::from_secs(10))
        .await;
    assert_eq!(h.ledger().total_refunds, 0);
    let detail = h.engine.proposals.detail(&id).await.unwrap().unwrap();
    let failed = detail.events.iter().find(|e| e.kind == "failed").unwrap();
    assert!(failed.payload.contains("declined"), "{}", failed.payload);
}

#[tokio::test]
async fn an_outcome_that_stays_unknown_is_handed_to_a_person_and_never_called_failed() {
    let plan = FaultPlan::new(vec![FaultRule::always(FaultMode::ServerError)]);
    let mut settings = fast_settings("executor-unknown");
    settings.max_unknown_checks = 2;
    let config = SandboxConfig::default().with_faults(plan.clone());
    let h = Harness::with(config, settings).await;
    let id = h.approved_refund(&h.actor("customer").await, "4821").await;
    // From now on every status query outlasts the client's timeout too.
    h.sandbox
        .set_faults(connectors::sandbox::FaultUpdate {
            faults: plan,
            lookup_latency: Some(Duration::from_millis(600)),
            ..Default::default()
        })
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let detail = h.engine.proposals.detail(&id).await.unwrap().unwrap();
        if let domain::proposal::ProposalState::OutcomeUnknown {
            escalated: true, ..
        } = detail.stored.state
        {
            break;
        }
        assert_ne!(detail.stored.status(), ProposalStatus::Failed);
        assert!(
            tokio::time::Instant::now() < deadline,
            "never escalated: {:?}",
            detail.stored.state
        );
        h.engine.execution.reconcile_once().await.unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert_eq!(h.ledger().total_refunds, 0);
}
