//! Response headers that keep answers where they belong: nothing a signed-in
//! person saw is kept by a browser or a proxy cache, and over TLS the
//! browser is told to use nothing else.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, header};

/// One year, and every subdomain: the deployment serves over TLS only.
const HSTS: &str = "max-age=31536000; includeSubDomains";

/// `Cache-Control: no-store` on every answer but the site's static assets:
/// pages, API answers, server functions and the CSV export are per person
/// and may carry customers' data.
pub async fn no_store(request: Request, next: Next) -> Response {
    let cacheable = is_static_asset(request.uri().path());
    let mut response = next.run(request).await;
    if !cacheable {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// `Strict-Transport-Security` on every answer when the public URL is
/// `https` (`enabled`); nothing over plain HTTP, where the header means
/// nothing and would only mislead.
pub async fn transport_security(
    State(enabled): State<bool>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = next.run(request).await;
    if enabled {
        response.headers_mut().insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static(HSTS),
        );
    }
    response
}

fn is_static_asset(path: &str) -> bool {
    path.starts_with("/pkg/") || path == "/favicon.ico"
}
