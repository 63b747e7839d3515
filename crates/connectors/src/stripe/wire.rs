//! Stripe's refund object and the form we send, per Stripe's API reference
//! (`POST /v1/refunds`, `GET /v1/refunds`).

use std::collections::BTreeMap;

use chrono::DateTime;
use serde::Deserialize;

use crate::{ProviderError, ProviderRefund, ProviderRefundStatus, RefundRequest};

/// Metadata keys we write on every refund, so a refund can be found again by
/// its idempotency key (Stripe cannot list by key).
pub(crate) const META_PROPOSAL_ID: &str = "proposal_id";
pub(crate) const META_IDEMPOTENCY_KEY: &str = "idempotency_key";

/// Which Stripe object a payment reference names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PaymentTarget {
    /// `payment_intent` or `charge`: the form field and the list filter.
    pub field: &'static str,
    pub id: String,
}

impl PaymentTarget {
    /// `pi_…` is a PaymentIntent; `ch_…` and `py_…` are charges. After the
    /// prefix Stripe ids hold ASCII letters, digits and underscores only.
    pub(crate) fn parse(reference: &str) -> Result<Self, ProviderError> {
        let field = if reference.starts_with("pi_") {
            "payment_intent"
        } else if reference.starts_with("ch_") || reference.starts_with("py_") {
            "charge"
        } else {
            return Err(ProviderError::InvalidRequest {
                message: format!(
                    "payment reference {reference:?} is neither a Stripe PaymentIntent (pi_…) \
                     nor a charge (ch_…, py_…)"
                ),
            });
        };
        let rest = reference.get(3..).unwrap_or_default();
        if rest.is_empty() || !rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ProviderError::InvalidRequest {
                message: format!(
                    "payment reference {reference:?} is not a Stripe id: after pi_, ch_ or py_ \
                     come one or more ASCII letters, digits or underscores"
                ),
            });
        }
        Ok(Self {
            field,
            id: reference.to_owned(),
        })
    }
}

/// The form body of `POST /v1/refunds`. Currency is not sent: a refund takes
/// the currency of its charge; the answer's currency is checked by the caller.
pub(crate) fn refund_form(
    request: &RefundRequest,
    target: &PaymentTarget,
) -> Vec<(String, String)> {
    vec![
        (target.field.to_owned(), target.id.clone()),
        ("amount".to_owned(), request.amount_minor.to_string()),
        (
            format!("metadata[{META_PROPOSAL_ID}]"),
            request.proposal_id.clone(),
        ),
        (
            format!("metadata[{META_IDEMPOTENCY_KEY}]"),
            request.idempotency_key.clone(),
        ),
    ]
}

/// The fields of Stripe's refund object that we read.
#[derive(Debug, Deserialize)]
struct StripeRefund {
    id: String,
    amount: i64,
    currency: String,
    status: Option<String>,
    failure_reason: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    created: i64,
    #[serde(default)]
    payment_intent: Option<serde_json::Value>,
    #[serde(default)]
    charge: Option<serde_json::Value>,
}

/// A page of `GET /v1/refunds`.
#[derive(Debug, Deserialize)]
pub(crate) struct StripeList {
    pub data: Vec<serde_json::Value>,
    #[serde(default)]
    pub has_more: bool,
}

/// An expandable field: either the id or the expanded object.
fn expandable_id(value: Option<&serde_json::Value>) -> Option<String> {
    match value? {
        serde_json::Value::String(id) => Some(id.clone()),
        serde_json::Value::Object(object) => object.get("id")?.as_str().map(str::to_owned),
        _ => None,
    }
}

