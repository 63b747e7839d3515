//! CSRF tokens on the page. The server keeps one token per session and checks
//! it (plus Origin / Sec-Fetch-Site) on every state-changing request; pages
//! carry it in a `<meta>` tag and in a hidden `csrf_token` field that every
//! state-changing server function takes as an argument.

use leptos::prelude::*;

/// Name of the form field and server-function argument.
pub const FIELD: &str = "csrf_token";
/// Name of the header JSON clients may use instead.
pub const HEADER: &str = "x-csrf-token";

/// The session's token, placed in request extensions by the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsrfToken(pub String);

/// The token of the current page: from the request while rendering on the
/// server, from the `<meta>` tag in the browser.
pub fn csrf_token() -> String {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<CsrfToken>().cloned())
            .map(|token| token.0)
            .unwrap_or_default()
    }
    #[cfg(not(feature = "ssr"))]
    {
        document()
            .query_selector("meta[name=csrf-token]")
            .ok()
            .flatten()
            .and_then(|meta| meta.get_attribute("content"))
            .unwrap_or_default()
    }
}

/// `<meta name="csrf-token">` for the document head.
#[component]
pub fn CsrfMeta() -> impl IntoView {
    view! { <meta name="csrf-token" content=csrf_token()/> }
}

/// The hidden field every state-changing form carries.
#[component]
pub fn CsrfField() -> impl IntoView {
    view! { <input type="hidden" name=FIELD value=csrf_token()/> }
}
