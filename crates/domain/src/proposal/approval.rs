//! Approval is data, and who may approve is decided here, in code.
//!
//! An [`Approval`] records that user X approved proposal Y, containing the
//! action with digest Z, under these conditions. [`check_approval`] decides
//! whether X may: an approver, not the requester or the customer, within
//! their limit, on the digest they were actually shown, while the proposal
//! is still pending. Above the four-eyes threshold two distinct people must
//! approve; an approval counts only until it expires.

use super::command::Command;
use super::content::RefundProposal;
use super::state::{ApprovalRef, ProposalState};
use super::status::ProposalStatus;
use crate::Timestamp;
use crate::money::{Money, MoneyError};
use crate::order::OrderSnapshot;
use crate::role::{Role, RoleSet};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject { reason: String },
}

/// The world as the approver saw it; revalidation compares against it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionsSnapshot {
    pub order_version: i64,
    pub order_hash: String,
    /// `(reference, version)` of each policy relied on.
    pub policy_versions: Vec<(String, String)>,
    pub refundable_minor: i64,
}

impl ConditionsSnapshot {
    /// # Errors
    /// The order's refunds are inconsistent (see [`OrderSnapshot::refundable`]).
    pub fn capture(
        order: &OrderSnapshot,
        policy_versions: Vec<(String, String)>,
    ) -> Result<Self, MoneyError> {
        Ok(ConditionsSnapshot {
            order_version: order.version,
            order_hash: order.content_hash(),
            policy_versions,
            refundable_minor: order.refundable()?.amount_minor,
        })
    }
}

/// One person's decision on one proposal; immutable once stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    pub id: String,
    pub proposal_id: String,
    pub approver_id: String,
    pub decision: Decision,
    /// The action digest on the approver's screen: the exact thing approved.
    pub action_digest_shown: String,
    pub conditions: ConditionsSnapshot,
    pub decided_at: Timestamp,
    pub expires_at: Timestamp,
}

impl Approval {
    /// The record of an approval that [`check_approval`] allowed.
    pub fn approve(
        id: impl Into<String>,
        ctx: &ApprovalContext<'_>,
        conditions: ConditionsSnapshot,
    ) -> Self {
        Approval::record(id.into(), ctx, Decision::Approve, conditions)
    }

    /// The record of a rejection that [`check_rejection`] allowed.
    pub fn reject(
        id: impl Into<String>,
        ctx: &ApprovalContext<'_>,
        reason: impl Into<String>,
        conditions: ConditionsSnapshot,
    ) -> Self {
        let decision = Decision::Reject {
            reason: reason.into(),
        };
        Approval::record(id.into(), ctx, decision, conditions)
    }

    fn record(
        id: String,
        ctx: &ApprovalContext<'_>,
        decision: Decision,
        conditions: ConditionsSnapshot,
    ) -> Self {
        Approval {
            id,
            proposal_id: ctx.proposal.id.clone(),
            approver_id: ctx.approver.id.clone(),
            decision,
            action_digest_shown: ctx.digest_shown.to_owned(),
            conditions,
            decided_at: ctx.now,
            expires_at: ctx.policy.approval_expiry(ctx.now),
        }
    }

    /// What the state machine keeps of it.
    pub fn to_ref(&self) -> ApprovalRef {
        ApprovalRef {
            approval_id: self.id.clone(),
            approver_id: self.approver_id.clone(),
            at: self.decided_at,
            expires_at: self.expires_at,
        }
    }
}

/// Operator-configured approval rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalPolicy {
    /// Refunds strictly above this (minor units) need two distinct approvers.
    pub four_eyes_threshold_minor: i64,
    /// How long an approval counts: conditions go stale.
    pub approval_ttl: chrono::Duration,
}

impl ApprovalPolicy {
    pub fn required_approvals(&self, amount: Money) -> u8 {
        if amount.amount_minor > self.four_eyes_threshold_minor {
            2
        } else {
            1
        }
    }

    /// An absurd TTL that overflows yields an approval that is already
    /// expired: failing closed rather than approving forever.
    pub fn approval_expiry(&self, now: Timestamp) -> Timestamp {
        now.checked_add_signed(self.approval_ttl).unwrap_or(now)
    }
}

/// The person deciding, as the session and the limits table know them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approver {
    pub id: String,
    pub roles: RoleSet,
    /// The most this person may approve, in the proposal's currency.
    pub limit_minor: Option<i64>,
    /// This person took over the conversation the proposal was prepared in
    /// and spoke to the customer there: they asked for the refund as much
    /// as the customer did.
    pub spoke_in_conversation: bool,
}

/// Everything a decision depends on. The existing approvals are the ones in
/// `state`, so there is one source of truth for "approved so far".
#[derive(Debug, Clone, Copy)]
pub struct ApprovalContext<'a> {
    pub approver: &'a Approver,
    pub proposal: &'a RefundProposal,
    pub state: &'a ProposalState,
    /// The action digest the approver's page showed (sent back with the click).
    pub digest_shown: &'a str,
    pub policy: &'a ApprovalPolicy,
    pub now: Timestamp,
}

