//! Keeps an ended session ended in the browser: a request that loaded its
//! session before a sign-in or sign-out elsewhere (another tab) ended it
//! would otherwise answer with that session's cookie again (the session
//! layer sets the cookie on every response to slide its expiry) and put it
//! back over the new one, signing the browser out.

use crate::session_store::EndedSessions;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::header::SET_COOKIE;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "countersign_session";

/// Wraps the session layer: drops the `Set-Cookie` of a session its request
/// found ended when saving it.
pub async fn keep_ended_sessions_ended(
    State(ended): State<EndedSessions>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let cookies: Vec<_> = headers.get_all(SET_COOKIE).iter().cloned().collect();
    let kept: Vec<_> = cookies
        .iter()
        .filter(|cookie| {
            let id = cookie
                .to_str()
                .ok()
                .and_then(|value| value.strip_prefix(SESSION_COOKIE))
                .and_then(|rest| rest.strip_prefix('='))
                .map(|rest| rest.split(';').next().unwrap_or(rest));
            !id.is_some_and(|id| ended.take(id))
        })
        .cloned()
        .collect();
    if kept.len() != cookies.len() {
        headers.remove(SET_COOKIE);
        for cookie in kept {
            headers.append(SET_COOKIE, cookie);
        }
    }
    response
}
