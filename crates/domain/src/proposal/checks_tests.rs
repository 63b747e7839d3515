//! Unit tests for `checks.rs`: the approver's checklist before Confirm.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::Timestamp;
use crate::money::{Currency, Money};
use crate::order::PastRefund;
use crate::proposal::fixtures::{self, approval_ref, t0};
use crate::proposal::{ApprovalPolicy, Approver, ProposalState, RefundProposal};
use crate::role::{Role, RoleSet};
use chrono::Duration;

fn anna(limit: Option<i64>) -> Approver {
    Approver {
        id: "usr_anna".into(),
        roles: RoleSet::new([Role::Approver]),
        limit_minor: limit,
        spoke_in_conversation: false,
    }
}

fn policy() -> ApprovalPolicy {
    ApprovalPolicy {
        four_eyes_threshold_minor: 10_000,
        approval_ttl: Duration::minutes(60),
    }
}

fn checks_for(
    approver: &Approver,
    proposal: &RefundProposal,
    state: &ProposalState,
    order: Option<&OrderSnapshot>,
    now: Timestamp,
) -> Vec<PreDecisionCheck> {
    let policy = policy();
    let ctx = ApprovalContext {
        approver,
        proposal,
        state,
        digest_shown: &proposal.action_digest,
        policy: &policy,
        now,
    };
    pre_decision_checks(&ctx, order, 0)
}

fn of_kind(checks: &[PreDecisionCheck], kind: CheckKind) -> &PreDecisionCheck {
    checks
        .iter()
        .find(|c| c.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} check in {checks:#?}"))
}

fn refunded(order: &mut OrderSnapshot, minor: i64) {
    order.refunds.push(PastRefund {
        id: "r1".into(),
        amount: Money::new(minor, Currency::EUR),
        channel: "support_desk".into(),
        reference: "desk-1".into(),
        created_at: t0(),
    });
}

#[test]
fn a_refund_above_the_approvers_own_limit_is_blocked_before_confirm_with_the_limit_named() {
    let proposal = fixtures::proposal();
    let checks = checks_for(
        &anna(Some(5000)),
        &proposal,
        &fixtures::awaiting(),
        Some(&fixtures::order()),
        t0(),
    );
    let limit = of_kind(&checks, CheckKind::Limit);
    assert_eq!(limit.level, CheckLevel::Blocking);
    assert!(limit.message.contains("50.00 EUR"), "{}", limit.message);
    assert_eq!(blocking_reason(&checks), Some(limit.message.as_str()));
}

#[test]
fn an_amount_above_what_is_still_refundable_is_blocked_before_confirm() {
    let proposal = fixtures::proposal();
    let mut order = fixtures::order();
    refunded(&mut order, 2000);
    let checks = checks_for(
        &anna(None),
        &proposal,
        &fixtures::awaiting(),
        Some(&order),
        t0(),
    );
    let refundable = of_kind(&checks, CheckKind::Refundable);
    assert_eq!(refundable.level, CheckLevel::Blocking);
    assert!(
        refundable.message.contains("Only 59.00 EUR"),
        "{}",
        refundable.message
    );
}

#[test]
fn a_missing_order_is_blocked_before_confirm() {
    let proposal = fixtures::proposal();
    let checks = checks_for(&anna(None), &proposal, &fixtures::awaiting(), None, t0());
    assert_eq!(
        of_kind(&checks, CheckKind::Refundable).level,
        CheckLevel::Blocking
    );
}

#[test]
fn an_order_older_than_the_cited_policy_window_is_flagged_with_both_numbers() {
    let proposal = fixtures::proposal();
    let mut order = fixtures::order();
    order.delivered_at = Some(t0() - Duration::days(45));
    let checks = checks_for(
        &anna(None),
        &proposal,
        &fixtures::awaiting(),
        Some(&order),
        t0(),
    );
    let window = of_kind(&checks, CheckKind::PolicyWindow);
    assert_eq!(window.level, CheckLevel::Warning);
    assert!(
        window.message.contains("45 days ago") && window.message.contains("30 days"),
        "{}",
        window.message
    );
    assert_eq!(blocking_reason(&checks), None, "a judgement, not a refusal");
}

#[test]
fn an_order_inside_the_window_passes_and_everything_holds_for_a_plain_refund() {
    let proposal = fixtures::proposal();
    let checks = checks_for(
        &anna(Some(10_000)),
        &proposal,
        &fixtures::awaiting(),
        Some(&fixtures::order()),
        t0(),
    );
    assert_eq!(
        of_kind(&checks, CheckKind::PolicyWindow).level,
        CheckLevel::Passed
    );
    assert_eq!(of_kind(&checks, CheckKind::Limit).level, CheckLevel::Passed);
    assert_eq!(
        of_kind(&checks, CheckKind::Refundable).level,
        CheckLevel::Passed
    );
    assert_eq!(blocking_reason(&checks), None);
}

#[test]
fn an_unanswered_question_is_shown_as_still_unknown() {
    let proposal = fixtures::proposal();
    let checks = checks_for(
        &anna(None),
        &proposal,
        &fixtures::awaiting(),
        Some(&fixtures::order()),
        t0(),
    );
    let open = of_kind(&checks, CheckKind::OpenQuestions);
    assert_eq!(open.level, CheckLevel::Warning);
    assert!(
        open.message.contains("Was the parcel opened?"),
        "{}",
        open.message
    );
}

#[test]
fn an_approver_who_already_approved_cannot_approve_again_and_is_told_why() {
    let proposal = fixtures::proposal();
    let state = ProposalState::AwaitingApproval {
        expires_at: proposal.expires_at,
        approvals: vec![approval_ref("usr_anna", t0())],
    };
    let checks = checks_for(
        &anna(None),
        &proposal,
        &state,
        Some(&fixtures::order()),
        t0(),
    );
    let reason = blocking_reason(&checks).expect("blocked");
    assert!(reason.contains("already approved"), "{reason}");
}

#[test]
fn the_requesting_customer_cannot_approve_their_own_refund() {
    let proposal = fixtures::proposal();
    let mut customer = anna(None);
    customer.id = "usr_customer".into();
    let checks = checks_for(
        &customer,
        &proposal,
        &fixtures::awaiting(),
        Some(&fixtures::order()),
        t0(),
    );
    assert!(blocking_reason(&checks).is_some_and(|r| r.contains("someone else")));
}

#[test]
fn windows_are_read_from_the_passage_words() {
    assert_eq!(
        window_days("Opened items may be returned within 14 days of delivery."),
        Some(14)
    );
    assert_eq!(window_days("Within 30 days."), Some(30));
    assert_eq!(
        window_days("Refunds are paid to the original method."),
        None
    );
}
