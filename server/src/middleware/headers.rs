//! Response headers that keep answers where they belong: nothing a signed-in
//! person saw is kept by a browser or a proxy cache, over TLS the browser is
//! told to use nothing else, and a page runs only the scripts we wrote.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, header};
use leptos::nonce::Nonce;

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

/// The pages' policy: everything from our origin only; a script runs only
/// if it carries this response's nonce (the inline hydration loader and the
/// streamed chunks Leptos writes) or is a file we serve (the wasm bundle's
/// JS, which the loader imports). Not `'strict-dynamic'`: Leptos' preload
/// links for that bundle carry no nonce, so Chromium would refuse them.
/// `'wasm-unsafe-eval'` lets the browser compile our wasm, and nothing else.
/// No `'unsafe-inline'` anywhere: an injected `<script>`, `onclick=` or
/// `style=` does nothing.
pub fn page_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'self'"
    )
}

/// A fresh nonce for every request, handed to the page render (see
/// `app::csp`) and named in the answer's Content-Security-Policy. Answers
/// that bring their own policy (the widget frame) keep it.
pub async fn content_security(mut request: Request, next: Next) -> Response {
    let nonce = Nonce::new();
    request.extensions_mut().insert(nonce.clone());
    let mut response = next.run(request).await;
    if !response
        .headers()
        .contains_key(header::CONTENT_SECURITY_POLICY)
        && let Ok(policy) = HeaderValue::from_str(&page_policy(&nonce))
    {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

fn is_static_asset(path: &str) -> bool {
    path.starts_with("/pkg/") || path == "/favicon.ico"
}
