use crate::support::{Harness, fast_settings};
use connectors::sandbox::{FaultMode, FaultPlan, FaultRule, SandboxConfig};
use domain::proposal::ProposalStatus;
use engine::live::LiveEvent;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Barrier;

/// The journal of a refund from proposal to verification, in order.
const JOURNAL_OF_A_VERIFIED_REFUND: [&str; 6] = [
    "proposed",
    "approved",
    "claimed",
    "sent",
    "succeeded",
    "verified",
];

#[tokio::test]
async fn the_flagship_refund_is_paid_once_receipted_booked_and_verified() {
    let h = Harness::start().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let id = stored.proposal.id.clone();
    let approver = h.actor("approver").await;
    let mut changes = h.engine.live.subscribe();
    let approved = h
        .engine
        .approvals
        .approve(&approver, &id, &stored.proposal.action_digest)
        .await
        .unwrap();
    assert_eq!(approved.status(), ProposalStatus::Executing);
    // The provider's success is verified before it is recorded: success and
    // verification are committed together, so nobody is told "succeeded"
    // about a refund that is not yet verified.
    let mut announced = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        while announced.last().map(String::as_str) != Some("verified") {
            let LiveEvent::Changed(change) = changes.recv().await.unwrap() else {
                continue;
            };
            // On PostgreSQL the proposal's own creation may still be on its
            // way (NOTIFY): only what follows the approval is asserted.
            if change.proposal_id == id && change.status != "awaiting_approval" {
                announced.push(change.status);
            }
        }
    })
    .await
    .expect("the refund is verified");
    assert_eq!(announced, ["executing", "verified"]);
    assert_eq!(h.ledger().count_for(&id), 1);
    let detail = h.engine.proposals.detail(&id).await.unwrap().unwrap();
    let receipt = detail.receipt.expect("receipt persisted");
    assert_eq!(
        (receipt.amount_minor, receipt.currency.as_str()),
        (7900, "EUR")
    );
    let order = storage::orders::get(h.engine.db.conn(), "4821")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        order.refundable().unwrap().amount_minor,
        0,
        "the refund is booked on the order"
    );
    let kinds: Vec<_> = detail.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, JOURNAL_OF_A_VERIFIED_REFUND);
    assert_eq!(detail.events[1].actor, "user:approver");
}

#[tokio::test]
async fn a_success_the_provider_cannot_list_yet_is_kept_with_its_receipt_and_verified_later() {
    // The refund takes 300 ms at the provider; as soon as it is approved
    // (after the approval's own charge check), lookups start to outlast the
    // client's 400 ms timeout: the refund goes through, the question about
    // it afterwards does not.
    let slow_send = FaultPlan::new(vec![FaultRule::always(FaultMode::Latency { ms: 300 })]);
    let config = SandboxConfig::default().with_faults(slow_send.clone());
    let h = Harness::with(config, fast_settings("executor-test")).await;
    let id = h.approved_refund(&h.actor("customer").await, "4821").await;
    h.sandbox
        .set_faults(connectors::sandbox::FaultUpdate {
            faults: slow_send,
            lookup_latency: Some(Duration::from_millis(600)),
            ..Default::default()
        })
        .unwrap();
    h.wait_while(&id, ProposalStatus::Executing, Duration::from_secs(10))
        .await;
    let detail = h.engine.proposals.detail(&id).await.unwrap().unwrap();
    assert_eq!(detail.stored.status(), ProposalStatus::Succeeded);
    assert_eq!(
        detail.receipt.map(|r| r.amount_minor),
        Some(7900),
        "the receipt is kept although verification is still to come"
    );

    h.sandbox
        .set_faults(connectors::sandbox::FaultUpdate {
            lookup_latency: Some(Duration::ZERO),
            ..Default::default()
        })
        .unwrap();
    let status = h
        .settle(&id, &[ProposalStatus::Verified], Duration::from_secs(10))
        .await;
    assert_eq!(status, ProposalStatus::Verified);
    assert_eq!(h.ledger().count_for(&id), 1);
    let detail = h.engine.proposals.detail(&id).await.unwrap().unwrap();
    let kinds: Vec<_> = detail.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, JOURNAL_OF_A_VERIFIED_REFUND);
}

