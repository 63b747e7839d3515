//! How the sandbox client reads the sandbox's answers: refunds and charges
//! into the provider's values, and errors into [`ProviderError`]s, with the
//! same rules as the Stripe connector.

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use super::server::IDEMPOTENT_REPLAYED;
use super::wire::{ErrorBody, SandboxCharge, SandboxRefund, SandboxRefundStatus};
use crate::http::{retry_after, unreadable_success};
use crate::{ProviderCharge, ProviderError, ProviderRefund, ProviderRefundStatus, RefundOutcome};

/// Refusals of a refund by the charge (HTTP 400): definite, nothing moved.
const DECLINE_CODES: &[&str] = &["charge_already_refunded", "amount_too_large"];

pub(crate) fn parse_refund(
    status: StatusCode,
    text: &str,
) -> Result<ProviderRefund, ProviderError> {
    let raw: serde_json::Value = serde_json::from_str(text)
        .map_err(|err| unreadable_success(status.as_u16(), &err.to_string()))?;
    to_provider_refund_raw(raw).map_err(|err| unreadable_success(status.as_u16(), &err))
}

pub(crate) fn to_provider_refund_raw(raw: serde_json::Value) -> Result<ProviderRefund, String> {
    let refund: SandboxRefund =
        serde_json::from_value(raw.clone()).map_err(|err| err.to_string())?;
    Ok(to_provider_refund(refund, raw))
}

fn to_provider_refund(refund: SandboxRefund, raw: serde_json::Value) -> ProviderRefund {
    let status = match refund.status {
        SandboxRefundStatus::Succeeded => ProviderRefundStatus::Succeeded,
        SandboxRefundStatus::Pending => ProviderRefundStatus::Pending,
        SandboxRefundStatus::Failed => ProviderRefundStatus::Failed {
            reason: refund
                .failure_reason
                .unwrap_or_else(|| "unknown".to_owned()),
        },
    };
    ProviderRefund {
        provider_refund_id: refund.id,
        idempotency_key: refund.idempotency_key,
        payment_reference: refund.payment_reference,
        amount_minor: refund.amount_minor,
        currency: refund.currency,
        status,
        created_at: refund.created_at,
        raw,
    }
}

/// `GET /v1/charges/{id}` → the charge, each refund with its own JSON.
pub(crate) fn parse_charge(text: &str) -> Result<ProviderCharge, ProviderError> {
    let raw: serde_json::Value =
        serde_json::from_str(text).map_err(|err| unreadable_success(200, &err.to_string()))?;
    let charge: SandboxCharge = serde_json::from_value(raw.clone())
        .map_err(|err| unreadable_success(200, &err.to_string()))?;
    let raw_refunds = raw
        .get("refunds")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    let refunds = charge
        .refunds
        .into_iter()
        .zip(raw_refunds)
        .map(|(refund, raw)| to_provider_refund(refund, raw))
        .collect();
    Ok(ProviderCharge {
        payment_reference: charge.id,
        amount_minor: charge.amount_minor,
        currency: charge.currency,
        amount_refunded_minor: charge.amount_refunded_minor,
        refunds,
        raw,
    })
}

fn parse_error(text: &str) -> Option<ErrorBody> {
    serde_json::from_str(text).ok()
}

pub(crate) fn error_code(text: &str) -> Option<String> {
    parse_error(text).map(|body| body.error.code)
}

pub(crate) fn error_message(status: StatusCode, text: &str) -> String {
    parse_error(text).map_or_else(
        || {
            format!(
                "HTTP {status}: {}",
                text.chars().take(200).collect::<String>()
            )
        },
        |body| body.error.message,
    )
}

/// A 402, or a 400 by which the charge refuses the refund.
pub(crate) fn decline(status: StatusCode, text: &str) -> Option<RefundOutcome> {
    let body = parse_error(text);
    let code = body.as_ref().map(|body| body.error.code.as_str());
    let refused_by_charge =
        status == StatusCode::BAD_REQUEST && code.is_some_and(|code| DECLINE_CODES.contains(&code));
    if status != StatusCode::PAYMENT_REQUIRED && !refused_by_charge {
        return None;
    }
    Some(match body {
        Some(body) => RefundOutcome::Declined {
            code: body.error.code,
            message: body.error.message,
        },
        None => RefundOutcome::Declined {
            code: "declined".to_owned(),
            message: text.chars().take(200).collect(),
        },
    })
}

