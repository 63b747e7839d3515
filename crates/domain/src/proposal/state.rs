//! Where a proposal stands. Each variant carries the data that only makes
//! sense in it, so "a receipt without a refund" or "a lease on a rejected
//! proposal" cannot be written down.

use super::content::RefundProposal;
use super::invalidation::InvalidationReason;
use super::status::ProposalStatus;
use crate::Timestamp;
use crate::money::Money;
use serde::{Deserialize, Serialize};

/// One approval counted towards a proposal; the full record (conditions,
/// digest shown) is [`super::Approval`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRef {
    pub approval_id: String,
    pub approver_id: String,
    pub at: Timestamp,
    /// After this an approval no longer counts: the world it was given in
    /// may have moved on.
    pub expires_at: Timestamp,
}

impl ApprovalRef {
    pub fn counts_at(&self, now: Timestamp) -> bool {
        now < self.expires_at
    }
}

/// What the payment provider said it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    pub provider: String,
    pub provider_refund_id: String,
    pub amount: Money,
    /// The provider's own word for the status (`succeeded`, …).
    pub status: String,
    pub recorded_at: Timestamp,
}

/// One refund as the provider lists it under the proposal's idempotency key,
/// read back during verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderRefund {
    pub provider_refund_id: String,
    pub amount: Money,
    pub status: String,
}

impl ProviderRefund {
    pub fn has_succeeded(&self) -> bool {
        self.status.eq_ignore_ascii_case("succeeded")
    }
}

/// The charge's refunded total at the provider beside what Countersign
/// knows of it, in the proposal's currency (minor units). Verification
/// compares them: money the books do not explain needs a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChargeBooks {
    pub payment_reference: String,
    /// What the provider counts as refunded on the charge.
    pub refunded_at_provider: i64,
    /// Refunds booked on the order (Countersign's own, this one included,
    /// and those recorded from other channels).
    pub booked: i64,
    /// Other proposals of the order still on their way (sent, not yet
    /// recorded): the provider may already count them.
    pub in_flight: i64,
}

impl ChargeBooks {
    /// Whether the provider's total is explained by the books: at least what
    /// is booked, at most that plus what is still on its way.
    pub fn agree(&self) -> bool {
        self.refunded_at_provider >= self.booked
            && self.refunded_at_provider <= self.booked.saturating_add(self.in_flight)
    }
}

/// What earlier status checks left unknown, carried through the
/// outcome-unknown → executing → outcome-unknown loop so the count and the
/// escalation survive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Uncertainty {
    /// When the outcome first became unknown.
    pub since: Timestamp,
    /// Status checks that came back unknown so far.
    pub checks: u32,
    /// A person has been told.
    pub escalated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ProposalState {
    /// Waiting for people. `approvals` are those given so far (four eyes).
    AwaitingApproval {
        expires_at: Timestamp,
        approvals: Vec<ApprovalRef>,
    },
    /// Enough approvals; waiting for an executor to claim it before
    /// `expires_at` (the earliest of the proposal's and the approvals' expiry).
    Approved {
        approvals: Vec<ApprovalRef>,
        expires_at: Timestamp,
    },
    /// An executor holds a lease. `sent` is recorded *before* the provider
    /// call, so `sent == false` proves no call went out.
    Executing {
        attempt: u32,
        lease_until: Timestamp,
        executor: String,
        sent: bool,
        unknown: Option<Uncertainty>,
    },
    /// The provider call timed out or answered unreadably: the refund may or
    /// may not exist. Never treated as failure; its status is queried at
    /// `next_check_at`.
    OutcomeUnknown {
        attempt: u32,
        since: Timestamp,
        reason: String,
        checks: u32,
        next_check_at: Timestamp,
        escalated: bool,
    },
    /// The provider reports the refund done; not yet checked independently.
    Succeeded {
        receipt: Receipt,
    },
    /// Read back from the provider: exactly one refund, the right amount.
    Verified {
        receipt: Receipt,
        verified_at: Timestamp,
    },
    /// Definitely not refunded (the provider declined, or a person said so).
    Failed {
        reason: String,
        receipt: Option<Receipt>,
    },
    Rejected {
        by: String,
        reason: String,
    },
    Expired {
        at: Timestamp,
    },
    /// Revalidation found the world changed before anything was sent.
    Invalidated {
        reason: InvalidationReason,
    },
    /// Replaced by the proposal with this id.
    Superseded {
        by: String,
    },
    /// Handed to a person: verification mismatch, key reused, no record
    /// beyond the key-retention window. Only [`super::Command::Resolve`]
    /// moves it.
    NeedsAttention {
        reason: String,
        receipt: Option<Receipt>,
    },
}

