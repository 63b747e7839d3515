//! Execution: claiming, sending once, and what to do when the provider's
//! answer is missing.
//!
//! The rules that keep a refund to exactly one payment:
//! - the idempotency key is always the proposal id (taken from the proposal,
//!   never from a command);
//! - `sent` is recorded before the call, so `sent == false` proves nothing
//!   went out and only then may the proposal still be invalidated;
//! - a successor (lease ran out) and a status check never resend blindly:
//!   they query first, and resend only when the provider still remembers the
//!   key (so a resend is deduplicated) or nothing was ever sent;
//! - a timeout is "outcome unknown", never "failed".

use super::content::RefundProposal;
use super::effect::{Effect, Transition, event};
use super::invalidation::InvalidationReason;
use super::state::{ProposalState, Receipt, Uncertainty};
use super::transition::{TransitionError, non_blank};
use crate::Timestamp;

/// For the dispatcher's guarantees: these helpers only see the states
/// [`super::apply`] routes to them.
fn not_allowed(state: &ProposalState, command: &'static str) -> TransitionError {
    TransitionError::NotAllowed {
        from: state.status(),
        command,
    }
}

fn check_lease(
    executor: String,
    lease_until: Timestamp,
    now: Timestamp,
) -> Result<String, TransitionError> {
    if lease_until <= now {
        return Err(TransitionError::Invalid(
            "a claim's lease must end in the future".into(),
        ));
    }
    non_blank(executor, "the executor's name")
}

pub(super) fn claim_approved(
    key: &str,
    expires_at: Timestamp,
    executor: String,
    lease_until: Timestamp,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    if now >= expires_at {
        return Err(TransitionError::Expired { expires_at });
    }
    let executor = check_lease(executor, lease_until, now)?;
    Ok(Transition::new(
        ProposalState::Executing {
            attempt: 1,
            lease_until,
            executor,
            sent: false,
            unknown: None,
        },
        event::CLAIMED,
        vec![
            Effect::Revalidate,
            Effect::SendRefund {
                idempotency_key: key.to_owned(),
            },
        ],
    ))
}

/// A successor takes over after the previous executor's lease ran out. It
/// cannot know whether the call went out, so it asks the provider first.
pub(super) fn take_over(
    key: &str,
    state: &ProposalState,
    executor: String,
    lease_until: Timestamp,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    let mut next = state.clone();
    let ProposalState::Executing {
        attempt,
        lease_until: held_until,
        executor: holder,
        ..
    } = &mut next
    else {
        return Err(not_allowed(state, "claim"));
    };
    if now < *held_until {
        return Err(TransitionError::LeaseHeld {
            executor: holder.clone(),
            lease_until: *held_until,
        });
    }
    *holder = check_lease(executor, lease_until, now)?;
    *held_until = lease_until;
    *attempt = attempt.saturating_add(1);
    Ok(Transition::new(
        next,
        event::TAKEN_OVER,
        vec![Effect::QueryStatus {
            idempotency_key: key.to_owned(),
        }],
    ))
}

/// The next status check of a proposal whose outcome is unknown.
pub(super) fn check_again(
    key: &str,
    state: &ProposalState,
    executor: String,
    lease_until: Timestamp,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    let ProposalState::OutcomeUnknown {
        attempt,
        since,
        checks,
        next_check_at,
        escalated,
        ..
    } = state
    else {
        return Err(not_allowed(state, "claim"));
    };
    if now < *next_check_at {
        return Err(TransitionError::CheckNotDue {
            next_check_at: *next_check_at,
        });
    }
    let executor = check_lease(executor, lease_until, now)?;
    Ok(Transition::new(
        ProposalState::Executing {
            attempt: attempt.saturating_add(1),
            lease_until,
            executor,
            // An unknown outcome means a call may have gone out.
            sent: true,
            unknown: Some(Uncertainty {
                since: *since,
                checks: *checks,
                escalated: *escalated,
            }),
        },
        event::STATUS_CHECK_STARTED,
        vec![Effect::QueryStatus {
            idempotency_key: key.to_owned(),
        }],
    ))
}

pub(super) fn invalidate(reason: InvalidationReason) -> Transition {
    Transition::new(
        ProposalState::Invalidated { reason },
        event::INVALIDATED,
        Vec::new(),
    )
}

