//! What an approver sees checked before deciding.
//!
//! The desk shows, before the Confirm click, every check the engine will
//! apply: whether this person may approve now ([`check_approval`]: role,
//! expiry, self-approval, their limit, a repeat approval) and whether the
//! order still holds the amount ([`revalidate`], as execution does). The
//! rules live there; this module only runs them against what the page
//! shows and words the answers for a person. Three things no engine rule
//! refuses are set beside them as warnings for the approver's judgement:
//! the order's age against the cited policy passage's window, questions
//! still open, and other live proposals for the same order.

use super::approval::{
    ApprovalContext, ApprovalOutcome, ApproveError, ConditionsSnapshot, check_approval,
};
use super::evidence::EvidenceKind;
use super::invalidation::{InvalidationReason, revalidate};
use crate::order::OrderSnapshot;
use serde::{Deserialize, Serialize};

/// How much a check weighs on the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckLevel {
    /// Holds.
    Passed,
    /// Holds for the engine, but the approver should weigh it.
    Warning,
    /// The engine would refuse: approving is not offered.
    Blocking,
}

/// What a check looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// Whether this person may approve now (role, expiry, four eyes, …).
    Permission,
    /// The approver's own limit.
    Limit,
    /// What is still refundable on the order.
    Refundable,
    /// The order's age against the cited policy passage's window.
    PolicyWindow,
    /// Questions the records cannot answer and nobody has.
    OpenQuestions,
    /// Other live proposals for the same order.
    OtherProposals,
}

impl CheckKind {
    /// The name pages and tests know it by (as serialised).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::Permission => "permission",
            CheckKind::Limit => "limit",
            CheckKind::Refundable => "refundable",
            CheckKind::PolicyWindow => "policy_window",
            CheckKind::OpenQuestions => "open_questions",
            CheckKind::OtherProposals => "other_proposals",
        }
    }
}

/// One line of the pre-decision checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreDecisionCheck {
    pub kind: CheckKind,
    pub level: CheckLevel,
    /// What was found, in the approver's words.
    pub message: String,
}

impl PreDecisionCheck {
    fn new(kind: CheckKind, level: CheckLevel, message: impl Into<String>) -> Self {
        PreDecisionCheck {
            kind,
            level,
            message: message.into(),
        }
    }
}

/// The first check that makes the engine refuse, if any: its message is
/// the reason the desk gives for not offering Approve.
pub fn blocking_reason(checks: &[PreDecisionCheck]) -> Option<&str> {
    checks
        .iter()
        .find(|c| c.level == CheckLevel::Blocking)
        .map(|c| c.message.as_str())
}

/// Every check for `ctx.approver` approving `ctx.proposal` now, with the
/// order as it is (`None`: it no longer exists) and the number of other
/// live proposals for it. `ctx.digest_shown` is the digest the page shows.
pub fn pre_decision_checks(
    ctx: &ApprovalContext<'_>,
    order: Option<&OrderSnapshot>,
    other_live: usize,
) -> Vec<PreDecisionCheck> {
    let mut checks = permission_checks(ctx);
    checks.push(refundable_check(ctx, order));
    checks.extend(policy_window_checks(ctx, order));
    let open: Vec<&str> = ctx
        .proposal
        .open_questions
        .iter()
        .filter(|q| q.is_open())
        .map(|q| q.question.as_str())
        .collect();
    if !open.is_empty() {
        checks.push(PreDecisionCheck::new(
            CheckKind::OpenQuestions,
            CheckLevel::Warning,
            format!("Still unknown: {}", open.join(" ")),
        ));
    }
    if other_live > 0 {
        let others = if other_live == 1 {
            "another live proposal".to_owned()
        } else {
            format!("{other_live} other live proposals")
        };
        checks.push(PreDecisionCheck::new(
            CheckKind::OtherProposals,
            CheckLevel::Warning,
            format!(
                "Order {} has {others}: together they can never pay out more than is left.",
                ctx.proposal.order_id
            ),
        ));
    }
    checks
}

/// The approval rules themselves, run as the approve use case runs them.
fn permission_checks(ctx: &ApprovalContext<'_>) -> Vec<PreDecisionCheck> {
    let amount = ctx.proposal.amount;
    let limit_line = |level| match ctx.approver.limit_minor {
        Some(limit) => PreDecisionCheck::new(
            CheckKind::Limit,
            level,
            format!(
                "{amount} is within your approval limit of {}.",
                crate::money::Money::new(limit, amount.currency)
            ),
        ),
        None => PreDecisionCheck::new(
            CheckKind::Limit,
            level,
            "You have no approval limit for this currency.",
        ),
    };
    match check_approval(ctx) {
        Ok(outcome) => {
            let you = match outcome {
                ApprovalOutcome::Complete {
                    required_approvals: 1,
                } => "You may approve it: the refund is sent when you confirm.".to_owned(),
                ApprovalOutcome::Complete { required_approvals } => format!(
                    "You may give the last of {required_approvals} approvals: the refund is sent when you confirm."
                ),
                ApprovalOutcome::Recorded {
                    approvals_needed_after,
                    required_approvals,
                } => format!(
                    "You may approve it; it needs {required_approvals} different approvers, so {approvals_needed_after} more must approve after you before anything is sent."
                ),
            };
            vec![
                PreDecisionCheck::new(CheckKind::Permission, CheckLevel::Passed, you),
                limit_line(CheckLevel::Passed),
            ]
        }
        Err(error @ ApproveError::OverLimit { .. }) => vec![PreDecisionCheck::new(
            CheckKind::Limit,
            CheckLevel::Blocking,
            format!("You cannot approve it: {error}."),
        )],
        Err(error) => vec![PreDecisionCheck::new(
            CheckKind::Permission,
            CheckLevel::Blocking,
            format!("You cannot approve it: {error}."),
        )],
    }
}

