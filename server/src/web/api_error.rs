//! The JSON error shape of every non-Leptos endpoint:
//! `{"error": {"code": "...", "message": "..."}}`. Internal causes are logged
//! once here and never sent to the client.

use app::error::{AppError, DATABASE_UNAVAILABLE, RETRY_AFTER_SECONDS};
use axum::Json;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde::Serialize;
use storage::StorageError;
use tower_sessions::session::Error as SessionError;
use tower_sessions::session_store;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Detail<'a>,
}

#[derive(Serialize)]
struct Detail<'a> {
    code: &'a str,
    message: &'a str,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn unauthenticated(message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthenticated", message)
    }

    pub fn forbidden(code: &'static str, message: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, message)
    }

    pub fn payload_too_large(message: &str) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", message)
    }

    /// The database is briefly unavailable: 503, and `Retry-After` (added
    /// to every 503 when it is answered).
    pub fn database_unavailable(reason: &dyn std::fmt::Display) -> Self {
        tracing::warn!(%reason, "database unavailable");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            DATABASE_UNAVAILABLE,
        )
    }

    /// A failure on our side, logged once and hidden from the client; but a
    /// database that is briefly unavailable (a storage error saying so, also
    /// inside an `anyhow` chain) is a 503 the client may retry, whichever
    /// handler met it.
    pub fn internal<E: std::fmt::Display + 'static>(error: &E) -> Self {
        let any: &dyn std::any::Any = error;
        let chain = any.downcast_ref::<anyhow::Error>();
        let storage = any.downcast_ref::<StorageError>().or_else(|| {
            chain.and_then(|chain| chain.chain().find_map(|e| e.downcast_ref::<StorageError>()))
        });
        let sessions = any.downcast_ref::<SessionError>().or_else(|| {
            chain.and_then(|chain| chain.chain().find_map(|e| e.downcast_ref::<SessionError>()))
        });
        match (storage, sessions) {
            (Some(StorageError::Unavailable(reason)), _) => Self::database_unavailable(reason),
            (Some(StorageError::OutOfRange(message)), _) => {
                Self::new(StatusCode::BAD_REQUEST, "invalid", message.clone())
            }
            // Sessions live in the application database: a store that
            // cannot be reached is that database being unavailable.
            (_, Some(SessionError::Store(session_store::Error::Backend(reason)))) => {
                Self::database_unavailable(reason)
            }
            _ => {
                tracing::error!(%error, "internal error");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "something went wrong on our side; it has been logged",
                )
            }
        }
    }
}

impl From<StorageError> for ApiError {
    fn from(error: StorageError) -> Self {
        ApiError::internal(&error)
    }
}

impl From<AppError> for ApiError {
    fn from(error: AppError) -> Self {
        ApiError::new(
            StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            error.code(),
            error.to_string(),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: Detail {
                code: self.code,
                message: &self.message,
            },
        };
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            // Nothing was changed: the same request may be sent again.
            response.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from(RETRY_AFTER_SECONDS),
            );
        }
        response
    }
}
