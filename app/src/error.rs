//! The one error shape every server function and JSON endpoint answers with:
//! `{"code": "...", "message": "..."}`. Internal causes are logged on the
//! server and never sent to the client.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "code", content = "message", rename_all = "snake_case")]
pub enum AppError {
    #[error("please sign in first")]
    Unauthenticated,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Throttled(String),
    /// Something outside Countersign (the payment provider) did not answer;
    /// nothing was changed and the same request may be tried again.
    #[error("{0}")]
    Unavailable(String),
    #[error("something went wrong on our side; it has been logged")]
    Internal,
    #[error("the request could not be completed: {0}")]
    Transport(String),
}

impl AppError {
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Unauthenticated => "unauthenticated",
            AppError::Forbidden(_) => "forbidden",
            AppError::Invalid(_) => "invalid",
            AppError::NotFound(_) => "not_found",
            AppError::Conflict(_) => "conflict",
            AppError::Throttled(_) => "throttled",
            AppError::Unavailable(_) => "unavailable",
            AppError::Internal => "internal",
            AppError::Transport(_) => "transport",
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            AppError::Unauthenticated => 401,
            AppError::Forbidden(_) => 403,
            AppError::Invalid(_) => 422,
            AppError::NotFound(_) => 404,
            AppError::Conflict(_) => 409,
            AppError::Throttled(_) => 429,
            AppError::Unavailable(_) => 503,
            AppError::Internal => 500,
            AppError::Transport(_) => 502,
        }
    }
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        match value {
            ServerFnErrorErr::Args(message) => AppError::Invalid(message),
            other => AppError::Transport(other.to_string()),
        }
    }
}
