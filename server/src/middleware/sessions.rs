//! Keeps the browser's newest session cookie: a request sent before a
//! sign-in or sign-out in another tab replaced its session would otherwise
//! answer with a session cookie (the ended session's again, since the
//! session layer sets it on every response to slide its expiry; its removal;
//! or a fresh visitor's) and land it over the new one, signing the browser
//! out.

use crate::session_store::noting_ended_sessions;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::header::SET_COOKIE;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "countersign_session";

/// Wraps the session layer: a request that came with an ended session sets
/// no session cookie.
pub async fn keep_ended_sessions_ended(request: Request, next: Next) -> Response {
    let (mut response, came_with_an_ended_session) = noting_ended_sessions(next.run(request)).await;
    if came_with_an_ended_session {
        let headers = response.headers_mut();
        let kept: Vec<_> = headers
            .get_all(SET_COOKIE)
            .iter()
            .filter(|cookie| !sets_the_session_cookie(cookie.as_bytes()))
            .cloned()
            .collect();
        headers.remove(SET_COOKIE);
        for cookie in kept {
            headers.append(SET_COOKIE, cookie);
        }
    }
    response
}

fn sets_the_session_cookie(set_cookie: &[u8]) -> bool {
    set_cookie
        .strip_prefix(SESSION_COOKIE.as_bytes())
        .is_some_and(|rest| rest.starts_with(b"="))
}
