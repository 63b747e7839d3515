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

    /// On the server every such error is about the request that arrived
    /// (its arguments or body could not be decoded) or about encoding the
    /// answer: the first is the client's to fix (422, naming the problem),
    /// the second is ours (logged, 500). The status is set here, where the
    /// framework turns its own errors into ours, so no caller can forget it.
    /// In the browser they are transport failures of the call itself.
    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        #[cfg(feature = "ssr")]
        {
            match value {
                ServerFnErrorErr::Args(message)
                | ServerFnErrorErr::Deserialization(message)
                | ServerFnErrorErr::MissingArg(message) => {
                    crate::server::fail(AppError::Invalid(undecodable(&message)))
                }
                other => crate::server::internal(&other),
            }
        }
        #[cfg(not(feature = "ssr"))]
        match value {
            ServerFnErrorErr::Args(message) => AppError::Invalid(message),
            other => AppError::Transport(other.to_string()),
        }
    }
}

/// What is wrong with arguments that did not decode, in words a caller can
/// act on: the decoder's field name is kept, its positions, type names and
/// library wording are not.
pub fn undecodable(detail: &str) -> String {
    let detail = detail.trim();
    let field = |marker: &str| {
        detail
            .split_once(marker)
            .and_then(|(_, rest)| rest.split('`').next())
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
    };
    let problem = if let Some(name) = field("missing field `") {
        format!("`{name}` is missing")
    } else if let Some(name) = field("unknown field `") {
        format!("`{name}` is not an argument of this function")
    } else if detail.contains("invalid digit") {
        "a value that must be a whole number is not one".to_owned()
    } else if detail.contains("invalid type") || detail.contains("invalid value") {
        "an argument has the wrong type".to_owned()
    } else if detail.contains("too large") || detail.contains("too small") {
        "a number is out of range".to_owned()
    } else if detail.contains("empty string") {
        "a value that must be a whole number is empty".to_owned()
    } else if detail.contains("utf-8") || detail.contains("UTF-8") {
        "the request is not valid UTF-8".to_owned()
    } else {
        "an argument is malformed".to_owned()
    };
    format!("the request's arguments could not be read: {problem}")
}

#[cfg(test)]
mod tests {
    use super::undecodable;

    #[test]
    fn decoding_failures_name_the_problem_without_the_decoder_s_wording() {
        assert_eq!(
            undecodable("missing field `page` at line 1 column 2"),
            "the request's arguments could not be read: `page` is missing"
        );
        assert_eq!(
            undecodable("invalid digit found in string"),
            "the request's arguments could not be read: a value that must be a whole number is not one"
        );
        assert_eq!(
            undecodable("parsing failed with error: 'x' at position: 3"),
            "the request's arguments could not be read: an argument is malformed"
        );
    }
}
