//! Every sandbox request must carry the sandbox's secret key, as every
//! Stripe request carries its secret key: the sandbox is mounted on the main
//! listener, and without a key anyone could read its ledger, change its fault
//! plan or make refunds.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::state::SandboxState;
use super::wire::ErrorBody;

/// Middleware: 401 `api_key_invalid` unless `Authorization: Bearer <key>`
/// names the sandbox's key.
pub(crate) async fn require_secret_key(
    State(state): State<SandboxState>,
    request: Request,
    next: Next,
) -> Response {
    match presented_key(request.headers()) {
        Some(key) if matches(key, state.secret_key_bytes()) => next.run(request).await,
        Some(_) => unauthorised("Invalid API key provided."),
        None => unauthorised(
            "No API key provided. Send the sandbox's secret key as `Authorization: Bearer \
             sk_sbx_…`.",
        ),
    }
}

fn presented_key(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    let key = key.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !key.is_empty()).then_some(key)
}

/// Constant time in the key's content, so timing does not reveal how much
/// of a guess was right.
fn matches(presented: &str, expected: &[u8]) -> bool {
    presented.as_bytes().ct_eq(expected).into()
}

fn unauthorised(message: &str) -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(ErrorBody::new(
            "invalid_request_error",
            "api_key_invalid",
            message,
        )),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn only_a_bearer_key_is_read() {
        assert_eq!(presented_key(&headers("Bearer sk_sbx_1")), Some("sk_sbx_1"));
        assert_eq!(presented_key(&headers("bearer sk_sbx_1")), Some("sk_sbx_1"));
        assert_eq!(presented_key(&headers("Basic c2tfc2J4XzE6")), None);
        assert_eq!(presented_key(&headers("Bearer ")), None);
        assert_eq!(presented_key(&HeaderMap::new()), None);
    }

    #[test]
    fn a_prefix_or_extension_of_the_key_does_not_match() {
        assert!(matches("sk_sbx_abc", b"sk_sbx_abc"));
        assert!(!matches("sk_sbx_ab", b"sk_sbx_abc"));
        assert!(!matches("sk_sbx_abcd", b"sk_sbx_abc"));
    }
}
