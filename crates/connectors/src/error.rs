//! Why a provider call did not give a definite refund outcome.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A provider call that ended without a definite outcome, or was refused
/// before anything could execute.
///
/// | variant | may the refund exist? | what the caller does |
/// |---|---|---|
/// | `Unknown` | yes | query [`lookup`](crate::PaymentProvider::lookup), tell the user "unknown" |
/// | `InFlight` | yes, soon | wait, then query or resend with the same key |
/// | `ReplayedError` | yes (the stored 500 may have executed) | a person must look; resending only replays it |
/// | `RateLimited` | no | wait `retry_after`, resend with the same key |
/// | `KeyReusedWithDifferentParameters` | not *this* refund | bug: stop, alert |
/// | `Configuration` | no | a person must fix the key or the payment reference |
/// | `Rejected` / `InvalidRequest` | no | bug or configuration: stop, alert |
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderError {
    /// Outcome unknown: timeout, connection reset, 5xx, unreadable answer.
    /// Never to be reported as a failure.
    #[error("refund outcome unknown: {reason}")]
    Unknown { reason: String },

    /// A request under the same key is still being processed (HTTP 409).
    #[error("a request with the same idempotency key is still in flight")]
    InFlight,

    /// The key was already used with different parameters (HTTP 422, or
    /// Stripe's `idempotency_error`).
    #[error("idempotency key reused with different parameters: {message}")]
    KeyReusedWithDifferentParameters { message: String },

    /// HTTP 429; nothing was executed.
    #[error("rate limited by the provider")]
    RateLimited {
        #[serde(
            rename = "retry_after_ms",
            with = "crate::duration_serde::option_millis",
            default
        )]
        retry_after: Option<Duration>,
    },

    /// The provider refused the request itself (a 4xx other than the above):
    /// a bug or a configuration error such as wrong credentials. Definite:
    /// nothing was executed.
    #[error("provider rejected the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },

    /// Refused here, before anything was sent (for example a payment
    /// reference this provider cannot address). Definite: nothing executed.
    #[error("invalid refund request: {message}")]
    InvalidRequest { message: String },

    /// The provider refused because of our configuration: authentication or
    /// permission (401/403), a payment reference it does not know (404
    /// `resource_missing`) — nothing executed; a person must fix it.
    #[error(
        "the payment provider refused the request because of configuration (HTTP {status}): {message}"
    )]
    Configuration { status: u16, message: String },

    /// The provider replayed an error it had stored under this idempotency
    /// key (Stripe stores a 500 for 24 h and answers every resend with it and
    /// `Idempotent-Replayed: true`): resending cannot help; a person must look.
    #[error("the provider replayed a stored error for this key (HTTP {status}): {message}")]
    ReplayedError { status: u16, message: String },
}

impl ProviderError {
    /// True when the refund may exist despite the error, so the caller must
    /// query before concluding anything.
    #[must_use]
    pub fn may_have_executed(&self) -> bool {
        // A replayed error stands for the original 500, which may have
        // executed before the provider failed.
        matches!(
            self,
            Self::Unknown { .. } | Self::InFlight | Self::ReplayedError { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_serialise_with_a_kind_tag_and_milliseconds() {
        let err = ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(1)),
        };
        let json = serde_json::to_value(&err).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"kind": "rate_limited", "retry_after_ms": 1000})
        );
        assert_eq!(
            serde_json::from_value::<ProviderError>(json).ok(),
            Some(err)
        );
    }

    #[test]
    fn unknown_in_flight_and_replayed_errors_may_have_executed_and_configuration_not() {
        assert!(ProviderError::InFlight.may_have_executed());
        assert!(
            ProviderError::Unknown {
                reason: String::new()
            }
            .may_have_executed()
        );
        assert!(!ProviderError::RateLimited { retry_after: None }.may_have_executed());
        assert!(
            ProviderError::ReplayedError {
                status: 500,
                message: String::new()
            }
            .may_have_executed(),
            "the stored 500 stands for a request that may have executed"
        );
        assert!(
            !ProviderError::Configuration {
                status: 401,
                message: String::new()
            }
            .may_have_executed()
        );
    }
}
