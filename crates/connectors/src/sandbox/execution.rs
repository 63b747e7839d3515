//! Executing an admitted refund: check the charge, record the refund (or
//! the refusal) and count it on the charge, all under the world's lock.

use chrono::{DateTime, Utc};

use super::charges::Charge;
use super::idempotency::{RefundParams, StoredOutcome};
use super::state::SandboxState;
use super::wire::{ErrorBody, SandboxRefund, SandboxRefundStatus};

/// Payment references starting with this are declined with HTTP 402.
pub const DECLINED_PREFIX: &str = "pay_declined";
/// Payment references starting with this get a refund in status `pending`.
pub const PENDING_PREFIX: &str = "pay_pending";
/// Payment references starting with this get a refund in status `failed`.
pub const FAILED_PREFIX: &str = "pay_failed";

/// What executing an admitted request gave.
#[derive(Debug)]
pub(crate) enum Executed {
    /// Executed; the answer is stored under the key for replay.
    Stored(StoredOutcome),
    /// The payment is unknown (HTTP 404 `resource_missing`). Not stored:
    /// the charge may become known later (a charge source that learns of an
    /// imported order), and a stored 404 would make the key useless for the
    /// whole retention window.
    NoSuchCharge,
}

/// The right to execute one admitted key. Dropping it unexecuted (a panic,
/// a cancelled task) releases the key so a retry can execute.
pub(crate) struct ExecutionTicket {
    state: SandboxState,
    key: String,
    params: RefundParams,
    completed: bool,
}

impl ExecutionTicket {
    pub(crate) fn new(state: SandboxState, key: &str, params: RefundParams) -> Self {
        Self {
            state,
            key: key.to_owned(),
            params,
            completed: false,
        }
    }

    pub(crate) fn payment_reference(&self) -> &str {
        &self.params.payment_reference
    }

    /// Execute under one lock: the charge check, the ledger entry, the
    /// charge's refunded amount and the stored answer move together, so two
    /// concurrent refunds on one charge can never together exceed it.
    pub(crate) fn execute(mut self) -> Executed {
        let now = self.state.now();
        let mut guard = self.state.world();
        let world = &mut *guard;
        let Some(charge) = world.charges.get_mut(&self.params.payment_reference) else {
            // Dropping the ticket releases the key (see `Drop`).
            return Executed::NoSuchCharge;
        };
        let outcome = outcome_for(&self.key, &self.params, charge, now);
        if let StoredOutcome::Refunded(refund) = &outcome {
            charge.count(refund.amount_minor, refund.status);
            world.ledger.record(refund.clone());
        }
        world.keys.complete(&self.key, outcome.clone());
        self.completed = true;
        Executed::Stored(outcome)
    }
}

impl Drop for ExecutionTicket {
    fn drop(&mut self) {
        if !self.completed {
            self.state.world().keys.abandon(&self.key);
        }
    }
}

fn outcome_for(
    key: &str,
    params: &RefundParams,
    charge: &Charge,
    now: DateTime<Utc>,
) -> StoredOutcome {
    let reference = &params.payment_reference;
    // A refund in another currency is a mistake in the request: refused as
    // such below, before the reference's scripted decline.
    if params.currency == charge.currency && reference.starts_with(DECLINED_PREFIX) {
        return StoredOutcome::Declined(ErrorBody::new(
            "card_error",
            "charge_declined",
            format!(
                "Payment {reference} cannot be refunded: the sandbox declines payment references \
                 starting with {DECLINED_PREFIX}."
            ),
        ));
    }
    if let Some(refusal) = charge.refusal(params) {
        return StoredOutcome::Refused(refusal);
    }
    let (status, failure_reason) = if reference.starts_with(PENDING_PREFIX) {
        (SandboxRefundStatus::Pending, None)
    } else if reference.starts_with(FAILED_PREFIX) {
        (
            SandboxRefundStatus::Failed,
            Some("expired_or_canceled_card".to_owned()),
        )
    } else {
        (SandboxRefundStatus::Succeeded, None)
    };
    StoredOutcome::Refunded(SandboxRefund {
        id: format!("re_sbx_{}", uuid::Uuid::now_v7().simple()),
        idempotency_key: key.to_owned(),
        payment_reference: reference.clone(),
        amount_minor: params.amount_minor,
        currency: params.currency.clone(),
        status,
        failure_reason,
        metadata: params.metadata.clone(),
        created_at: now,
    })
}
