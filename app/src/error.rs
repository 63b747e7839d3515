//! The one error shape every server function and JSON endpoint answers with:
//! `{"error": {"code": "...", "message": "..."}}`. Internal causes are logged
//! on the server and never sent to the client.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How long a client is asked to wait (`Retry-After`, seconds) before
/// repeating a request that met an [`AppError::Unavailable`].
pub const RETRY_AFTER_SECONDS: u32 = 2;

/// What a client is told when the database is briefly unavailable.
pub const DATABASE_UNAVAILABLE: &str =
    "the database is briefly unavailable; nothing was changed, try again shortly";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    /// Something Countersign depends on (the database, the payment provider)
    /// did not answer; nothing was changed and the same request may be tried
    /// again after `Retry-After`.
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

    /// The error a client reads back from `code` and `message`; a code this
    /// build does not know (a newer server, a refusal by a layer in front of
    /// the functions) keeps its message as a transport failure.
    fn from_wire(code: &str, message: String) -> AppError {
        match code {
            "unauthenticated" => AppError::Unauthenticated,
            "forbidden" => AppError::Forbidden(message),
            "invalid" => AppError::Invalid(message),
            "not_found" => AppError::NotFound(message),
            "conflict" => AppError::Conflict(message),
            "throttled" => AppError::Throttled(message),
            "unavailable" => AppError::Unavailable(message),
            "internal" => AppError::Internal,
            _ => AppError::Transport(message),
        }
    }
}

/// `{"error": {"code", "message"}}` on the wire, as every JSON endpoint.
#[derive(Serialize, Deserialize)]
struct Wire {
    error: WireDetail,
}

#[derive(Serialize, Deserialize)]
struct WireDetail {
    code: String,
    #[serde(default)]
    message: String,
}

impl Serialize for AppError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Wire {
            error: WireDetail {
                code: self.code().to_owned(),
                message: self.to_string(),
            },
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AppError {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        Ok(AppError::from_wire(&wire.error.code, wire.error.message))
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
    use super::{AppError, undecodable};

    #[test]
    fn server_function_errors_have_the_api_s_one_error_shape_and_read_back_the_same() {
        let error = AppError::Unavailable("the database is unavailable".to_owned());
        let wire = serde_json::to_value(&error).unwrap();
        assert_eq!(
            wire,
            serde_json::json!({"error": {"code": "unavailable", "message": "the database is unavailable"}})
        );
        assert_eq!(serde_json::from_value::<AppError>(wire).unwrap(), error);
        let internal = serde_json::to_value(AppError::Internal).unwrap();
        assert_eq!(internal["error"]["code"], "internal");
        let refused_in_front =
            serde_json::json!({"error": {"code": "payload_too_large", "message": "too big"}});
        assert_eq!(
            serde_json::from_value::<AppError>(refused_in_front).unwrap(),
            AppError::Transport("too big".to_owned())
        );
    }

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
