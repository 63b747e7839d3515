//! The pages' Content-Security-Policy nonce. The server makes one per
//! response, puts it in the policy header and hands it to the render in the
//! request's extensions; the shell gives it to Leptos, which writes it on
//! every script it emits (the hydration loader, streamed chunks), so those
//! scripts, and no injected one, may run.

/// Gives Leptos this response's nonce (replacing the one `leptos_axum`
/// draws per render, which no header names).
#[cfg(feature = "ssr")]
pub fn adopt_response_nonce() {
    use leptos::nonce::Nonce;
    use leptos::prelude::{provide_context, use_context};
    let nonce = use_context::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Nonce>().cloned());
    if let Some(nonce) = nonce {
        provide_context(nonce);
    }
}
