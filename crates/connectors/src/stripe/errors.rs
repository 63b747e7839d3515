//! Stripe's error responses, sorted into outcomes per Stripe's documentation
//! of HTTP status codes and error types.

use std::time::Duration;

use serde::Deserialize;

use crate::ProviderError;

/// `invalid_request_error` codes that are a definite business refusal of the
/// refund rather than a bug in our request.
const DECLINE_CODES: &[&str] = &[
    "charge_already_refunded",
    "charge_disputed",
    "refund_disputed_payment",
    "amount_too_large",
    "balance_insufficient",
    "insufficient_funds",
    "charge_not_refundable",
    "payment_intent_unexpected_state",
];

#[derive(Debug, Default, Deserialize)]
struct Envelope {
    #[serde(default)]
    error: StripeError,
}

#[derive(Debug, Default, Deserialize)]
struct StripeError {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    decline_code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// A non-200 answer from Stripe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A definite refusal to refund: no refund exists.
    Declined {
        code: String,
        message: String,
    },
    Error(ProviderError),
}

/// Sort a non-200 response. `retry_after` comes from the response headers.
pub(crate) fn classify(status: u16, retry_after: Option<Duration>, body: &str) -> Failure {
    let Envelope { error } = serde_json::from_str(body).unwrap_or_default();
    let code = error.code.clone().unwrap_or_default();
    let message = error.message.clone().unwrap_or_else(|| {
        let snippet: String = body.chars().take(200).collect();
        format!("HTTP {status}: {snippet}")
    });
    if code == "lock_timeout" || status == 409 {
        // Another request holds the object or the same key; ours may still
        // run, so this is "ask again", not a failure.
        return Failure::Error(ProviderError::InFlight);
    }
    if status == 429 {
        return Failure::Error(ProviderError::RateLimited { retry_after });
    }
    if status >= 500 || error.kind == "api_error" {
        return Failure::Error(ProviderError::Unknown {
            reason: format!("Stripe HTTP {status}: {message}"),
        });
    }
    if error.kind == "idempotency_error" {
        return Failure::Error(ProviderError::KeyReusedWithDifferentParameters { message });
    }
    let business_refusal = status == 402
        || error.kind == "card_error"
        || (error.kind == "invalid_request_error" && DECLINE_CODES.contains(&code.as_str()));
    if business_refusal {
        let code = error
            .decline_code
            .or(error.code)
            .unwrap_or_else(|| "card_declined".to_owned());
        return Failure::Declined { code, message };
    }
    if (400..500).contains(&status) {
        return Failure::Error(ProviderError::Rejected { status, message });
    }
    Failure::Error(ProviderError::Unknown {
        reason: format!("unexpected Stripe HTTP {status}: {message}"),
    })
}

/// For status queries, where a "decline" can only mean our query was wrong.
pub(crate) fn classify_query(
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
) -> ProviderError {
    match classify(status, retry_after, body) {
        Failure::Error(err) => err,
        Failure::Declined { message, .. } => ProviderError::Rejected { status, message },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(kind: &str, code: &str) -> String {
        format!(r#"{{"error":{{"type":"{kind}","code":"{code}","message":"m"}}}}"#)
    }

    #[test]
    fn already_refunded_is_a_decline() {
        assert_eq!(
            classify(
                400,
                None,
                &body("invalid_request_error", "charge_already_refunded")
            ),
            Failure::Declined {
                code: "charge_already_refunded".to_owned(),
                message: "m".to_owned()
            }
        );
    }

    #[test]
    fn a_missing_payment_is_our_mistake_not_a_decline() {
        assert_eq!(
            classify(
                404,
                None,
                &body("invalid_request_error", "resource_missing")
            ),
            Failure::Error(ProviderError::Rejected {
                status: 404,
                message: "m".to_owned()
            })
        );
    }

    #[test]
    fn lock_timeout_and_conflict_mean_in_flight() {
        assert_eq!(
            classify(429, None, &body("invalid_request_error", "lock_timeout")),
            Failure::Error(ProviderError::InFlight)
        );
        assert_eq!(
            classify(409, None, &body("idempotency_error", "")),
            Failure::Error(ProviderError::InFlight)
        );
    }

    #[test]
    fn an_unreadable_5xx_is_unknown() {
        assert!(matches!(
            classify(502, None, "<html>bad gateway</html>"),
            Failure::Error(ProviderError::Unknown { .. })
        ));
    }

    #[test]
    fn wrong_credentials_are_rejected() {
        assert!(matches!(
            classify(401, None, &body("invalid_request_error", "")),
            Failure::Error(ProviderError::Rejected { status: 401, .. })
        ));
    }
}
