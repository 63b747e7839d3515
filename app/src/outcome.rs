//! Where a decided proposal has got to, in one sentence with its tone, for
//! the approver following it after Confirm: the live outcome is the
//! proposal's state, including the reason when it ended badly.

use crate::proposals::ProposalCard;
use domain::proposal::ProposalState;

/// How an outcome reads at a glance (the stylesheet colours each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Done and checked.
    Good,
    /// On its way; nothing to do.
    Progress,
    /// Waiting for people.
    Waiting,
    /// A person must look.
    Attention,
    /// Ended without a refund.
    Bad,
    /// Ended by a person's choice.
    Neutral,
}

impl Tone {
    pub fn class(self) -> &'static str {
        match self {
            Tone::Good => "outcome good",
            Tone::Progress => "outcome progress",
            Tone::Waiting => "outcome waiting",
            Tone::Attention => "outcome attention",
            Tone::Bad => "outcome bad",
            Tone::Neutral => "outcome neutral",
        }
    }

    /// Whether the proposal can still move on its own.
    pub fn is_final(self) -> bool {
        matches!(self, Tone::Good | Tone::Bad | Tone::Neutral)
    }
}

/// `text` ended as a sentence: a full stop unless it has its own.
fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.ends_with(['.', '!', '?']) {
        text.to_owned()
    } else {
        format!("{text}.")
    }
}

/// The approver's sentence for where `card` stands now.
pub fn staff_outcome(card: &ProposalCard) -> (Tone, String) {
    let p = &card.proposal;
    let what = format!("Refund of {} for order {}", p.amount.display(), p.order_id);
    match &card.state {
        ProposalState::AwaitingApproval { approvals, .. } => {
            let missing = usize::from(card.approvals_required).saturating_sub(approvals.len());
            if card.approved_by_me && missing > 0 {
                let approvers = if missing == 1 {
                    "approver"
                } else {
                    "approvers"
                };
                (
                    Tone::Waiting,
                    format!(
                        "{what}: your approval is recorded; waiting for {missing} more {approvers} (not you) before anything is sent."
                    ),
                )
            } else {
                (Tone::Waiting, format!("{what}: awaiting approval."))
            }
        }
        ProposalState::Approved { .. } | ProposalState::Executing { .. } => (
            Tone::Progress,
            format!("{what}: approved; sending it to the payment provider…"),
        ),
        ProposalState::Succeeded { .. } => (
            Tone::Progress,
            format!("{what}: the provider accepted it; verifying…"),
        ),
        ProposalState::OutcomeUnknown { reason, .. } => (
            Tone::Attention,
            format!(
                "{what}: the provider's answer was lost ({reason}); asking it what happened. Nothing is assumed failed."
            ),
        ),
        ProposalState::Verified { .. } => (
            Tone::Good,
            format!("{what}: refunded and verified with the provider."),
        ),
        ProposalState::Failed { reason, .. } => (
            Tone::Bad,
            sentence(&format!("{what}: failed, nothing refunded: {reason}")),
        ),
        ProposalState::Invalidated { reason } => (
            Tone::Bad,
            sentence(&format!("{what}: invalidated, nothing refunded: {reason}")),
        ),
        ProposalState::NeedsAttention { reason, .. } => (
            Tone::Attention,
            sentence(&format!("{what}: needs a person's attention: {reason}")),
        ),
        ProposalState::Rejected { reason, .. } => (
            Tone::Neutral,
            sentence(&format!("{what}: rejected: {reason}")),
        ),
        ProposalState::Expired { .. } => (
            Tone::Bad,
            format!("{what}: expired before enough people approved it."),
        ),
        ProposalState::Superseded { by } => {
            (Tone::Neutral, format!("{what}: replaced by proposal {by}."))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use domain::proposal::{InvalidationReason, RefundProposal};

    fn card(state: ProposalState) -> ProposalCard {
        let proposal: RefundProposal = serde_json::from_value(serde_json::json!({
            "id": "prp_1", "order_id": "4821", "payment_reference": "pay_4821",
            "amount": {"amount_minor": 7900, "currency": "EUR"},
            "evidence": [], "open_questions": [], "recommendation": "Refund it.",
            "provenance": {"agent": "refund_specialist", "conversation_id": null, "on_behalf_of": null, "requested_by": "usr_c"},
            "created_at": "2026-12-01T09:00:00Z", "expires_at": "2026-12-02T09:00:00Z",
            "supersedes": null, "action_digest": "d"
        }))
        .unwrap();
        ProposalCard {
            proposal,
            state,
            state_version: 1,
            customer: "Cora".into(),
            approvals_required: 1,
            order: None,
            other_live: Vec::new(),
            checks: Vec::new(),
            approved_by_me: false,
        }
    }

    #[test]
    fn an_invalidated_approval_reads_as_bad_news_with_its_reason() {
        let (tone, text) = staff_outcome(&card(ProposalState::Invalidated {
            reason: InvalidationReason::OrderMissing,
        }));
        assert_eq!(tone, Tone::Bad);
        assert!(
            text.contains("invalidated, nothing refunded: the order can no longer be found"),
            "{text}"
        );
        assert!(text.ends_with('.') && !text.ends_with(".."), "{text}");
    }

    #[test]
    fn a_rejection_reason_with_its_own_full_stop_gets_no_second_one() {
        let (tone, text) = staff_outcome(&card(ProposalState::Rejected {
            by: "usr_a".into(),
            reason: "Arrived dented.".into(),
        }));
        assert_eq!(tone, Tone::Neutral);
        assert!(text.ends_with("rejected: Arrived dented."), "{text}");
    }
}
