//! The state machine's single entry point: which command fits which state.
//! The rules for each step live in `decide` (approval phase), `execute`
//! (sending and status checks) and `verify` (read-back and resolution).

use super::command::Command;
use super::content::RefundProposal;
use super::effect::Transition;
use super::state::ProposalState;
use super::status::ProposalStatus;
use super::{decide, execute, verify};
use crate::Timestamp;

/// Why a command was refused. The state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("cannot {command} a proposal whose status is {from}")]
    NotAllowed {
        from: ProposalStatus,
        command: &'static str,
    },
    #[error("the proposal expired at {expires_at}; it can no longer be approved or executed")]
    Expired { expires_at: Timestamp },
    #[error("the proposal does not expire until {expires_at}")]
    NotYetExpired { expires_at: Timestamp },
    #[error(
        "{approver_id} has already approved this proposal; a second approval must come from someone else"
    )]
    AlreadyApproved { approver_id: String },
    #[error("this approval had already expired when it was recorded")]
    ApprovalExpired,
    #[error("executor {executor} is working on this proposal until {lease_until}")]
    LeaseHeld {
        executor: String,
        lease_until: Timestamp,
    },
    #[error("the next status check is not due until {next_check_at}")]
    CheckNotDue { next_check_at: Timestamp },
    #[error(
        "the refund request may already have reached the payment provider, so the proposal can no longer be invalidated"
    )]
    AlreadySent,
    /// The command itself is malformed (blank reason, lease in the past).
    #[error("{0}")]
    Invalid(String),
}

/// Applies one command to a proposal's state at time `now`.
///
/// `proposal` supplies what the state does not repeat: the idempotency key
/// (its id, so no caller can send under another key), and the approved
/// amount that receipts and resolutions are checked against.
///
/// Terminal states refuse every command.
///
/// # Errors
/// [`TransitionError::NotAllowed`] when the command does not fit the state;
/// the other variants when it fits but breaks a rule (expiry, lease, …).
pub fn apply(
    proposal: &RefundProposal,
    state: &ProposalState,
    command: Command,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    use Command as C;
    use ProposalState as S;

    let from = state.status();
    let not_allowed = TransitionError::NotAllowed {
        from,
        command: command.name(),
    };
    if from.is_terminal() {
        return Err(not_allowed);
    }
    let key = proposal.id.as_str();
    match (state, command) {
        // Approval phase.
        (
            S::AwaitingApproval {
                expires_at,
                approvals,
            },
            C::Approve {
                approval,
                required_approvals,
            },
        ) => decide::approve(*expires_at, approvals, approval, required_approvals, now),
        (S::AwaitingApproval { expires_at, .. }, C::Reject { by, reason }) => {
            decide::reject(*expires_at, by, reason, now)
        }
        (S::AwaitingApproval { expires_at, .. } | S::Approved { expires_at, .. }, C::Expire) => {
            decide::expire(*expires_at, now)
        }
        (S::AwaitingApproval { .. }, C::Supersede { by }) => decide::supersede(by),

        // Claims: first execution, takeover, next status check.
        (
            S::Approved { expires_at, .. },
            C::Claim {
                executor,
                lease_until,
            },
        ) => execute::claim_approved(key, *expires_at, executor, lease_until, now),
        (
            S::Executing { .. },
            C::Claim {
                executor,
                lease_until,
            },
        ) => execute::take_over(key, state, executor, lease_until, now),
        (
            S::OutcomeUnknown { .. },
            C::Claim {
                executor,
                lease_until,
            },
        ) => execute::check_again(key, state, executor, lease_until, now),

        // Before and around the provider call.
        (S::Approved { .. } | S::Executing { sent: false, .. }, C::Invalidate { reason }) => {
            Ok(execute::invalidate(reason))
        }
        (S::Executing { sent: true, .. }, C::Invalidate { .. }) => {
            Err(TransitionError::AlreadySent)
        }
        (S::Executing { .. }, C::MarkSent) => Ok(execute::mark_sent(state)),
        (S::Executing { .. } | S::OutcomeUnknown { .. }, C::RecordSucceeded { receipt }) => {
            Ok(execute::record_succeeded(proposal, receipt))
        }
        (S::Executing { .. } | S::OutcomeUnknown { .. }, C::RecordDeclined { reason, receipt }) => {
            execute::record_declined(reason, receipt)
        }
        (
            S::Executing { .. },
            C::RecordUnknown {
                reason,
                retry_at,
                max_checks,
            },
        ) => execute::record_unknown(state, reason, retry_at, max_checks, now),
        (
            S::Executing { .. },
            C::StatusNotFound {
                within_key_retention,
            },
        ) => Ok(execute::status_not_found(key, state, within_key_retention)),
        (
            S::Executing { .. } | S::OutcomeUnknown { .. } | S::Succeeded { .. },
            C::Escalate { reason },
        ) => execute::escalate(state, reason),

        // Verification and a person's resolution.
        (S::Succeeded { receipt }, C::RecordVerified { refunds, books }) => Ok(
            verify::record_verified(key, receipt, &refunds, books.as_ref(), now),
        ),
        (S::NeedsAttention { receipt, .. }, C::Resolve { by, resolution }) => {
            verify::resolve(proposal, receipt.as_ref(), by, resolution, now)
        }
        (
            S::OutcomeUnknown {
                escalated: true, ..
            },
            C::Resolve { by, resolution },
        ) => verify::resolve(proposal, None, by, resolution, now),

        _ => Err(not_allowed),
    }
}

/// A required free-text field (reason, name) must say something.
pub(super) fn non_blank(value: String, what: &str) -> Result<String, TransitionError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(TransitionError::Invalid(format!(
            "{what} must not be empty"
        )));
    }
    Ok(trimmed.to_owned())
}
