//! Why a model call gave no answer, distinguished so the caller can tell a
//! transient condition (retry later) from a bug or a refusal.

use std::time::Duration;

/// A model call that ended without a response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// No complete answer within the configured time.
    #[error("the model did not answer within {after:?}")]
    Timeout { after: Duration },
    /// HTTP 429.
    #[error("the model provider is rate limiting: {message}")]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    /// HTTP 5xx.
    #[error("the model provider failed (HTTP {status}): {message}")]
    Server { status: u16, message: String },
    /// The connection could not be made or broke.
    #[error("the model provider is unreachable: {message}")]
    Unavailable { message: String },
    /// The answer could not be understood.
    #[error("the model's response was malformed: {message}")]
    Malformed { message: String },
    /// The answer stopped at the output-token limit (`finish_reason:
    /// "length"`): a cut-off text or cut-off tool calls, never used as an
    /// answer.
    #[error(
        "the model's reply was cut off at its output-token limit (finish_reason \"length\"); raise the output cap or shorten the conversation"
    )]
    Truncated,
    /// The provider or model refused to answer (content policy, a refusal).
    #[error("the model refused: {message}")]
    Refused { message: String },
    /// Another 4xx: a bad request, wrong credentials, an unknown model, an
    /// exhausted quota. Retrying will not help.
    #[error("the model provider rejected the request (HTTP {status}): {message}")]
    Rejected {
        status: u16,
        code: Option<String>,
        message: String,
    },
}

impl ModelError {
    /// A stable snake_case name for events and metrics.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Timeout { .. } => "timeout",
            Self::RateLimited { .. } => "rate_limited",
            Self::Server { .. } => "server_error",
            Self::Unavailable { .. } => "unavailable",
            Self::Malformed { .. } => "malformed_response",
            Self::Truncated => "truncated",
            Self::Refused { .. } => "refused",
            Self::Rejected { .. } => "rejected",
        }
    }

    /// Whether the same request may succeed later. Model calls have no side
    /// effects, so a retry after a timeout is safe.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Timeout { .. }
                | Self::RateLimited { .. }
                | Self::Server { .. }
                | Self::Unavailable { .. }
        )
    }
}