impl ProposalState {
    /// A new proposal's state.
    pub fn initial(proposal: &RefundProposal) -> ProposalState {
        ProposalState::AwaitingApproval {
            expires_at: proposal.expires_at,
            approvals: Vec::new(),
        }
    }

    pub fn status(&self) -> ProposalStatus {
        match self {
            ProposalState::AwaitingApproval { .. } => ProposalStatus::AwaitingApproval,
            ProposalState::Approved { .. } => ProposalStatus::Approved,
            ProposalState::Executing { .. } => ProposalStatus::Executing,
            ProposalState::OutcomeUnknown { .. } => ProposalStatus::OutcomeUnknown,
            ProposalState::Succeeded { .. } => ProposalStatus::Succeeded,
            ProposalState::Verified { .. } => ProposalStatus::Verified,
            ProposalState::Failed { .. } => ProposalStatus::Failed,
            ProposalState::Rejected { .. } => ProposalStatus::Rejected,
            ProposalState::Expired { .. } => ProposalStatus::Expired,
            ProposalState::Invalidated { .. } => ProposalStatus::Invalidated,
            ProposalState::Superseded { .. } => ProposalStatus::Superseded,
            ProposalState::NeedsAttention { .. } => ProposalStatus::NeedsAttention,
        }
    }

    pub fn is_terminal(&self) -> bool {
        self.status().is_terminal()
    }

    /// Approvals given so far (empty once execution has begun).
    pub fn approvals(&self) -> &[ApprovalRef] {
        match self {
            ProposalState::AwaitingApproval { approvals, .. }
            | ProposalState::Approved { approvals, .. } => approvals,
            _ => &[],
        }
    }

    pub fn receipt(&self) -> Option<&Receipt> {
        match self {
            ProposalState::Succeeded { receipt } | ProposalState::Verified { receipt, .. } => {
                Some(receipt)
            }
            ProposalState::Failed { receipt, .. }
            | ProposalState::NeedsAttention { receipt, .. } => receipt.as_ref(),
            _ => None,
        }
    }

    /// When something automatic is next due: expiry while waiting, lease
    /// takeover while executing, the next status check while unknown. For the
    /// reconciler's `(status, due_at)` index.
    pub fn due_at(&self) -> Option<Timestamp> {
        match self {
            ProposalState::AwaitingApproval { expires_at, .. }
            | ProposalState::Approved { expires_at, .. } => Some(*expires_at),
            ProposalState::Executing { lease_until, .. } => Some(*lease_until),
            ProposalState::OutcomeUnknown { next_check_at, .. } => Some(*next_check_at),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::proposal::fixtures::{self, t0};
    use chrono::Duration;

    #[test]
    fn a_new_proposal_awaits_approval_until_it_expires() {
        let proposal = fixtures::proposal();
        let state = ProposalState::initial(&proposal);
        assert_eq!(state.status(), ProposalStatus::AwaitingApproval);
        assert_eq!(state.due_at(), Some(proposal.expires_at));
        assert!(state.approvals().is_empty());
    }

    #[test]
    fn the_state_is_stored_as_json_tagged_with_its_status() {
        let states = [
            ProposalState::Executing {
                attempt: 2,
                lease_until: t0() + Duration::minutes(5),
                executor: "worker-1".into(),
                sent: true,
                unknown: Some(Uncertainty {
                    since: t0(),
                    checks: 1,
                    escalated: false,
                }),
            },
            ProposalState::Invalidated {
                reason: InvalidationReason::Other("order disputed".into()),
            },
            ProposalState::Verified {
                receipt: fixtures::receipt(7900),
                verified_at: t0(),
            },
        ];
        for state in states {
            let json = serde_json::to_value(&state).unwrap();
            assert_eq!(json["status"], state.status().as_str());
            let back: ProposalState = serde_json::from_value(json).unwrap();
            assert_eq!(back, state);
        }
    }

    #[test]
    fn an_approval_stops_counting_when_it_expires() {
        let approval = fixtures::approval_ref("usr_anna", t0());
        assert!(approval.counts_at(t0()));
        assert!(!approval.counts_at(approval.expires_at));
    }
}
