//! The payment provider's view of a charge, read right before a send (so a
//! refund made through another channel at the provider invalidates the
//! proposal) and at verification (so the provider's refunded total is
//! compared with the books).

use super::Execution;
use connectors::ProviderCharge;
use domain::proposal::ChargeAtProvider;
use serde_json::{Value, json};

/// What the provider said about a charge when asked.
#[derive(Debug, Clone)]
pub enum ChargeCheck {
    Read(ProviderCharge),
    /// The provider did not answer readably: nothing may be concluded, and
    /// nothing may be sent on the strength of it.
    Unavailable(String),
}

impl ChargeCheck {
    /// The domain's view of the charge, when it was read.
    pub fn at_provider(&self) -> Option<ChargeAtProvider> {
        match self {
            ChargeCheck::Read(charge) => Some(ChargeAtProvider {
                payment_reference: charge.payment_reference.clone(),
                currency: charge.currency.clone(),
                charged_minor: charge.amount_minor,
                refunded_minor: charge.amount_refunded_minor,
            }),
            ChargeCheck::Unavailable(_) => None,
        }
    }

    /// What the journal keeps of the check: the provider's figures and the
    /// refunds it listed, or why it could not be asked.
    pub fn evidence(&self) -> Value {
        match self {
            ChargeCheck::Read(charge) => charge_evidence(charge),
            ChargeCheck::Unavailable(reason) => json!({ "unavailable": reason }),
        }
    }
}

/// The provider's figures for a charge, as the journal keeps them.
pub fn charge_evidence(charge: &ProviderCharge) -> Value {
    let refunds: Vec<Value> = charge
        .refunds
        .iter()
        .map(|r| {
            json!({
                "id": r.provider_refund_id,
                "amount_minor": r.amount_minor,
                "status": status_word(&r.status),
                "idempotency_key": r.idempotency_key,
            })
        })
        .collect();
    json!({
        "payment_reference": charge.payment_reference,
        "currency": charge.currency,
        "charged_minor": charge.amount_minor,
        "refunded_minor": charge.amount_refunded_minor,
        "refunds": refunds,
    })
}

fn status_word(status: &connectors::ProviderRefundStatus) -> &'static str {
    match status {
        connectors::ProviderRefundStatus::Succeeded => "succeeded",
        connectors::ProviderRefundStatus::Pending => "pending",
        connectors::ProviderRefundStatus::Failed { .. } => "failed",
    }
}

impl Execution {
    /// Asks the provider for the charge behind `payment_reference`.
    pub async fn check_charge(&self, payment_reference: &str) -> ChargeCheck {
        match self.provider.charge(payment_reference).await {
            Ok(charge) => ChargeCheck::Read(charge),
            Err(error) => {
                tracing::info!(%error, payment_reference, "the provider did not say what is left on the charge");
                ChargeCheck::Unavailable(error.to_string())
            }
        }
    }
}
