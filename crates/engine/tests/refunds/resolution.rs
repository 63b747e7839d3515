//! A person resolves what only a person can: every claim about money is
//! checked with the provider first, and every resolution is journaled.

use crate::support::{Harness, fast_settings};
use connectors::sandbox::{FaultMode, FaultPlan, FaultRule, SandboxConfig};
use domain::Role;
use domain::proposal::{ProposalState, ProposalStatus};
use engine::execution::resolve::{ResolveAs, ResolveError};
use std::time::Duration;

/// A refund whose send timed out before the provider executed it, where the
/// provider no longer remembers keys by the time anyone asks: only a person
/// can say whether to send again.
async fn stranded_refund() -> (Harness, String) {
    let config = SandboxConfig::default()
        .with_hang(Duration::from_millis(700))
        .with_faults(FaultPlan::new(vec![
            FaultRule::always(FaultMode::TimeoutBeforeExecute).first_attempt_only(),
        ]));
    let mut settings = fast_settings("executor-stranded");
    settings.key_retention = chrono::Duration::milliseconds(1);
    let h = Harness::with(config, settings).await;
    let customer = h.actor("customer").await;
    let id = h.approved_refund(&customer, "4821").await;
    let status = h
        .settle(
            &id,
            &[ProposalStatus::NeedsAttention],
            Duration::from_secs(20),
        )
        .await;
    assert_eq!(status, ProposalStatus::NeedsAttention);
    (h, id)
}

#[tokio::test]
async fn no_refund_at_the_provider_with_a_new_send_needs_a_fresh_approval_and_pays_once() {
    let (h, id) = stranded_refund().await;
    let approver = h.actor("approver2").await;
    let resolved = h
        .engine
        .execution
        .resolve(
            &approver,
            &id,
            ResolveAs::NoRefund { retry: true },
            "provider dashboard shows no refund on pay_4821",
        )
        .await
        .unwrap();
    assert_eq!(resolved.proposal.status(), ProposalStatus::Failed);
    let retry = resolved.retry.expect("a new proposal");
    assert_ne!(retry.proposal.id, id, "a new idempotency key");
    assert_eq!(retry.status(), ProposalStatus::AwaitingApproval);
    assert_eq!(retry.proposal.amount, resolved.proposal.proposal.amount);

    // The provider is healthy again for the new send.
    h.sandbox
        .set_faults(connectors::sandbox::FaultUpdate::default())
        .unwrap();
    h.engine
        .approvals
        .approve(
            &h.actor("approver").await,
            &retry.proposal.id,
            &retry.proposal.action_digest,
        )
        .await
        .unwrap();
    h.settle(
        &retry.proposal.id,
        &[ProposalStatus::Verified],
        Duration::from_secs(20),
    )
    .await;
    let ledger = h.ledger();
    assert_eq!(ledger.count_for(&id), 0);
    assert_eq!(ledger.count_for(&retry.proposal.id), 1);
    let resolved_event = h
        .events(&id)
        .await
        .into_iter()
        .find(|e| e.kind == "resolved")
        .expect("journaled");
    assert!(
        resolved_event.payload.contains("no_refund"),
        "{}",
        resolved_event.payload
    );
    assert!(
        resolved_event.payload.contains(&retry.proposal.id),
        "{}",
        resolved_event.payload
    );
}

#[tokio::test]
async fn closing_without_a_refund_is_journaled_with_the_reason_and_sends_nothing() {
    let (h, id) = stranded_refund().await;
    let resolved = h
        .engine
        .execution
        .resolve(
            &h.actor("manager").await,
            &id,
            ResolveAs::Closed,
            "customer took store credit instead",
        )
        .await
        .unwrap();
    let ProposalState::Failed { reason, .. } = &resolved.proposal.state else {
        panic!("{:?}", resolved.proposal.state);
    };
    assert!(reason.contains("store credit"), "{reason}");
    assert!(resolved.retry.is_none());
    assert_eq!(h.ledger().total_refunds, 0);
}

