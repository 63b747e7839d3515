//! Exactly-once execution: claim, revalidate, send under the proposal id as
//! idempotency key, record the provider's answer (or that it is unknown),
//! verify, and reconcile whatever was left uncertain.

pub mod answer;
pub mod reconcile;
pub mod send;
pub mod step;

use crate::core::Engine;
use domain::proposal::{Command, ConditionsSnapshot, InvalidationReason, revalidate};
use domain::{Money, OrderSnapshot, Timestamp};
use serde_json::json;
use step::Step;
use storage::{ConnectionTrait, StorageError};

impl Engine {
    /// Claims an approved proposal for this process and revalidates it
    /// against the current order; then either marks it sent (the caller
    /// sends after commit) or invalidates it. Returns whether to send.
    pub(crate) async fn claim_and_revalidate(
        &self,
        db: &impl ConnectionTrait,
        step: &mut Step,
        order: &OrderSnapshot,
        approved_under: &ConditionsSnapshot,
        now: Timestamp,
    ) -> Result<bool, crate::approvals::DecisionError> {
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
        match self.revalidation(db, step, order, approved_under).await? {
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

    /// The domain's revalidation plus what only storage knows: other
    /// proposals on the same order whose refunds may be on their way.
    pub(crate) async fn revalidation(
        &self,
        db: &impl ConnectionTrait,
        step: &Step,
        order: &OrderSnapshot,
        approved_under: &ConditionsSnapshot,
    ) -> Result<Result<(), InvalidationReason>, StorageError> {
        let proposal = &step.stored.proposal;
        if let Err(reason) = revalidate(proposal, Some(order), approved_under) {
            return Ok(Err(reason));
        }
        let reserved = storage::proposals::reserved_on_order(db, &order.id, &proposal.id).await?;
        if reserved > 0 {
            let refundable = order.refundable().map(|m| m.amount_minor).unwrap_or(0) - reserved;
            if refundable < proposal.amount.amount_minor {
                return Ok(Err(InvalidationReason::InsufficientRefundable {
                    refundable: Money::new(refundable.max(0), proposal.amount.currency),
                }));
            }
        }
        Ok(Ok(()))
    }
}
