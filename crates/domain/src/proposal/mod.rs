//! Refund proposals: what an agent proposes, who approved it, and the state
//! machine that executes it exactly once and verifies it.
//!
//! - Content ([`RefundProposal`]) is immutable; any change is a new proposal
//!   that supersedes the old one.
//! - [`RefundAction`] is exactly what would execute; its digest binds an
//!   approval to that action.
//! - [`check_approval`] decides whether a person may approve (permissions
//!   live in code, never in a prompt).
//! - [`apply`] moves a [`ProposalState`] by a [`Command`] and returns the next
//!   state plus the [`Effect`]s to perform; it does no I/O, so storage can
//!   apply it inside one transaction and the rules can be property-tested.

mod action;
mod approval;
mod checks;
mod command;
mod content;
mod decide;
mod effect;
mod evidence;
mod execute;
mod invalidation;
mod overlap;
mod state;
mod status;
mod transition;
mod verify;

#[cfg(test)]
pub(crate) mod fixtures;

pub use action::{ActionKind, RefundAction};
pub use approval::{
    Approval, ApprovalContext, ApprovalOutcome, ApprovalPolicy, ApproveError, Approver,
    ConditionsSnapshot, Decision, check_approval, check_rejection,
};
pub use checks::{
    CheckKind, CheckLevel, PreDecisionCheck, blocking_reason, pre_decision_checks, window_days,
};
pub use command::{Command, Resolution, may_resolve};
pub use content::{MAX_RECOMMENDATION_CHARS, ProposalDraft, ProposalError, RefundProposal};
pub use effect::{Effect, Transition, event};
pub use evidence::{
    AnsweredIn, Asker, Evidence, EvidenceKind, OpenQuestion, Provenance, Submitter,
};
pub use invalidation::{ChargeAtProvider, InvalidationReason, revalidate, revalidate_at_provider};
pub use overlap::{LiveClaim, overlapping};
pub use state::{ApprovalRef, ChargeBooks, ProposalState, ProviderRefund, Receipt, Uncertainty};
pub use status::{ProposalStatus, UnknownStatus};
pub use transition::{TransitionError, apply};
