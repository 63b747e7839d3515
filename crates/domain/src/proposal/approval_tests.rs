//! Unit tests for `approval.rs`: who may approve what.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::money::Currency;
use crate::proposal::fixtures::{self, approval_ref, t0};
use crate::proposal::{ProposalStatus, apply};
use chrono::Duration;

fn approver(id: &str) -> Approver {
    Approver {
        id: id.into(),
        roles: RoleSet::new([Role::Approver]),
        limit_minor: None,
        spoke_in_conversation: false,
    }
}

fn policy(threshold: i64) -> ApprovalPolicy {
    ApprovalPolicy {
        four_eyes_threshold_minor: threshold,
        approval_ttl: Duration::minutes(60),
    }
}

/// Checks `who` approving the fixture proposal in `state` at `now`.
fn check(
    who: &Approver,
    state: &ProposalState,
    threshold: i64,
    now: Timestamp,
) -> Result<ApprovalOutcome, ApproveError> {
    let proposal = fixtures::proposal();
    let policy = policy(threshold);
    check_approval(&ApprovalContext {
        approver: who,
        proposal: &proposal,
        state,
        digest_shown: &proposal.action_digest,
        policy: &policy,
        now,
    })
}

fn awaiting_with(approvals: Vec<ApprovalRef>) -> ProposalState {
    ProposalState::AwaitingApproval {
        expires_at: fixtures::proposal().expires_at,
        approvals,
    }
}

#[test]
fn an_approver_within_limits_completes_a_refund_below_the_threshold() {
    assert_eq!(
        check(&approver("usr_anna"), &fixtures::awaiting(), 10_000, t0()),
        Ok(ApprovalOutcome::Complete {
            required_approvals: 1
        })
    );
}

#[test]
fn only_approvers_can_approve() {
    let mut manager = approver("usr_mia");
    manager.roles = RoleSet::new([Role::Manager, Role::Admin]);
    assert_eq!(
        check(&manager, &fixtures::awaiting(), 10_000, t0()),
        Err(ApproveError::NotAnApprover)
    );
}

#[test]
fn requester_cannot_approve_own_refund() {
    // The fixture was requested by, and is for, usr_customer.
    let mut customer = approver("usr_customer");
    customer.roles = RoleSet::new([Role::Customer, Role::Approver]);
    assert_eq!(
        check(&customer, &fixtures::awaiting(), 10_000, t0()),
        Err(ApproveError::SelfApproval)
    );
}

#[test]
fn staff_who_submitted_a_refund_cannot_approve_it() {
    let mut proposal = fixtures::proposal();
    proposal.provenance.requested_by = "usr_anna".into();
    let policy = policy(10_000);
    let anna = approver("usr_anna");
    let result = check_approval(&ApprovalContext {
        approver: &anna,
        proposal: &proposal,
        state: &fixtures::awaiting(),
        digest_shown: &proposal.action_digest,
        policy: &policy,
        now: t0(),
    });
    assert_eq!(result, Err(ApproveError::SelfApproval));
}

#[test]
fn a_person_who_spoke_for_the_team_in_the_chat_cannot_approve_its_refund() {
    let mut anna = approver("usr_anna");
    anna.spoke_in_conversation = true;
    assert_eq!(
        check(&anna, &fixtures::awaiting(), 10_000, t0()),
        Err(ApproveError::SpokeInConversation)
    );
    anna.spoke_in_conversation = false;
    assert!(check(&anna, &fixtures::awaiting(), 10_000, t0()).is_ok());
}

#[test]
fn approving_a_digest_other_than_the_current_one_is_refused() {
    let proposal = fixtures::proposal();
    let policy = policy(10_000);
    let anna = approver("usr_anna");
    let stale = "0".repeat(64);
    let result = check_approval(&ApprovalContext {
        approver: &anna,
        proposal: &proposal,
        state: &fixtures::awaiting(),
        digest_shown: &stale,
        policy: &policy,
        now: t0(),
    });
    let error = result.unwrap_err();
    assert_eq!(error, ApproveError::DigestMismatch);
    assert!(error.to_string().contains("changed since you looked"));
}

#[test]
fn a_tampered_proposal_cannot_be_approved() {
    let mut proposal = fixtures::proposal();
    proposal.amount.amount_minor = 790_000;
    let policy = policy(1_000_000);
    let anna = approver("usr_anna");
    let result = check_approval(&ApprovalContext {
        approver: &anna,
        proposal: &proposal,
        state: &fixtures::awaiting(),
        digest_shown: &proposal.action_digest,
        policy: &policy,
        now: t0(),
    });
    assert_eq!(result, Err(ApproveError::DigestInvalid));
}

