//! Exactly-once execution: claim, revalidate, send under the proposal id as
//! idempotency key, record the provider's answer (or that it is unknown),
//! verify, and reconcile whatever was left uncertain.

pub mod answer;
pub mod charge;
mod commit;
pub mod reconcile;
pub mod record;
pub mod resolve;
pub mod sandbox_charges;
pub mod send;
pub use charge::ChargeCheck;
pub use send::RefundTarget;
// Moved to the crate root (shared with proposals, which must not import
// execution); re-exported so paths through execution keep working.
pub use crate::{payment_refs, step};

use crate::clock::Clock;
use crate::core::EngineSettings;
use crate::live::LiveUpdates;
use connectors::PaymentProvider;
use connectors::ProviderCharge;
use domain::proposal::{
    Command, ConditionsSnapshot, InvalidationReason, TransitionError, revalidate,
    revalidate_at_provider,
};
use domain::{Money, OrderSnapshot, Timestamp};
use runner::batch::Combiner;
use serde_json::json;
use std::sync::Arc;
use step::Step;
use storage::Database;

/// Executing approved refunds: what it holds is all it uses.
#[derive(Clone)]
pub struct Execution {
    pub(crate) db: Database,
    pub(crate) provider: Arc<dyn PaymentProvider>,
    pub(crate) settings: Arc<EngineSettings>,
    pub(crate) live: LiveUpdates,
    pub(crate) clock: Clock,
    /// The door to this process's work runner (lanes to wake).
    pub(crate) wake: runner::Wake,
    /// Provider answers arriving together, recorded in one transaction.
    pub(crate) answers: Arc<Combiner<record::AnswerRequest>>,
}

impl std::fmt::Debug for Execution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution")
            .field("executor", &self.settings.executor_name)
            .finish_non_exhaustive()
    }
}

impl Execution {
    pub(crate) fn new(
        db: Database,
        provider: Arc<dyn PaymentProvider>,
        settings: Arc<EngineSettings>,
        live: LiveUpdates,
        clock: Clock,
        wake: runner::Wake,
        answers: Arc<Combiner<record::AnswerRequest>>,
    ) -> Self {
        Execution {
            db,
            provider,
            settings,
            live,
            clock,
            wake,
            answers,
        }
    }

    /// The current time on the engine's clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// How the journal names this executor.
    pub(crate) fn system_actor(&self) -> String {
        format!("system:{}", self.settings.executor_name)
    }

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