/// Marking an already-sent execution again (before a safe resend) is
/// harmless, so it is accepted rather than refused.
pub(super) fn mark_sent(state: &ProposalState) -> Transition {
    let mut next = state.clone();
    if let ProposalState::Executing { sent, .. } = &mut next {
        *sent = true;
    }
    Transition::new(next, event::SENT, Vec::new())
}

pub(super) fn record_succeeded(proposal: &RefundProposal, receipt: Receipt) -> Transition {
    if receipt.amount != proposal.amount {
        let reason = format!(
            "The payment provider reports a refund of {} but {} was approved; a person must check the payment.",
            receipt.amount, proposal.amount
        );
        return needs_attention(reason, Some(receipt));
    }
    let effects = vec![
        Effect::BookRefundOnOrder {
            order_id: proposal.order_id.clone(),
            amount: receipt.amount,
            provider_refund_id: receipt.provider_refund_id.clone(),
        },
        Effect::Verify {
            idempotency_key: proposal.id.clone(),
        },
    ];
    Transition::new(
        ProposalState::Succeeded { receipt },
        event::SUCCEEDED,
        effects,
    )
}

pub(super) fn record_declined(
    reason: String,
    receipt: Option<Receipt>,
) -> Result<Transition, TransitionError> {
    let reason = non_blank(reason, "a decline's reason")?;
    Ok(Transition::new(
        ProposalState::Failed { reason, receipt },
        event::FAILED,
        Vec::new(),
    ))
}

pub(super) fn record_unknown(
    state: &ProposalState,
    reason: String,
    retry_at: Timestamp,
    max_checks: u32,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    let ProposalState::Executing {
        attempt, unknown, ..
    } = state
    else {
        return Err(not_allowed(state, "record_unknown"));
    };
    let reason = non_blank(reason, "the reason the outcome is unknown")?;
    if retry_at <= now {
        return Err(TransitionError::Invalid(
            "the next status check must be in the future".into(),
        ));
    }
    let prior = unknown.clone().unwrap_or(Uncertainty {
        since: now,
        checks: 0,
        escalated: false,
    });
    let checks = prior.checks.saturating_add(1);
    // Tell a person once, when the limit is first reached; keep checking.
    let escalate_now = !prior.escalated && checks >= max_checks;
    let mut effects = Vec::new();
    if escalate_now {
        effects.push(Effect::NotifyPerson {
            reason: format!(
                "The refund's outcome is still unknown after {checks} status checks (last: {reason}). It is not treated as failed and checks continue; please look it up at the payment provider."
            ),
        });
    }
    Ok(Transition::new(
        ProposalState::OutcomeUnknown {
            attempt: *attempt,
            since: prior.since,
            reason,
            checks,
            next_check_at: retry_at,
            escalated: prior.escalated || escalate_now,
        },
        event::OUTCOME_UNKNOWN,
        effects,
    ))
}

pub(super) fn status_not_found(
    key: &str,
    state: &ProposalState,
    within_key_retention: bool,
) -> Transition {
    let sent = matches!(state, ProposalState::Executing { sent: true, .. });
    if sent && !within_key_retention {
        let reason = format!(
            "The payment provider has no refund under key {key}, but a request may have been sent longer ago than the provider remembers keys; resending could refund twice, so a person must check the payment."
        );
        return needs_attention(reason, None);
    }
    // Same key: the provider deduplicates it, or nothing was ever sent.
    let mut effects = Vec::new();
    if !sent {
        effects.push(Effect::Revalidate);
    }
    effects.push(Effect::SendRefund {
        idempotency_key: key.to_owned(),
    });
    Transition::new(state.clone(), event::RESENDING, effects)
}

pub(super) fn escalate(
    state: &ProposalState,
    reason: String,
) -> Result<Transition, TransitionError> {
    let reason = non_blank(reason, "the reason a person is needed")?;
    Ok(needs_attention(reason, state.receipt().cloned()))
}

pub(super) fn needs_attention(reason: String, receipt: Option<Receipt>) -> Transition {
    Transition::new(
        ProposalState::NeedsAttention {
            reason: reason.clone(),
            receipt,
        },
        event::NEEDS_ATTENTION,
        vec![Effect::NotifyPerson { reason }],
    )
}

#[cfg(test)]
#[path = "execute_tests.rs"]
mod tests;