#[test]
fn an_approver_over_their_limit_is_refused() {
    let mut anna = approver("usr_anna");
    anna.limit_minor = Some(5000);
    let error = check(&anna, &fixtures::awaiting(), 10_000, t0()).unwrap_err();
    assert_eq!(
        error,
        ApproveError::OverLimit {
            limit: Money::new(5000, Currency::EUR),
            amount: Money::new(7900, Currency::EUR)
        }
    );
    assert_eq!(
        error.to_string(),
        "79.00 EUR is above your approval limit of 50.00 EUR"
    );
}

#[test]
fn above_the_threshold_the_first_approval_is_recorded_and_a_second_completes() {
    let first = check(&approver("usr_anna"), &fixtures::awaiting(), 5000, t0());
    assert_eq!(
        first,
        Ok(ApprovalOutcome::Recorded {
            approvals_needed_after: 1,
            required_approvals: 2
        })
    );
    let state = awaiting_with(vec![approval_ref("usr_anna", t0())]);
    assert_eq!(
        check(&approver("usr_anna"), &state, 5000, t0()),
        Err(ApproveError::AlreadyApprovedByYou)
    );
    assert_eq!(
        check(&approver("usr_boris"), &state, 5000, t0()),
        Ok(ApprovalOutcome::Complete {
            required_approvals: 2
        })
    );
}

#[test]
fn an_expired_approval_does_not_count_towards_four_eyes() {
    let state = awaiting_with(vec![approval_ref("usr_anna", t0())]);
    let later = t0() + Duration::minutes(61);
    assert_eq!(
        check(&approver("usr_boris"), &state, 5000, later),
        Ok(ApprovalOutcome::Recorded {
            approvals_needed_after: 1,
            required_approvals: 2
        })
    );
}

#[test]
fn an_expired_proposal_cannot_be_approved_or_rejected() {
    let after = fixtures::proposal().expires_at;
    assert!(matches!(
        check(&approver("usr_anna"), &fixtures::awaiting(), 10_000, after),
        Err(ApproveError::Expired { .. })
    ));
}

#[test]
fn a_proposal_no_longer_awaiting_approval_cannot_be_approved_twice() {
    let error = check(&approver("usr_boris"), &fixtures::approved(), 10_000, t0()).unwrap_err();
    assert_eq!(
        error,
        ApproveError::NotAwaitingApproval {
            status: ProposalStatus::Approved
        }
    );
    assert!(error.to_string().contains("no longer awaiting approval"));
}

#[test]
fn rejecting_needs_the_approver_role_but_no_limit() {
    let proposal = fixtures::proposal();
    let policy = policy(10_000);
    let mut anna = approver("usr_anna");
    anna.limit_minor = Some(1);
    let state = fixtures::awaiting();
    let ctx = ApprovalContext {
        approver: &anna,
        proposal: &proposal,
        state: &state,
        digest_shown: "",
        policy: &policy,
        now: t0(),
    };
    assert_eq!(check_rejection(&ctx), Ok(()));
    let customer = Approver {
        roles: RoleSet::new([Role::Customer]),
        ..anna.clone()
    };
    let ctx = ApprovalContext {
        approver: &customer,
        ..ctx
    };
    assert_eq!(check_rejection(&ctx), Err(ApproveError::NotAnApprover));
}

#[test]
fn an_allowed_approval_becomes_data_and_the_command_that_approves() {
    let proposal = fixtures::proposal();
    let policy = policy(10_000);
    let anna = approver("usr_anna");
    let state = fixtures::awaiting();
    let now = t0() + Duration::hours(3);
    let ctx = ApprovalContext {
        approver: &anna,
        proposal: &proposal,
        state: &state,
        digest_shown: &proposal.action_digest,
        policy: &policy,
        now,
    };
    let outcome = check_approval(&ctx).unwrap();
    let conditions = ConditionsSnapshot::capture(
        &fixtures::order(),
        vec![("returns-policy:section-3".into(), "9f2c".into())],
    )
    .unwrap();
    let approval = Approval::approve("apr_1", &ctx, conditions);
    assert_eq!(approval.proposal_id, "prp_17");
    assert_eq!(approval.action_digest_shown, proposal.action_digest);
    assert_eq!(approval.expires_at, now + Duration::minutes(60));
    assert_eq!(approval.conditions.refundable_minor, 7900);
    assert_eq!(
        approval.conditions.order_hash,
        fixtures::order().content_hash()
    );

    let json = serde_json::to_string(&approval).unwrap();
    assert_eq!(serde_json::from_str::<Approval>(&json).unwrap(), approval);

    let t = apply(&proposal, &state, outcome.command(&approval), now).unwrap();
    assert_eq!(t.next.status(), ProposalStatus::Approved);
}

#[test]
fn an_overflowing_ttl_gives_an_approval_that_has_already_expired() {
    let policy = ApprovalPolicy {
        four_eyes_threshold_minor: 0,
        approval_ttl: Duration::MAX,
    };
    assert_eq!(policy.approval_expiry(t0()), t0());
}