/// Read a refund object. `fallback_key` stands in when the refund carries
/// none of our metadata (made outside Countersign).
pub(crate) fn parse_refund(
    raw: serde_json::Value,
    fallback_key: &str,
) -> Result<ProviderRefund, String> {
    let refund: StripeRefund =
        serde_json::from_value(raw.clone()).map_err(|err| err.to_string())?;
    let status = match refund.status.as_deref() {
        Some("succeeded") => ProviderRefundStatus::Succeeded,
        Some("failed" | "canceled") => ProviderRefundStatus::Failed {
            reason: refund
                .failure_reason
                .clone()
                .or_else(|| refund.status.clone())
                .unwrap_or_default(),
        },
        // pending, requires_action, and any status Stripe adds later: the
        // refund exists but is not final, so query again.
        _ => ProviderRefundStatus::Pending,
    };
    let created_at = DateTime::from_timestamp(refund.created, 0)
        .ok_or_else(|| format!("created {} is out of range", refund.created))?;
    let payment_reference = expandable_id(refund.payment_intent.as_ref())
        .or_else(|| expandable_id(refund.charge.as_ref()))
        .unwrap_or_default();
    let idempotency_key = refund_key(&refund.metadata)
        .unwrap_or(fallback_key)
        .to_owned();
    Ok(ProviderRefund {
        provider_refund_id: refund.id,
        idempotency_key,
        payment_reference,
        amount_minor: refund.amount,
        currency: refund.currency.to_ascii_uppercase(),
        status,
        created_at,
        raw,
    })
}

/// The idempotency key a refund was made under, from our metadata.
fn refund_key(metadata: &BTreeMap<String, String>) -> Option<&str> {
    metadata
        .get(META_IDEMPOTENCY_KEY)
        .or_else(|| metadata.get(META_PROPOSAL_ID))
        .map(String::as_str)
}

/// Whether a listed refund (raw JSON) was made under `key`.
pub(crate) fn made_under_key(raw: &serde_json::Value, key: &str) -> bool {
    let metadata = raw.get("metadata").and_then(serde_json::Value::as_object);
    let field = |name: &str| {
        metadata
            .and_then(|m| m.get(name))
            .and_then(serde_json::Value::as_str)
    };
    match field(META_IDEMPOTENCY_KEY) {
        Some(stored) => stored == key,
        None => field(META_PROPOSAL_ID) == Some(key),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn references_choose_payment_intent_or_charge() {
        assert_eq!(
            PaymentTarget::parse("pi_123").map(|t| t.field),
            Ok("payment_intent")
        );
        assert_eq!(
            PaymentTarget::parse("ch_123").map(|t| t.field),
            Ok("charge")
        );
        for wrong in ["pay_123", "pi_", "ch_12 3", "py_1/../x", "PI_123"] {
            assert!(
                matches!(
                    PaymentTarget::parse(wrong),
                    Err(ProviderError::InvalidRequest { .. })
                ),
                "{wrong}"
            );
        }
    }

    #[test]
    fn a_failed_refund_keeps_its_failure_reason_and_upper_cases_currency() {
        let raw = json!({
            "id": "re_1", "object": "refund", "amount": 7900, "currency": "eur",
            "status": "failed", "failure_reason": "expired_or_canceled_card",
            "metadata": {"proposal_id": "p-17", "idempotency_key": "p-17"},
            "created": 1_700_000_000, "payment_intent": "pi_1", "charge": "ch_1"
        });
        let refund = parse_refund(raw, "other").unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(refund.currency, "EUR");
        assert_eq!(refund.payment_reference, "pi_1");
        assert_eq!(refund.idempotency_key, "p-17");
        assert_eq!(
            refund.status,
            ProviderRefundStatus::Failed {
                reason: "expired_or_canceled_card".to_owned()
            }
        );
    }

    #[test]
    fn requires_action_reads_as_pending() {
        let raw = json!({
            "id": "re_1", "amount": 1, "currency": "usd", "status": "requires_action",
            "created": 1_700_000_000, "charge": {"id": "ch_9"}
        });
        let refund = parse_refund(raw, "k").unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(refund.status, ProviderRefundStatus::Pending);
        assert_eq!(refund.payment_reference, "ch_9");
        assert_eq!(refund.idempotency_key, "k");
    }

    #[test]
    fn refunds_match_by_idempotency_key_metadata_then_proposal_id() {
        let by_key = json!({"metadata": {"idempotency_key": "k", "proposal_id": "p"}});
        let by_proposal = json!({"metadata": {"proposal_id": "k"}});
        let other = json!({"metadata": {}});
        assert!(made_under_key(&by_key, "k"));
        assert!(!made_under_key(&by_key, "p"));
        assert!(made_under_key(&by_proposal, "k"));
        assert!(!made_under_key(&other, "k"));
    }
}
