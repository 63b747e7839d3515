//! What can happen to a proposal. Each command is applied with
//! [`super::apply`]; one that does not fit the current state is refused.

use super::invalidation::InvalidationReason;
use super::state::{ApprovalRef, ChargeBooks, ProviderRefund, Receipt};
use crate::Timestamp;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// A person's approval, already checked by [`super::check_approval`].
    /// `required_approvals` comes from the approval policy (2 above the
    /// four-eyes threshold); 0 is treated as 1.
    Approve {
        approval: ApprovalRef,
        required_approvals: u8,
    },
    /// A person declines the proposal; the reason is shown to the requester.
    Reject { by: String, reason: String },
    /// Nobody approved (or claimed) it in time.
    Expire,
    /// A newer proposal (id `by`) replaces this one.
    Supersede { by: String },
    /// An executor takes the proposal: a first claim of an approved proposal,
    /// a takeover of an executing one whose lease ran out, or the next status
    /// check of one whose outcome is unknown.
    Claim {
        executor: String,
        lease_until: Timestamp,
    },
    /// Revalidation failed; only before anything may have been sent.
    Invalidate { reason: InvalidationReason },
    /// Recorded (and committed) immediately *before* the provider call, so
    /// that a crash afterwards is known to be "may have sent".
    MarkSent,
    /// The provider says the refund exists and succeeded.
    RecordSucceeded { receipt: Receipt },
    /// The provider definitely did not refund (a business refusal, or a
    /// refund object that failed at once, whose receipt is kept).
    RecordDeclined {
        reason: String,
        receipt: Option<Receipt>,
    },
    /// Timeout, reset, 5xx, pending, unreadable answer: the outcome is not
    /// known. Query again at `retry_at`; a person is told once `max_checks`
    /// checks came back unknown.
    RecordUnknown {
        reason: String,
        retry_at: Timestamp,
        max_checks: u32,
    },
    /// A status query found no refund under the key. Whether resending is
    /// safe depends on whether the provider still remembers the key.
    StatusNotFound { within_key_retention: bool },
    /// Something only a person can sort out (e.g. the provider says the key
    /// was used with different parameters).
    Escalate { reason: String },
    /// Verification: every refund the provider lists under the proposal's
    /// idempotency key and, when the charge was read, how its refunded total
    /// compares with Countersign's books.
    RecordVerified {
        refunds: Vec<ProviderRefund>,
        #[serde(default)]
        books: Option<ChargeBooks>,
    },
    /// A person settles a proposal that needs attention (or whose outcome
    /// stayed unknown too long).
    Resolve { by: String, resolution: Resolution },
}

/// A person's verdict on a proposal that needs attention (or whose outcome
/// stayed unknown too long). The engine checks the first two with the
/// payment provider before applying them; the state machine only sees the
/// checked result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "resolution", rename_all = "snake_case")]
pub enum Resolution {
    /// The provider holds this proposal's refund: `receipt` is what it
    /// reported for the refund id the person named. Books the refund.
    RefundConfirmed { receipt: Receipt, note: String },
    /// The provider holds no refund for this proposal. With `retry_as`, a new
    /// proposal with that id (hence a new idempotency key) and the same
    /// content waits for a fresh approval.
    NoRefund {
        note: String,
        retry_as: Option<String>,
    },
    /// Closed without a refund, for the reason a person gives.
    Closed { reason: String },
}

/// Who may settle a proposal that needs a person: approvers and managers.
/// Checked in code by every way in (page, API).
pub fn may_resolve(roles: &crate::RoleSet) -> bool {
    roles.any_of(&[crate::Role::Approver, crate::Role::Manager])
}

impl Resolution {
    /// The resolution's name, for the journal and the API.
    pub fn name(&self) -> &'static str {
        match self {
            Resolution::RefundConfirmed { .. } => "refund_confirmed",
            Resolution::NoRefund { .. } => "no_refund",
            Resolution::Closed { .. } => "closed",
        }
    }
}

impl Command {
    /// The command's name, for errors and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Approve { .. } => "approve",
            Command::Reject { .. } => "reject",
            Command::Expire => "expire",
            Command::Supersede { .. } => "supersede",
            Command::Claim { .. } => "claim",
            Command::Invalidate { .. } => "invalidate",
            Command::MarkSent => "mark_sent",
            Command::RecordSucceeded { .. } => "record_succeeded",
            Command::RecordDeclined { .. } => "record_declined",
            Command::RecordUnknown { .. } => "record_unknown",
            Command::StatusNotFound { .. } => "status_not_found",
            Command::Escalate { .. } => "escalate",
            Command::RecordVerified { .. } => "record_verified",
            Command::Resolve { .. } => "resolve",
        }
    }
}