/// Execution's revalidation against the order as it is now (taken as the
/// approved conditions, so only what makes a refund impossible shows).
fn refundable_check(ctx: &ApprovalContext<'_>, order: Option<&OrderSnapshot>) -> PreDecisionCheck {
    let proposal = ctx.proposal;
    let now_conditions = order.and_then(|o| ConditionsSnapshot::capture(o, Vec::new()).ok());
    let verdict = match (order, &now_conditions) {
        (Some(order), Some(conditions)) => revalidate(proposal, Some(order), conditions),
        (Some(order), None) => revalidate(proposal, Some(order), &unreadable()),
        (None, _) => Err(InvalidationReason::OrderMissing),
    };
    let amount = proposal.amount;
    match verdict {
        Ok(()) => {
            let left = order
                .and_then(|o| o.refundable().ok())
                .map_or_else(String::new, |m| m.to_string());
            PreDecisionCheck::new(
                CheckKind::Refundable,
                CheckLevel::Passed,
                format!("{left} of the order is still refundable; {amount} is proposed."),
            )
        }
        Err(reason) => {
            let message = match reason {
                InvalidationReason::OrderMissing => "The order no longer exists.".to_owned(),
                InvalidationReason::AlreadyRefunded { refunded } => format!(
                    "Nothing is left to refund: {refunded} has already been refunded on this order."
                ),
                InvalidationReason::InsufficientRefundable { refundable } => format!(
                    "Only {refundable} of the order is still refundable, less than the {amount} proposed."
                ),
                InvalidationReason::CurrencyChanged => {
                    "The order is now in another currency than the proposal.".to_owned()
                }
                InvalidationReason::OrderChanged => {
                    "The order's payment is no longer the one this proposal refunds.".to_owned()
                }
                other => format!("The order cannot be refunded as proposed: {other}."),
            };
            PreDecisionCheck::new(CheckKind::Refundable, CheckLevel::Blocking, message)
        }
    }
}

/// Conditions that match no order: revalidation then reports the most
/// specific problem it finds first (inconsistent refund records).
fn unreadable() -> ConditionsSnapshot {
    ConditionsSnapshot {
        order_version: -1,
        order_hash: String::new(),
        policy_versions: Vec::new(),
        refundable_minor: 0,
    }
}

/// For each cited policy passage that names a window ("within 30 days"),
/// how old the delivery is against it.
fn policy_window_checks(
    ctx: &ApprovalContext<'_>,
    order: Option<&OrderSnapshot>,
) -> Vec<PreDecisionCheck> {
    let Some(order) = order else {
        return Vec::new();
    };
    ctx.proposal
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::Policy)
        .filter_map(|e| {
            let window = window_days(&e.quote)?;
            let section = e.section.clone().unwrap_or_else(|| e.title.clone());
            Some(match order.days_since_delivery(ctx.now) {
                None => PreDecisionCheck::new(
                    CheckKind::PolicyWindow,
                    CheckLevel::Warning,
                    format!(
                        "Order {} has no delivery date, so its age against \"{section}\" ({window} days from delivery) cannot be checked.",
                        order.id
                    ),
                ),
                Some(days) if days > window => PreDecisionCheck::new(
                    CheckKind::PolicyWindow,
                    CheckLevel::Warning,
                    format!(
                        "Outside the policy window: delivered {days} days ago, but \"{section}\" allows {window} days."
                    ),
                ),
                Some(days) => PreDecisionCheck::new(
                    CheckKind::PolicyWindow,
                    CheckLevel::Passed,
                    format!(
                        "Delivered {days} days ago, within the {window} days \"{section}\" allows."
                    ),
                ),
            })
        })
        .collect()
}

/// The N of "within N days" in a policy passage, if it names one.
pub fn window_days(passage: &str) -> Option<i64> {
    let lower = passage.to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    words.windows(3).find_map(|w| {
        let unit = w[2].trim_end_matches(['.', ',', ';', ')']);
        (w[0] == "within" && (unit == "days" || unit == "day"))
            .then(|| w[1].parse::<i64>().ok())
            .flatten()
    })
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