/// An error answer to a request that could execute something (a refund, a
/// new fault plan).
pub(crate) fn send_error(status: StatusCode, headers: &HeaderMap, text: &str) -> ProviderError {
    let message = || error_message(status, text);
    let replayed = headers
        .get(IDEMPOTENT_REPLAYED)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("true"));
    match status.as_u16() {
        401 | 403 => ProviderError::Configuration {
            status: status.as_u16(),
            message: message(),
        },
        404 if error_code(text).as_deref() == Some("resource_missing") => {
            ProviderError::Configuration {
                status: 404,
                message: message(),
            }
        }
        409 => ProviderError::InFlight,
        422 => ProviderError::KeyReusedWithDifferentParameters { message: message() },
        429 => ProviderError::RateLimited {
            retry_after: retry_after(headers),
        },
        400..=499 => ProviderError::Rejected {
            status: status.as_u16(),
            message: message(),
        },
        // A stored 5xx answered again: the original may have executed, and
        // resending under this key will only replay it.
        500..=599 if replayed => ProviderError::ReplayedError {
            status: status.as_u16(),
            message: message(),
        },
        // 5xx, and anything else we did not ask for (1xx, 2xx other than
        // 200, 3xx): the request may have executed.
        _ => ProviderError::Unknown {
            reason: format!("HTTP {status}: {}", message()),
        },
    }
}

/// An error answer to a status query. Whatever went wrong, the outcome asked
/// about stays unknown: a 401 or a 404 from a listing says nothing about
/// whether a refund exists, so it must never read as "no".
pub(crate) fn query_error(status: StatusCode, headers: &HeaderMap, text: &str) -> ProviderError {
    if status == StatusCode::TOO_MANY_REQUESTS {
        return ProviderError::RateLimited {
            retry_after: retry_after(headers),
        };
    }
    ProviderError::Unknown {
        reason: format!(
            "the sandbox answered the status query with HTTP {status}: {}",
            error_message(status, text)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(code: &str) -> String {
        format!(r#"{{"error":{{"type":"invalid_request_error","code":"{code}","message":"m"}}}}"#)
    }

    #[test]
    fn a_refusal_by_the_charge_is_a_decline_but_another_400_is_not() {
        assert!(matches!(
            decline(StatusCode::BAD_REQUEST, &body("amount_too_large")),
            Some(RefundOutcome::Declined { code, .. }) if code == "amount_too_large"
        ));
        assert_eq!(
            decline(StatusCode::BAD_REQUEST, &body("currency_mismatch")),
            None
        );
    }

    #[test]
    fn a_replayed_500_is_a_replayed_error_and_a_fresh_one_unknown() {
        let mut replayed = HeaderMap::new();
        replayed.insert(IDEMPOTENT_REPLAYED, "true".parse().unwrap());
        assert!(matches!(
            send_error(StatusCode::INTERNAL_SERVER_ERROR, &replayed, &body("x")),
            ProviderError::ReplayedError { status: 500, .. }
        ));
        assert!(matches!(
            send_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &HeaderMap::new(),
                &body("x")
            ),
            ProviderError::Unknown { .. }
        ));
    }

    #[test]
    fn a_wrong_key_on_a_send_is_configuration_and_on_a_query_unknown() {
        let none = HeaderMap::new();
        assert!(matches!(
            send_error(StatusCode::UNAUTHORIZED, &none, &body("api_key_invalid")),
            ProviderError::Configuration { status: 401, .. }
        ));
        assert!(matches!(
            query_error(StatusCode::UNAUTHORIZED, &none, &body("api_key_invalid")),
            ProviderError::Unknown { .. }
        ));
    }
}
