//! What the engine must do after a transition commits. Effects are data:
//! the state machine never performs I/O, so the engine can commit the new
//! state, its journal event and an outbox of effects in one transaction and
//! perform the effects afterwards.

use super::state::ProposalState;
use crate::money::Money;
use serde::{Deserialize, Serialize};

/// Effects are listed in the order they must run; a failing effect stops
/// the ones after it (a failed `Revalidate` means no `SendRefund`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Enough approvals: an executor should `Claim` the proposal now.
    Execute,
    /// Re-read the order and check it with [`super::revalidate`]; on failure
    /// apply `Invalidate` and skip the rest.
    Revalidate,
    /// Apply `MarkSent`, then ask the provider to refund under this key
    /// (always the proposal id). Resending under the same key is a status
    /// query to the provider, never a second refund.
    SendRefund { idempotency_key: String },
    /// Ask the provider what happened under this key (never creates a
    /// refund); report with `RecordSucceeded`, `RecordDeclined`,
    /// `RecordUnknown` or `StatusNotFound`.
    QueryStatus { idempotency_key: String },
    /// Read back every refund under this key and report `RecordVerified`.
    Verify { idempotency_key: String },
    /// Record the refund on the order (so revalidation of other proposals
    /// sees it). Must be idempotent by proposal id: a person's resolution
    /// may repeat it.
    BookRefundOnOrder {
        order_id: String,
        amount: Money,
        provider_refund_id: String,
    },
    /// Tell a person (approvers, operators) something only they can settle.
    NotifyPerson { reason: String },
}

/// The result of applying a command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Transition {
    pub next: ProposalState,
    pub effects: Vec<Effect>,
    /// The journal event kind, one of [`event`].
    pub event: &'static str,
}

impl Transition {
    // Every transition also changes something a person may be watching; the
    // engine announces each saved change to live views, so that is not an
    // effect a transition has to ask for.
    pub(crate) fn new(next: ProposalState, event: &'static str, effects: Vec<Effect>) -> Self {
        Transition {
            next,
            effects,
            event,
        }
    }

    /// Whether this transition asks for a refund to be sent.
    pub fn sends_refund(&self) -> bool {
        self.effects
            .iter()
            .any(|e| matches!(e, Effect::SendRefund { .. }))
    }
}

/// Journal event kinds a transition can produce.
pub mod event {
    /// A proposal was stored (not a transition: the journal's first event).
    pub const PROPOSED: &str = "proposed";
    pub const APPROVAL_RECORDED: &str = "approval_recorded";
    pub const APPROVED: &str = "approved";
    pub const REJECTED: &str = "rejected";
    pub const EXPIRED: &str = "expired";
    pub const SUPERSEDED: &str = "superseded";
    pub const CLAIMED: &str = "claimed";
    /// A successor took over an executing proposal whose lease ran out.
    pub const TAKEN_OVER: &str = "taken_over";
    pub const STATUS_CHECK_STARTED: &str = "status_check_started";
    pub const INVALIDATED: &str = "invalidated";
    pub const SENT: &str = "sent";
    pub const SUCCEEDED: &str = "succeeded";
    pub const FAILED: &str = "failed";
    pub const OUTCOME_UNKNOWN: &str = "outcome_unknown";
    /// A status query found nothing and the key is still remembered.
    pub const RESENDING: &str = "resending";
    pub const NEEDS_ATTENTION: &str = "needs_attention";
    pub const VERIFIED: &str = "verified";
    pub const RESOLVED: &str = "resolved";

    /// Every kind the journal holds, in the order a refund meets them.
    pub const ALL: [&str; 18] = [
        PROPOSED,
        APPROVAL_RECORDED,
        APPROVED,
        REJECTED,
        EXPIRED,
        SUPERSEDED,
        CLAIMED,
        TAKEN_OVER,
        STATUS_CHECK_STARTED,
        INVALIDATED,
        SENT,
        SUCCEEDED,
        FAILED,
        OUTCOME_UNKNOWN,
        RESENDING,
        NEEDS_ATTENTION,
        VERIFIED,
        RESOLVED,
    ];
}
