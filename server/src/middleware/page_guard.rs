//! Server-side access control for pages, from the one table in
//! `app::access`: signed-out visitors are sent to sign in, signed-in users
//! without the role get 403. Server functions check roles themselves.

use app::access::page_access;
use app::server::Identity;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use http::{Method, StatusCode};

/// `stylesheet` is the bundle's stylesheet URL, for the 403 page.
pub async fn guard(State(stylesheet): State<String>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    // HEAD renders the page like GET (only the body is dropped), so it is guarded too.
    let renders_page = matches!(*request.method(), Method::GET | Method::HEAD);
    if !renders_page || !crate::middleware::is_page_path(path) {
        return next.run(request).await;
    }
    let access = page_access(path);
    let identity = request.extensions().get::<Identity>();
    if access.allows(identity.map(|i| &i.roles)) {
        return next.run(request).await;
    }
    if identity.is_none() {
        let target = request
            .uri()
            .path_and_query()
            .map(|pq| pq.as_str())
            .unwrap_or("/");
        let query = serde_urlencoded::to_string([("next", target)]).unwrap_or_default();
        return Redirect::to(&format!("/login?{query}")).into_response();
    }
    let page = FORBIDDEN_PAGE.replace("{stylesheet}", &stylesheet);
    (StatusCode::FORBIDDEN, Html(page)).into_response()
}

const FORBIDDEN_PAGE: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Not allowed · Countersign</title>
<link rel="stylesheet" href="{stylesheet}"></head>
<body><main class="page"><section class="card narrow">
<h1>You do not have access to this page</h1>
<p>Your account does not hold the role this page needs. <a href="/">Back to the start page</a></p>
</section></main></body></html>"#;