#[tokio::test]
async fn customers_and_agents_cannot_resolve_and_a_note_is_required() {
    let (h, id) = stranded_refund().await;
    let customer = h.actor("customer").await;
    assert!(matches!(
        h.engine
            .execution
            .resolve(&customer, &id, ResolveAs::Closed, "mine")
            .await,
        Err(ResolveError::Forbidden)
    ));
    let agent = h.staff("outside-agent", &[Role::Agent]).await;
    assert!(matches!(
        h.engine
            .execution
            .resolve(&agent, &id, ResolveAs::Closed, "x")
            .await,
        Err(ResolveError::Forbidden)
    ));
    assert!(matches!(
        h.engine
            .execution
            .resolve(&h.actor("approver").await, &id, ResolveAs::Closed, "  ")
            .await,
        Err(ResolveError::Invalid(_))
    ));
    assert_eq!(h.status(&id).await, ProposalStatus::NeedsAttention);
}

#[tokio::test]
async fn a_proposal_that_does_not_wait_for_a_person_cannot_be_resolved() {
    let h = Harness::start().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let error = h
        .engine
        .execution
        .resolve(
            &h.actor("approver").await,
            &stored.proposal.id,
            ResolveAs::Closed,
            "nope",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, ResolveError::NotResolvable { .. }),
        "{error:?}"
    );
}

/// A refund verified at the provider, but with 10.00 EUR refunded there
/// through another channel that nobody recorded: it needs a person.
async fn unexplained_total() -> (Harness, String) {
    let h = Harness::start().await;
    let id = h.approved_with_money_refunded_elsewhere().await;
    h.settle(
        &id,
        &[ProposalStatus::NeedsAttention],
        Duration::from_secs(20),
    )
    .await;
    (h, id)
}

#[tokio::test]
async fn a_person_confirms_the_refund_the_provider_holds_and_it_is_booked_once() {
    let (h, id) = unexplained_total().await;
    let refund = h.sandbox.refund_for_key(&id).expect("the refund exists");
    let approver = h.actor("approver2").await;

    // A refund id the provider does not list is refused, naming what it lists.
    let wrong = h
        .engine
        .execution
        .resolve(
            &approver,
            &id,
            ResolveAs::RefundConfirmed {
                provider_refund_id: "re_typo".into(),
            },
            "checked",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&wrong, ResolveError::ProviderDisagrees(m) if m.contains(&refund.id)),
        "{wrong:?}"
    );

    // The other channel's refund is not this proposal's.
    let desk = h.sandbox.refund_for_key("desk-unrecorded").unwrap();
    let other = h
        .engine
        .execution
        .resolve(
            &approver,
            &id,
            ResolveAs::RefundConfirmed {
                provider_refund_id: desk.id.clone(),
            },
            "checked",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(other, ResolveError::ProviderDisagrees(_)),
        "{other:?}"
    );

    // Closing or saying "no refund" while money moved under the key is refused.
    let closing = h
        .engine
        .execution
        .resolve(&approver, &id, ResolveAs::Closed, "x")
        .await
        .unwrap_err();
    assert!(
        matches!(closing, ResolveError::ProviderDisagrees(_)),
        "{closing:?}"
    );

    let resolved = h
        .engine
        .execution
        .resolve(
            &approver,
            &id,
            ResolveAs::RefundConfirmed {
                provider_refund_id: refund.id.clone(),
            },
            "10.00 EUR was a goodwill refund by the desk",
        )
        .await
        .unwrap();
    assert_eq!(resolved.proposal.status(), ProposalStatus::Verified);
    let order = storage::orders::get(h.engine.db.conn(), "4821")
        .await
        .unwrap()
        .unwrap();
    let ours: Vec<_> = order
        .refunds
        .iter()
        .filter(|r| r.id == format!("ref_{id}"))
        .collect();
    assert_eq!(ours.len(), 1, "booked once: {:?}", order.refunds);
    assert_eq!(h.ledger().count_for(&id), 1);
}