/// An allowed approval: either it completes the approvals or one more
/// person is needed. Needing a second approver is an outcome, not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalOutcome {
    Complete {
        required_approvals: u8,
    },
    Recorded {
        approvals_needed_after: u8,
        required_approvals: u8,
    },
}

impl ApprovalOutcome {
    pub fn required_approvals(&self) -> u8 {
        match *self {
            ApprovalOutcome::Complete { required_approvals }
            | ApprovalOutcome::Recorded {
                required_approvals, ..
            } => required_approvals,
        }
    }

    /// The state-machine command that records `approval`.
    pub fn command(&self, approval: &Approval) -> Command {
        Command::Approve {
            approval: approval.to_ref(),
            required_approvals: self.required_approvals(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApproveError {
    #[error("only approvers can approve or reject refund proposals")]
    NotAnApprover,
    #[error("this proposal is no longer awaiting approval (now: {})", .status.label())]
    NotAwaitingApproval { status: ProposalStatus },
    #[error("this proposal expired at {}; ask for a new proposal", .expires_at.format("%Y-%m-%d %H:%M UTC"))]
    Expired { expires_at: Timestamp },
    #[error("this proposal was replaced by {by}; review that one instead")]
    Superseded { by: String },
    #[error("the proposal changed since you looked at it; reload it and review it again")]
    DigestMismatch,
    #[error(
        "this proposal's stored content no longer matches its digest, so it cannot be approved; tell an administrator"
    )]
    DigestInvalid,
    #[error("you asked for this refund or would receive it, so someone else must approve it")]
    SelfApproval,
    #[error(
        "you spoke for the team in the conversation this refund was prepared in, so someone else must approve it"
    )]
    SpokeInConversation,
    #[error("{amount} is above your approval limit of {limit}")]
    OverLimit { limit: Money, amount: Money },
    #[error(
        "you have already approved this proposal; a second approval must come from someone else"
    )]
    AlreadyApprovedByYou,
}

/// Decides whether this person may approve this proposal now.
///
/// # Errors
/// An [`ApproveError`] for the first rule broken, in the order: role,
/// pending, expiry, digest, self-approval, limit, repeat approval.
pub fn check_approval(ctx: &ApprovalContext<'_>) -> Result<ApprovalOutcome, ApproveError> {
    let approvals = check_pending(ctx)?;
    let proposal = ctx.proposal;
    if !proposal.verify_digest() {
        return Err(ApproveError::DigestInvalid);
    }
    if ctx.digest_shown != proposal.action_digest {
        return Err(ApproveError::DigestMismatch);
    }
    if proposal.provenance.involves(&ctx.approver.id) {
        return Err(ApproveError::SelfApproval);
    }
    if ctx.approver.spoke_in_conversation {
        return Err(ApproveError::SpokeInConversation);
    }
    if let Some(limit) = ctx.approver.limit_minor
        && proposal.amount.amount_minor > limit
    {
        return Err(ApproveError::OverLimit {
            limit: Money::new(limit, proposal.amount.currency),
            amount: proposal.amount,
        });
    }
    let mut others: Vec<&str> = approvals
        .iter()
        .filter(|a| a.counts_at(ctx.now))
        .map(|a| a.approver_id.as_str())
        .collect();
    if others.contains(&ctx.approver.id.as_str()) {
        return Err(ApproveError::AlreadyApprovedByYou);
    }
    others.sort_unstable();
    others.dedup();
    let required = ctx.policy.required_approvals(proposal.amount);
    let after = u8::try_from(others.len() + 1).unwrap_or(u8::MAX);
    Ok(if after >= required {
        ApprovalOutcome::Complete {
            required_approvals: required,
        }
    } else {
        ApprovalOutcome::Recorded {
            approvals_needed_after: required - after,
            required_approvals: required,
        }
    })
}

/// Decides whether this person may reject the proposal now. Rejecting needs
/// the approver role and a pending proposal, but no limit: saying no to a
/// large refund is always allowed.
///
/// # Errors
/// [`ApproveError::NotAnApprover`], [`ApproveError::NotAwaitingApproval`],
/// [`ApproveError::Expired`].
pub fn check_rejection(ctx: &ApprovalContext<'_>) -> Result<(), ApproveError> {
    check_pending(ctx).map(|_| ())
}

fn check_pending<'a>(ctx: &ApprovalContext<'a>) -> Result<&'a [ApprovalRef], ApproveError> {
    if !ctx.approver.roles.contains(Role::Approver) {
        return Err(ApproveError::NotAnApprover);
    }
    let ProposalState::AwaitingApproval {
        expires_at,
        approvals,
    } = ctx.state
    else {
        return Err(match ctx.state {
            ProposalState::Superseded { by } => ApproveError::Superseded { by: by.clone() },
            other => ApproveError::NotAwaitingApproval {
                status: other.status(),
            },
        });
    };
    if ctx.now >= *expires_at {
        return Err(ApproveError::Expired {
            expires_at: *expires_at,
        });
    }
    Ok(approvals)
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
