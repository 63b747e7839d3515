//! Reading what Stripe holds for a payment (`GET /v1/charges/{id}`, `GET
//! /v1/payment_intents/{id}` with `latest_charge` expanded): how much was
//! collected, in which currency, and how much is already refunded.

use serde_json::Value;

use crate::{ProviderRefund, ProviderRefundStatus};

/// The totals of one payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PaymentTotals {
    pub amount_minor: i64,
    /// Upper case.
    pub currency: String,
    pub amount_refunded_minor: i64,
}

fn int(object: &Value, field: &str) -> Option<i64> {
    object.get(field).and_then(Value::as_i64)
}

fn required_int(object: &Value, what: &str, field: &str) -> Result<i64, String> {
    int(object, field).ok_or_else(|| format!("the {what} has no integer `{field}`"))
}

fn currency(object: &Value, what: &str) -> Result<String, String> {
    object
        .get("currency")
        .and_then(Value::as_str)
        .filter(|currency| !currency.is_empty())
        .map(str::to_ascii_uppercase)
        .ok_or_else(|| format!("the {what} has no `currency`"))
}

/// A charge object. What can be refunded is what was captured
/// (`amount_captured`; `amount` when an older API version leaves it out).
pub(crate) fn charge_totals(charge: &Value) -> Result<PaymentTotals, String> {
    let amount_minor = match int(charge, "amount_captured") {
        Some(captured) => captured,
        None => required_int(charge, "charge", "amount")?,
    };
    Ok(PaymentTotals {
        amount_minor,
        currency: currency(charge, "charge")?,
        amount_refunded_minor: required_int(charge, "charge", "amount_refunded")?,
    })
}

/// A PaymentIntent retrieved with `expand[]=latest_charge`. What was
/// collected is `amount_received` (the latest charge's amount when absent);
/// what is refunded is the latest charge's `amount_refunded`. A
/// PaymentIntent without a charge collected nothing and refunded nothing.
pub(crate) fn payment_intent_totals(intent: &Value) -> Result<PaymentTotals, String> {
    let currency = currency(intent, "PaymentIntent")?;
    let latest = intent.get("latest_charge").unwrap_or(&Value::Null);
    let (charge_amount, amount_refunded_minor) = match latest {
        Value::Null => (None, 0),
        Value::Object(_) => (
            int(latest, "amount"),
            required_int(latest, "latest charge", "amount_refunded")?,
        ),
        _ => {
            return Err(
                "the PaymentIntent's `latest_charge` was not expanded into a charge object"
                    .to_owned(),
            );
        }
    };
    let amount_minor = int(intent, "amount_received")
        .or(charge_amount)
        .ok_or("the PaymentIntent has neither `amount_received` nor a latest charge amount")?;
    Ok(PaymentTotals {
        amount_minor,
        currency,
        amount_refunded_minor,
    })
}

/// What the listed refunds add up to, counted as Stripe counts
/// `amount_refunded`: every refund that has not failed or been canceled.
pub(crate) fn counted_refunds(refunds: &[ProviderRefund]) -> i64 {
    refunds
        .iter()
        .filter(|refund| !matches!(refund.status, ProviderRefundStatus::Failed { .. }))
        .map(|refund| refund.amount_minor)
        .fold(0_i64, i64::saturating_add)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_charge_counts_what_was_captured() {
        let totals = charge_totals(&json!({
            "id": "ch_1", "amount": 7900, "amount_captured": 5000,
            "amount_refunded": 1000, "currency": "eur"
        }))
        .unwrap();
        assert_eq!(
            totals,
            PaymentTotals {
                amount_minor: 5000,
                currency: "EUR".to_owned(),
                amount_refunded_minor: 1000
            }
        );
    }

    #[test]
    fn a_charge_without_amount_refunded_is_unreadable_not_zero() {
        assert!(charge_totals(&json!({"amount": 7900, "currency": "eur"})).is_err());
    }

    #[test]
    fn a_payment_intent_without_a_charge_collected_nothing() {
        let totals = payment_intent_totals(&json!({
            "id": "pi_1", "amount": 7900, "amount_received": 0, "currency": "eur",
            "latest_charge": null
        }))
        .unwrap();
        assert_eq!(totals.amount_minor, 0);
        assert_eq!(totals.amount_refunded_minor, 0);
    }

    #[test]
    fn an_unexpanded_latest_charge_is_unreadable() {
        assert!(
            payment_intent_totals(&json!({
                "amount_received": 7900, "currency": "eur", "latest_charge": "ch_1"
            }))
            .is_err()
        );
    }
}
