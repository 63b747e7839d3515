use crate::support::Harness;
use domain::proposal::{ApproveError, ProposalStatus};
use domain::{PastRefund, Role};
use engine::Actor;
use engine::approvals::DecisionError;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Barrier;

#[tokio::test]
async fn approving_with_a_digest_other_than_the_stored_one_is_refused() {
    let h = Harness::start().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let approver = h.actor("approver").await;
    let error = h
        .engine
        .approvals
        .approve(&approver, &stored.proposal.id, "0".repeat(64).as_str())
        .await
        .unwrap_err();
    assert!(
        matches!(error, DecisionError::Denied(ApproveError::DigestMismatch)),
        "{error}"
    );
    assert_eq!(
        h.status(&stored.proposal.id).await,
        ProposalStatus::AwaitingApproval
    );
    assert_eq!(h.ledger().total_refunds, 0);
}

#[tokio::test]
async fn a_customer_cannot_approve_their_own_refund() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let stored = h.propose(&customer, "4821").await;
    let error = h
        .engine
        .approvals
        .approve(
            &customer,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, DecisionError::Denied(ApproveError::NotAnApprover)),
        "{error}"
    );
}

#[tokio::test]
async fn requester_cannot_approve_own_refund() {
    let h = Harness::start().await;
    let staff = h.staff("desk-approver", &[Role::Approver]).await;
    let stored = h.propose(&staff, "4821").await;
    let error = h
        .engine
        .approvals
        .approve(&staff, &stored.proposal.id, &stored.proposal.action_digest)
        .await
        .unwrap_err();
    assert!(
        matches!(error, DecisionError::Denied(ApproveError::SelfApproval)),
        "{error}"
    );
    assert!(
        error.to_string().contains("someone else must approve"),
        "{error}"
    );
}

#[tokio::test]
async fn an_approver_over_their_limit_is_refused() {
    let h = Harness::start().await;
    let approver = h.actor("approver").await;
    let tx = h.engine.db.begin_write().await.unwrap();
    storage::limits::set_approval_limit(&*tx, &approver.user_id, "EUR", 5000)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let error = h
        .engine
        .approvals
        .approve(
            &approver,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, DecisionError::Denied(ApproveError::OverLimit { .. })),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("79.00 EUR is above your approval limit of 50.00 EUR"),
        "{error}"
    );
}

#[tokio::test]
async fn above_the_threshold_one_approver_is_not_enough_and_a_second_executes() {
    let h = Harness::start().await;
    let tx = h.engine.db.begin_write().await.unwrap();
    storage::limits::set_four_eyes_threshold(&*tx, "EUR", 5000)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let (id, digest) = (&stored.proposal.id, &stored.proposal.action_digest);
    let first = h.actor("approver").await;
    let after_first = h
        .engine
        .approvals
        .approve(&first, id, digest)
        .await
        .unwrap();
    assert_eq!(after_first.status(), ProposalStatus::AwaitingApproval);
    assert_eq!(h.ledger().total_refunds, 0, "one approval must not execute");
    let again = h
        .engine
        .approvals
        .approve(&first, id, digest)
        .await
        .unwrap_err();
    assert!(
        matches!(
            again,
            DecisionError::Denied(ApproveError::AlreadyApprovedByYou)
        ),
        "{again}"
    );
    let second = h.actor("approver2").await;
    h.engine
        .approvals
        .approve(&second, id, digest)
        .await
        .unwrap();
    h.settle(id, &[ProposalStatus::Verified], Duration::from_secs(10))
        .await;
    assert_eq!(h.ledger().count_for(id), 1);
}

