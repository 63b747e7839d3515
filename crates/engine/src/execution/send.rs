//! Calling the provider: send under the proposal id, or query the status of
//! what may have been sent. Never a new key, never a blind retry.

use super::Execution;
use super::answer::{AfterAnswer, Answer};
use connectors::{
    ProviderCharge, ProviderRefundStatus, RefundLookup, RefundOutcome, RefundRequest,
};
use domain::Money;
use domain::proposal::RefundProposal;
use serde_json::{Value, json};

/// What sending a proposal's refund, or asking about it, needs: fixed when
/// the proposal was made (proposals never change), so it can travel with
/// the work item that sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundTarget {
    /// Also the provider's idempotency key.
    pub id: String,
    pub payment_reference: String,
    pub amount: Money,
}

impl From<&RefundProposal> for RefundTarget {
    fn from(proposal: &RefundProposal) -> Self {
        RefundTarget {
            id: proposal.id.clone(),
            payment_reference: proposal.payment_reference.clone(),
            amount: proposal.amount,
        }
    }
}

impl RefundTarget {
    /// As a work item's payload.
    #[must_use]
    pub fn to_payload(&self) -> Value {
        json!({
            "proposal_id": self.id,
            "payment_reference": self.payment_reference,
            "amount_minor": self.amount.amount_minor,
            "currency": self.amount.currency.code(),
        })
    }

    /// From a work item's payload; None when it does not carry one whole.
    #[must_use]
    pub fn from_payload(payload: &Value) -> Option<Self> {
        let text = |key: &str| payload.get(key).and_then(Value::as_str);
        let currency = domain::Currency::parse(text("currency")?).ok()?;
        Some(RefundTarget {
            id: text("proposal_id")?.to_owned(),
            payment_reference: text("payment_reference")?.to_owned(),
            amount: Money::new(payload.get("amount_minor")?.as_i64()?, currency),
        })
    }
}

impl Execution {
    /// Sends the refund (already marked sent and committed) and records the
    /// answer; resends under the same key while the provider says it has
    /// nothing and still remembers the key.
    #[tracing::instrument(skip_all, fields(proposal.id = %proposal.id))]
    pub async fn send_refund(&self, proposal: &RefundTarget) {
        let request = RefundRequest {
            idempotency_key: proposal.id.clone(),
            payment_reference: proposal.payment_reference.clone(),
            amount_minor: proposal.amount.amount_minor,
            currency: proposal.amount.currency.code().to_owned(),
            proposal_id: proposal.id.clone(),
        };
        // Bounded: each loop needs a fresh "not found" from the provider.
        for _ in 0..3 {
            let answer = match self.provider.refund(&request).await {
                Ok(RefundOutcome::Succeeded(refund))
                | Ok(RefundOutcome::Pending(refund))
                | Ok(RefundOutcome::Failed(refund)) => Answer::Refund(refund),
                Ok(RefundOutcome::Declined { code, message }) => Answer::Declined {
                    reason: format!("the payment provider declined the refund: {message} ({code})"),
                },
                Err(error) => Answer::from_send_error(error),
            };
            if self.settle(proposal, answer).await != Some(AfterAnswer::Resend) {
                return;
            }
        }
    }

    /// Asks the provider what happened under the proposal's key and records
    /// it (after a takeover or for an unknown outcome).
    #[tracing::instrument(skip_all, fields(proposal.id = %proposal.id))]
    pub async fn query_status(&self, proposal: &RefundProposal) {
        let proposal = &RefundTarget::from(proposal);
        let lookup = lookup_of(proposal);
        let answer = match self.provider.lookup(&lookup).await {
            Ok(Some(refund)) => Answer::Refund(refund),
            // Rare: read the charge too, in case nothing was ever sent and
            // the first send must be revalidated at the provider.
            Ok(None) => Answer::NotFound {
                charge: self.check_charge(&proposal.payment_reference).await,
            },
            Err(error) => Answer::from_query_error(error),
        };
        if self.settle(proposal, answer).await == Some(AfterAnswer::Resend) {
            self.send_refund(proposal).await;
        }
    }

    /// Reads the charge of a succeeded refund (every refund on it and its
    /// refunded total) and records the verification. Failure leaves it for
    /// the reconciler.
    #[tracing::instrument(skip_all, fields(proposal.id = %proposal.id))]
    pub async fn verify(&self, proposal: &RefundProposal) {
        let proposal = &RefundTarget::from(proposal);
        if let Some(charge) = self.charge_for_verification(proposal).await {
            self.settle(proposal, Answer::Charge(charge)).await;
        }
    }

    /// The charge as the provider holds it now; None (and the verification
    /// postponed) when it does not answer.
    async fn charge_for_verification(&self, proposal: &RefundTarget) -> Option<ProviderCharge> {
        match self.provider.charge(&proposal.payment_reference).await {
            Ok(charge) => Some(charge),
            Err(error) => {
                tracing::info!(%error, proposal.id = %proposal.id, "verification postponed: provider did not answer");
                None
            }
        }
    }

    /// Records an answer; a failure to record leaves the state as it was.
    /// A succeeded refund is verified before it is recorded: the provider
    /// is asked at once for every refund under the key, and the success
    /// and its verification are written together (one state write and one
    /// transaction fewer per refund than recording them apart). A crash in
    /// between loses nothing: the claim's lease runs out and the reconciler
    /// asks the provider by key.
    async fn settle(&self, proposal: &RefundTarget, answer: Answer) -> Option<AfterAnswer> {
        let listed = match &answer {
            Answer::Refund(refund) if refund.status == ProviderRefundStatus::Succeeded => {
                self.charge_for_verification(proposal).await
            }
            _ => None,
        };
        match self.record_answer(&proposal.id, answer, listed).await {
            Ok(after) => Some(after),
            Err(error) => {
                // The state stays as it was; the lease runs out (or the
                // verification falls due) and the reconciler asks the
                // provider again. Nothing is lost.
                tracing::error!(%error, proposal.id = %proposal.id, "could not record the provider's answer");
                None
            }
        }
    }
}

fn lookup_of(proposal: &RefundTarget) -> RefundLookup {
    RefundLookup {
        idempotency_key: proposal.id.clone(),
        payment_reference: proposal.payment_reference.clone(),
    }
}
