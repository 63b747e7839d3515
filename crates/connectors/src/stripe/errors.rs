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

/// What the headers of a non-200 response tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ResponseMeta {
    /// `Retry-After`, in seconds.
    pub retry_after: Option<Duration>,
    /// `Idempotent-Replayed: true`: Stripe answered from what it stored
    /// under the key instead of running the request.
    pub replayed: bool,
}

/// Sort a non-200 answer to `POST /v1/refunds`.
pub(crate) fn classify(status: u16, meta: ResponseMeta, body: &str) -> Failure {
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
        return Failure::Error(ProviderError::RateLimited {
            retry_after: meta.retry_after,
        });
    }
    if (status >= 500 || error.kind == "api_error") && meta.replayed {
        // Stripe stores a 500 under the key for 24 hours and answers every
        // resend with it: the original may have executed, and resending can
        // never tell. A person has to look.
        return Failure::Error(ProviderError::ReplayedError { status, message });
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
    // Our configuration, not the request: a wrong, rolled or restricted key
    // (401/403), or a payment Stripe does not know under this account (404
    // `resource_missing`). Nothing executed; a person must fix it.
    if status == 401 || status == 403 || (status == 404 && code == "resource_missing") {
        return Failure::Error(ProviderError::Configuration { status, message });
    }
    if (400..500).contains(&status) {
        return Failure::Error(ProviderError::Rejected { status, message });
    }
    Failure::Error(ProviderError::Unknown {
        reason: format!("unexpected Stripe HTTP {status}: {message}"),
    })
}

/// Sort a non-200 answer to a status query (a listing, a charge). Whatever
/// went wrong, the outcome asked about stays unknown: a 401 from a rolled key
/// or a 404 says nothing about whether a refund exists, and reading it as
/// "no" would turn a refund that happened into a failure. Only a 429 keeps
/// its own meaning (wait, then ask again).
pub(crate) fn classify_query(status: u16, meta: ResponseMeta, body: &str) -> ProviderError {
    if status == 429 {
        return ProviderError::RateLimited {
            retry_after: meta.retry_after,
        };
    }
    let Envelope { error } = serde_json::from_str(body).unwrap_or_default();
    let detail = match (error.message, error.code) {
        (Some(message), Some(code)) => format!("{code}: {message}"),
        (Some(message), None) => message,
        (None, _) => body.chars().take(200).collect(),
    };
    ProviderError::Unknown {
        reason: format!("Stripe answered the status query with HTTP {status}: {detail}"),
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
                ResponseMeta::default(),
                &body("invalid_request_error", "charge_already_refunded")
            ),
            Failure::Declined {
                code: "charge_already_refunded".to_owned(),
                message: "m".to_owned()
            }
        );
    }

    #[test]
    fn a_missing_payment_is_configuration_not_a_decline() {
        assert_eq!(
            classify(
                404,
                ResponseMeta::default(),
                &body("invalid_request_error", "resource_missing")
            ),
            Failure::Error(ProviderError::Configuration {
                status: 404,
                message: "m".to_owned()
            })
        );
    }

    #[test]
    fn lock_timeout_and_conflict_mean_in_flight() {
        assert_eq!(
            classify(
                429,
                ResponseMeta::default(),
                &body("invalid_request_error", "lock_timeout")
            ),
            Failure::Error(ProviderError::InFlight)
        );
        assert_eq!(
            classify(409, ResponseMeta::default(), &body("idempotency_error", "")),
            Failure::Error(ProviderError::InFlight)
        );
    }

    #[test]
    fn an_unreadable_5xx_is_unknown() {
        assert!(matches!(
            classify(502, ResponseMeta::default(), "<html>bad gateway</html>"),
            Failure::Error(ProviderError::Unknown { .. })
        ));
    }

    #[test]
    fn wrong_credentials_are_configuration() {
        for status in [401, 403] {
            assert!(matches!(
                classify(status, ResponseMeta::default(), &body("invalid_request_error", "")),
                Failure::Error(ProviderError::Configuration { status: s, .. }) if s == status
            ));
        }
    }

    #[test]
    fn a_replayed_500_is_a_replayed_error_and_a_fresh_one_unknown() {
        let replayed = ResponseMeta {
            retry_after: None,
            replayed: true,
        };
        assert!(matches!(
            classify(500, replayed, &body("api_error", "")),
            Failure::Error(ProviderError::ReplayedError { status: 500, .. })
        ));
        assert!(matches!(
            classify(500, ResponseMeta::default(), &body("api_error", "")),
            Failure::Error(ProviderError::Unknown { .. })
        ));
    }

    #[test]
    fn a_replayed_decline_is_still_a_decline() {
        let replayed = ResponseMeta {
            retry_after: None,
            replayed: true,
        };
        assert!(matches!(
            classify(
                400,
                replayed,
                &body("invalid_request_error", "charge_already_refunded")
            ),
            Failure::Declined { .. }
        ));
    }

    #[test]
    fn every_failed_status_query_is_unknown_except_rate_limiting() {
        for status in [400, 401, 402, 403, 404, 409, 500, 503] {
            assert!(
                matches!(
                    classify_query(status, ResponseMeta::default(), &body("card_error", "x")),
                    ProviderError::Unknown { .. }
                ),
                "HTTP {status}"
            );
        }
        assert!(matches!(
            classify_query(429, ResponseMeta::default(), ""),
            ProviderError::RateLimited { .. }
        ));
    }
}
