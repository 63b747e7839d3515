//! Exactly-once execution: claim, revalidate, send under the proposal id as
//! idempotency key, record the provider's answer (or that it is unknown),
//! verify, and reconcile whatever was left uncertain.

pub mod answer;
pub mod reconcile;
pub mod record;
pub mod send;
pub mod step;

use crate::core::Engine;
use domain::proposal::{
    Command, ConditionsSnapshot, InvalidationReason, TransitionError, revalidate,
};
use domain::{Money, OrderSnapshot, Timestamp};
use serde_json::json;
use step::Step;

impl Engine {
    /// Claims an approved proposal for this process and revalidates it
    /// against the current order (read under its lock) and `reserved`, the
    /// minor units other in-flight proposals hold on the order; then either
    /// marks it sent (the caller sends after commit) or invalidates it.
    /// Returns whether to send.
    pub(crate) fn claim_and_revalidate(
        &self,
        step: &mut Step,
        order: &OrderSnapshot,
        approved_under: &ConditionsSnapshot,
        reserved: i64,
        now: Timestamp,
    ) -> Result<bool, TransitionError> {
        let actor = self.system_actor();
        step.apply(
            Command::Claim {
                executor: self.settings.executor_name.clone(),
                lease_until: now + self.settings.lease,
            },
            &actor,
            json!({ "lease_seconds": self.settings.lease.num_seconds() }),
            now,
        )?;
        match revalidation(step, order, approved_under, reserved) {
            Err(reason) => {
                step.apply(
                    Command::Invalidate {
                        reason: reason.clone(),
                    },
                    &actor,
                    json!({ "reason": reason.to_string() }),
                    now,
                )?;
                Ok(false)
            }
            Ok(()) => {
                step.apply(
                    Command::MarkSent,
                    &actor,
                    json!({ "idempotency_key": step.stored.proposal.id }),
                    now,
                )?;
                Ok(true)
            }
        }
    }
}

/// The domain's revalidation plus what only storage knows: `reserved`, the
/// refunds of other proposals on the same order that may be on their way.
pub(crate) fn revalidation(
    step: &Step,
    order: &OrderSnapshot,
    approved_under: &ConditionsSnapshot,
    reserved: i64,
) -> Result<(), InvalidationReason> {
    let proposal = &step.stored.proposal;
    revalidate(proposal, Some(order), approved_under)?;
    if reserved > 0 {
        let refundable = order.refundable().map(|m| m.amount_minor).unwrap_or(0) - reserved;
        if refundable < proposal.amount.amount_minor {
            return Err(InvalidationReason::InsufficientRefundable {
                refundable: Money::new(refundable.max(0), proposal.amount.currency),
            });
        }
    }
    Ok(())
}