#[tokio::test]
async fn an_expired_proposal_cannot_be_approved_and_expires_on_reconciliation() {
    let mut settings = crate::support::fast_settings("executor-expiry");
    settings.proposal_ttl = chrono::Duration::milliseconds(300);
    let h = Harness::with(Default::default(), settings).await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let approver = h.actor("approver").await;
    let error = h
        .engine
        .approvals
        .approve(
            &approver,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, DecisionError::Denied(ApproveError::Expired { .. })),
        "{error}"
    );
    // Said to the minute, as a person reads a time.
    let expired_at = stored.proposal.expires_at.format("%Y-%m-%d %H:%M UTC");
    assert_eq!(
        error.to_string(),
        format!("this proposal expired at {expired_at}; ask for a new proposal")
    );
    h.engine.execution.reconcile_once().await.unwrap();
    assert_eq!(h.status(&stored.proposal.id).await, ProposalStatus::Expired);
    assert_eq!(h.ledger().total_refunds, 0);
}

#[tokio::test]
async fn a_rejection_needs_a_reason_and_ends_the_proposal() {
    let h = Harness::start().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let approver = h.actor("approver").await;
    let blank = h
        .engine
        .approvals
        .reject(&approver, &stored.proposal.id, "  ")
        .await
        .unwrap_err();
    assert!(matches!(blank, DecisionError::Invalid(_)), "{blank}");
    let rejected = h
        .engine
        .approvals
        .reject(&approver, &stored.proposal.id, "Item was opened")
        .await
        .unwrap();
    assert_eq!(rejected.status(), ProposalStatus::Rejected);
    let late = h
        .engine
        .approvals
        .approve(
            &approver,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            late,
            DecisionError::Denied(ApproveError::NotAwaitingApproval { .. })
        ),
        "{late}"
    );
    assert_eq!(h.ledger().total_refunds, 0);
}

#[tokio::test]
async fn refunded_through_another_channel_after_approval_invalidates_and_pays_nothing() {
    let h = Harness::start().await;
    let tx = h.engine.db.begin_write().await.unwrap();
    storage::limits::set_four_eyes_threshold(&*tx, "EUR", 5000)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let (id, digest) = (&stored.proposal.id, &stored.proposal.action_digest);
    h.engine
        .approvals
        .approve(&h.actor("approver").await, id, digest)
        .await
        .unwrap();
    // Meanwhile the support desk refunds the order by hand.
    let tx = h.engine.db.begin_write().await.unwrap();
    storage::orders::record_refund(
        &*tx,
        "4821",
        &PastRefund {
            id: "ref_desk_1".into(),
            amount: stored.proposal.amount,
            channel: "support_desk".into(),
            reference: "phone call".into(),
            created_at: engine::now(),
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let after = h
        .engine
        .approvals
        .approve(&h.actor("approver2").await, id, digest)
        .await
        .unwrap();
    assert_eq!(after.status(), ProposalStatus::Invalidated);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(h.ledger().total_refunds, 0, "nothing may be paid");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_approvers_deciding_at_the_same_moment_both_count_and_the_refund_runs_once() {
    let h = Harness::start().await;
    let tx = h.engine.db.begin_write().await.unwrap();
    storage::limits::set_four_eyes_threshold(&*tx, "EUR", 1000)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let customer = h.actor("customer3").await;
    let orders = h.more_orders(&customer, 9100, 8, "pay_pair_").await;
    let (first, second) = (h.actor("approver").await, h.actor("approver2").await);
    for order in orders {
        let stored = h.propose(&customer, &order).await;
        let (id, digest) = (stored.proposal.id.clone(), stored.proposal.action_digest);
        let barrier = Arc::new(Barrier::new(2));
        let decide = |approver: Actor| {
            let (engine, barrier) = (h.engine.clone(), barrier.clone());
            let (id, digest) = (id.clone(), digest.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                engine.approvals.approve(&approver, &id, &digest).await
            })
        };
        let (a, b) = (decide(first.clone()), decide(second.clone()));
        // The one that loses the race reads again and finds the other's
        // approval: both are recorded, neither is refused as a conflict.
        a.await.unwrap().unwrap();
        b.await.unwrap().unwrap();
        h.settle(&id, &[ProposalStatus::Verified], Duration::from_secs(10))
            .await;
        assert_eq!(h.ledger().count_for(&id), 1);
    }
}
