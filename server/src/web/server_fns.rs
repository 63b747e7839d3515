//! Which `/fn/*` paths are server functions. Leptos routes each registered
//! function itself (a wrong method gets 405 with `Allow`); every other
//! `/fn/*` path reaches our catch-all, which answers with the JSON error
//! shape instead of the framework's developer message.
//!
//! Bodies are read here ([`limit_body`]), up to [`MAX_BODY_BYTES`], before
//! the framework sees them: a larger one is a 413 in the API's error shape, not a decoding
//! failure deep inside the function's argument codec.

use crate::web::api_error::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use http::StatusCode;
use std::collections::HashSet;
use std::sync::OnceLock;

/// The largest body a server function accepts: their arguments are form
/// fields (the CSRF check reads form bodies up to the same size).
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Middleware: server functions (`/fn/*`) get their body read first, within
/// [`MAX_BODY_BYTES`]; everything else passes untouched.
pub async fn limit_body(request: Request, next: Next) -> Response {
    if !request.uri().path().starts_with("/fn/") {
        return next.run(request).await;
    }
    match read_body(request).await {
        Ok(request) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

/// The request with its body read into memory, or the refusal: 413 when it
/// is (or announces itself as) larger than [`MAX_BODY_BYTES`], 400 when it
/// could not be read.
///
/// # Errors
/// The refusal, in the API's error shape.
pub async fn read_body(request: Request) -> Result<Request, ApiError> {
    let too_large = || {
        ApiError::payload_too_large(&format!(
            "the request body is larger than {} MiB",
            MAX_BODY_BYTES >> 20
        ))
    };
    let announced = request
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    let (parts, body) = request.into_parts();
    let mut chunks = body.into_data_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|_| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid",
                "the request body could not be read",
            )
        })?;
        if bytes.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Server functions register themselves before `main` runs, so the set is
/// built once, on first use.
pub fn is_server_fn(path: &str) -> bool {
    static PATHS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    PATHS
        .get_or_init(|| {
            leptos::server_fn::axum::server_fn_paths()
                .map(|(path, _)| path)
                .collect()
        })
        .contains(path)
}

#[cfg(test)]
mod tests {
    use super::is_server_fn;

    #[test]
    fn registered_functions_are_known_and_others_are_not() {
        assert!(is_server_fn("/fn/login"));
        assert!(!is_server_fn("/fn/no_such_function"));
    }
}