#[tokio::test]
async fn sixty_four_concurrent_approvals_make_exactly_one_refund() {
    let h = Harness::start().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let approver = h.actor("approver").await;
    let barrier = Arc::new(Barrier::new(64));
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let (engine, approver, barrier) = (h.engine.clone(), approver.clone(), barrier.clone());
        let (id, digest) = (
            stored.proposal.id.clone(),
            stored.proposal.action_digest.clone(),
        );
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            engine.approvals.approve(&approver, &id, &digest).await
        }));
    }
    let mut accepted = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => accepted += 1,
            Err(error) => {
                let text = error.to_string();
                assert!(
                    text.contains("no longer awaiting approval")
                        || text.contains("at the same moment"),
                    "unclear refusal: {text}"
                );
            }
        }
    }
    assert_eq!(accepted, 1);
    h.settle(
        &stored.proposal.id,
        &[ProposalStatus::Verified],
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(h.ledger().total_refunds, 1);
}

#[tokio::test]
async fn two_engines_racing_on_one_database_make_exactly_one_refund() {
    let h = Harness::start().await;
    let other = h.second_engine(fast_settings("executor-other")).await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let (a1, a2) = (h.actor("approver").await, h.actor("approver").await);
    let (id, digest) = (
        stored.proposal.id.clone(),
        stored.proposal.action_digest.clone(),
    );
    let first = h.engine.approvals.approve(&a1, &id, &digest);
    let second = other.approvals.approve(&a2, &id, &digest);
    let (r1, r2) = tokio::join!(first, second);
    assert!(
        r1.is_ok() ^ r2.is_ok(),
        "exactly one approval lands: {r1:?} / {r2:?}"
    );
    h.settle(&id, &[ProposalStatus::Verified], Duration::from_secs(10))
        .await;
    assert_eq!(h.ledger().count_for(&id), 1);
}

#[tokio::test]
async fn a_successor_takes_over_an_expired_lease_by_querying_never_paying_twice() {
    // The first executor's call is slow (the provider holds it for 1.5 s, past
    // the first executor's patience and its 1 s lease); a second executor
    // takes over, queries, and must not create a second refund.
    let slow = FaultPlan::new(vec![
        FaultRule::always(FaultMode::Latency { ms: 1500 }).first_attempt_only(),
    ]);
    let mut settings = fast_settings("executor-a");
    settings.lease = chrono::Duration::seconds(1);
    let h = Harness::with(SandboxConfig::default().with_faults(slow), settings).await;
    let mut successor_settings = fast_settings("executor-b");
    successor_settings.lease = chrono::Duration::seconds(1);
    let successor = h.second_engine(successor_settings).await;
    let id = h.approved_refund(&h.actor("customer").await, "4821").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while h.status(&id).await != ProposalStatus::Verified {
        assert!(
            tokio::time::Instant::now() < deadline,
            "stuck at {:?}",
            h.status(&id).await
        );
        successor.execution.reconcile_once().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(h.ledger().count_for(&id), 1);
    let detail = h.engine.proposals.detail(&id).await.unwrap().unwrap();
    assert!(
        detail
            .events
            .iter()
            .any(|e| e.kind == "taken_over" || e.kind == "status_check_started")
    );
}

#[tokio::test]
async fn a_change_made_by_one_server_reaches_the_live_subscribers_of_another() {
    // On PostgreSQL changes travel between processes by NOTIFY; on SQLite
    // (one process by design) every engine on the database is in this
    // process and sees its own changes.
    let h = Harness::start().await;
    let other = h.second_engine(fast_settings("executor-watcher")).await;
    let watcher = match h.engine.db.backend() {
        storage::Backend::Postgres => &other,
        storage::Backend::Sqlite => &h.engine,
    };
    let mut changes = watcher.live.subscribe();
    // The watcher's listener holds its LISTEN before the change is made.
    watcher.live.listening().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let change = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let LiveEvent::Changed(change) = changes.recv().await.unwrap() else {
                continue;
            };
            if change.proposal_id == stored.proposal.id {
                return change;
            }
        }
    })
    .await
    .expect("the change arrives");
    assert_eq!(change.status, "awaiting_approval");
    assert_eq!(change.order_id, "4821");
}
