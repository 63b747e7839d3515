//! Cross-site request forgery protection for every state-changing request.
//!
//! Two independent checks, both required for cookie-authenticated requests:
//! 1. the browser's own provenance headers: `Sec-Fetch-Site` must be
//!    `same-origin` or `none`, and `Origin`, when sent, must be ours;
//! 2. a per-session token, sent as the `csrf_token` form field (server
//!    functions and plain forms) or the `x-csrf-token` header (JSON clients).
//!
//! Requests authenticated only by a bearer token carry no ambient credentials
//! and skip the token check. Safe methods never change state, so pages only
//! receive the token here.

use crate::startup::AppState;
use crate::web::api_error::ApiError;
use app::csrf::{CsrfToken, FIELD, HEADER};
use app::server::keys;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{Method, header};
use subtle::ConstantTimeEq;
use tower_sessions::Session;

/// Form bodies larger than this are refused before parsing.
const MAX_FORM_BYTES: usize = 1 << 20;

pub async fn protect(
    State(state): State<AppState>,
    session: Session,
    request: Request,
    next: Next,
) -> Response {
    match check(&state, &session, request).await {
        Ok(request) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

async fn check(
    state: &AppState,
    session: &Session,
    mut request: Request,
) -> Result<Request, ApiError> {
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if safe {
        if crate::middleware::is_page_path(request.uri().path()) {
            let token = session_token(session, true).await?;
            request.extensions_mut().insert(CsrfToken(token));
        }
        return Ok(request);
    }
    let has_cookie = request.headers().contains_key(header::COOKIE);
    if crate::middleware::identity::bearer_token(&request).is_some() && !has_cookie {
        return Ok(request);
    }
    // An API client that sent no credentials at all forgot its bearer token;
    // telling it so (401) is as much a refusal as the CSRF one, and names
    // what is missing. Forms and server functions still get the CSRF check.
    if !has_cookie && request.uri().path().starts_with("/api/") {
        return Err(ApiError::unauthenticated("sign in or send a bearer token"));
    }
    check_provenance(state, &request)?;
    let expected = session_token(session, false).await?;
    let (submitted, request) = submitted_token(request).await?;
    let matches = !expected.is_empty()
        && submitted
            .as_deref()
            .is_some_and(|s| bool::from(s.as_bytes().ct_eq(expected.as_bytes())));
    if !matches {
        return Err(ApiError::forbidden(
            "csrf_failed",
            "missing or invalid CSRF token; reload the page and try again",
        ));
    }
    let mut request = request;
    request.extensions_mut().insert(CsrfToken(expected));
    Ok(request)
}

fn check_provenance(state: &AppState, request: &Request) -> Result<(), ApiError> {
    let headers = request.headers();
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && !matches!(site, "same-origin" | "none")
    {
        return Err(ApiError::forbidden(
            "cross_site_refused",
            "cross-site requests may not change anything",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("null");
        if !origin_allowed(state, headers, origin) {
            return Err(ApiError::forbidden(
                "cross_site_refused",
                "requests from another origin may not change anything",
            ));
        }
    }
    Ok(())
}

fn origin_allowed(state: &AppState, headers: &http::HeaderMap, origin: &str) -> bool {
    if let Some(public) = state.settings.public_origin() {
        return origin == public;
    }
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    origin == format!("http://{host}") || origin == format!("https://{host}")
}

/// The session's token; created on first use when `create` is set.
async fn session_token(session: &Session, create: bool) -> Result<String, ApiError> {
    let existing = session
        .get::<String>(keys::CSRF)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    match existing {
        Some(token) => Ok(token),
        None if create => {
            let token = app::server::random_token();
            session
                .insert(keys::CSRF, &token)
                .await
                .map_err(|e| ApiError::internal(&e))?;
            Ok(token)
        }
        None => Ok(String::new()),
    }
}

/// The token from the header, or from a URL-encoded body (which is buffered
/// and put back for the handler).
async fn submitted_token(request: Request) -> Result<(Option<String>, Request), ApiError> {
    if let Some(value) = request.headers().get(HEADER).and_then(|v| v.to_str().ok()) {
        let value = value.to_owned();
        return Ok((Some(value), request));
    }
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if !is_form {
        return Ok((None, request));
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_FORM_BYTES)
        .await
        .map_err(|_| ApiError::payload_too_large("form body is larger than 1 MiB"))?;
    let token = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&bytes)
        .ok()
        .and_then(|fields| fields.into_iter().find(|(k, _)| k == FIELD).map(|(_, v)| v));
    Ok((token, Request::from_parts(parts, Body::from(bytes))))
}
