//! The payment provider's view of the charge: a refund made through another
//! channel at the provider stops an approved refund before it is sent, and
//! verification compares the provider's refunded total with the books.

use crate::support::Harness;
use domain::proposal::{InvalidationReason, ProposalState, ProposalStatus};
use std::time::Duration;

fn refunds_on(h: &Harness, payment_reference: &str) -> usize {
    h.sandbox
        .refunds(None)
        .iter()
        .filter(|r| r.payment_reference == payment_reference)
        .count()
}

#[tokio::test]
async fn a_refund_made_at_the_provider_between_proposal_and_approval_stops_the_second_payout() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let stored = h.propose(&customer, "4821").await;
    let reference = stored.proposal.payment_reference.clone();
    h.refund_elsewhere(&reference, 7900, "support-desk-1").await;

    let approved = h
        .engine
        .approvals
        .approve(
            &h.actor("approver").await,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap();

    match &approved.state {
        ProposalState::Invalidated {
            reason: InvalidationReason::ProviderRemainderTooSmall { charged, refunded },
        } => {
            assert_eq!((charged.amount_minor, refunded.amount_minor), (7900, 7900));
        }
        other => panic!("expected invalidated by the provider's figures, got {other:?}"),
    }
    assert_eq!(
        refunds_on(&h, &reference),
        1,
        "one refund at the provider, not two"
    );
    assert_eq!(h.ledger().count_for(&stored.proposal.id), 0);
    let events = h.events(&stored.proposal.id).await;
    let invalidated = events.iter().find(|e| e.kind == "invalidated").unwrap();
    assert!(
        invalidated.payload.contains("\"refunded_minor\":7900"),
        "the provider's evidence is journaled: {}",
        invalidated.payload
    );
}

#[tokio::test]
async fn a_partial_refund_at_the_provider_leaves_too_little_and_says_how_much_is_left() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let stored = h.propose(&customer, "4821").await;
    h.refund_elsewhere(&stored.proposal.payment_reference, 1000, "desk-partial")
        .await;
    let approved = h
        .engine
        .approvals
        .approve(
            &h.actor("approver").await,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap();
    let ProposalState::Invalidated { reason } = &approved.state else {
        panic!("expected invalidated, got {:?}", approved.state);
    };
    assert!(
        reason.to_string().contains("only 69.00 EUR is left"),
        "{reason}"
    );
}

#[tokio::test]
async fn an_approval_whose_charge_the_provider_cannot_show_records_nothing_and_asks_to_retry() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let stored = h.propose(&customer, "4821").await;
    // Another process whose provider does not answer (nothing listens on
    // the discard port).
    let offline = h
        .engine_with_provider_at(
            "http://127.0.0.1:9",
            crate::support::fast_settings("executor-offline"),
        )
        .await;
    let error = offline
        .approvals
        .approve(
            &h.actor("approver").await,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            engine::approvals::DecisionError::ProviderUnavailable(_)
        ),
        "{error:?}"
    );
    assert_eq!(
        h.status(&stored.proposal.id).await,
        ProposalStatus::AwaitingApproval
    );
    let approvals = storage::approvals::for_proposal(h.engine.db.conn(), &stored.proposal.id)
        .await
        .unwrap();
    assert!(approvals.is_empty(), "no approval was recorded");
}

#[tokio::test]
async fn an_empty_action_digest_is_a_validation_error_not_a_changed_proposal() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let stored = h.propose(&customer, "4821").await;
    let error = h
        .engine
        .approvals
        .approve(&h.actor("approver").await, &stored.proposal.id, "  ")
        .await
        .unwrap_err();
    match error {
        engine::approvals::DecisionError::Invalid(message) => {
            assert!(message.contains("action_digest is required"), "{message}")
        }
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn money_refunded_at_the_provider_that_nobody_recorded_is_raised_to_a_person_at_verification()
{
    let h = Harness::start().await;
    let id = h.approved_with_money_refunded_elsewhere().await;
    let status = h
        .settle(
            &id,
            &[ProposalStatus::Verified, ProposalStatus::NeedsAttention],
            Duration::from_secs(20),
        )
        .await;
    assert_eq!(status, ProposalStatus::NeedsAttention);
    let stored = storage::proposals::get(h.engine.db.conn(), &id)
        .await
        .unwrap()
        .unwrap();
    let ProposalState::NeedsAttention { reason, .. } = &stored.state else {
        panic!("{:?}", stored.state);
    };
    assert!(
        reason.contains("60.00") && reason.contains("50.00"),
        "{reason}"
    );
    assert_eq!(h.ledger().count_for(&stored.proposal.id), 1, "paid once");
}
