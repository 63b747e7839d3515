//! Exactly-once execution: claim, revalidate, send under the proposal id as
//! idempotency key, record the provider's answer (or that it is unknown),
//! verify, and reconcile whatever was left uncertain.

pub mod answer;
pub mod charge;
pub mod reconcile;
pub mod record;
pub mod resolve;
pub mod sandbox_charges;
pub mod send;
pub use send::RefundTarget;
// Moved to the crate root (shared with proposals, which must not import
// execution); re-exported so paths through execution keep working.
pub use crate::{payment_refs, step};

use crate::core::Engine;
use charge::ChargeCheck;
use connectors::ProviderCharge;
use domain::proposal::{
    Command, ConditionsSnapshot, InvalidationReason, TransitionError, revalidate,
    revalidate_at_provider,
};
use domain::{Money, OrderSnapshot, Timestamp};
use serde_json::json;
use step::Step;

impl Engine {
    /// Claims an approved proposal for this process and revalidates it
    /// against the current order (read under its lock), `reserved` (the
    /// minor units other in-flight proposals hold on the order) and the
    /// charge as the provider reported it just before; then either marks it
    /// sent (the caller sends after commit) or invalidates it, with the
    /// provider's figures in the journal either way. Returns whether to send.
    pub(crate) fn claim_and_revalidate(
        &self,
        step: &mut Step,
        order: &OrderSnapshot,
        approved_under: &ConditionsSnapshot,
        reserved: i64,
        charge: &ProviderCharge,
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
        let checked = ChargeCheck::Read(charge.clone());
        match revalidation(step, order, approved_under, reserved, &checked) {
            Err(reason) => {
                step.apply(
                    Command::Invalidate {
                        reason: reason.clone(),
                    },
                    &actor,
                    json!({ "reason": reason.to_string(), "provider": checked.evidence() }),
                    now,
                )?;
                Ok(false)
            }
            Ok(()) => {
                step.apply(
                    Command::MarkSent,
                    &actor,
                    json!({
                        "idempotency_key": step.stored.proposal.id,
                        "provider_remaining_minor": charge.remaining_minor(),
                    }),
                    now,
                )?;
                Ok(true)
            }
        }
    }
}

/// The domain's revalidation plus what only storage and the provider know:
/// `reserved`, the refunds of other proposals on the same order that may be
/// on their way, and the charge at the provider. A charge the provider did
/// not report is no ground to send: the check fails as "not checked".
pub(crate) fn revalidation(
    step: &Step,
    order: &OrderSnapshot,
    approved_under: &ConditionsSnapshot,
    reserved: i64,
    charge: &ChargeCheck,
) -> Result<(), InvalidationReason> {
    let proposal = &step.stored.proposal;
    revalidate(proposal, Some(order), approved_under)?;
    if reserved > 0 {
        let refundable = order.refundable().map(|m| m.amount_minor).unwrap_or(0) - reserved;
        if refundable < proposal.amount.amount_minor {
            return Err(InvalidationReason::OtherProposalsInFlight {
                reserved: Money::new(reserved, proposal.amount.currency),
                refundable: Money::new(refundable.max(0), proposal.amount.currency),
            });
        }
    }
    match charge.at_provider() {
        Some(at_provider) => revalidate_at_provider(proposal, &at_provider),
        None => Err(InvalidationReason::Other(
            "the payment provider could not be asked what is left on the charge".into(),
        )),
    }
}
