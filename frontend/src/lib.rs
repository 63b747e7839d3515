//! The wasm entry point: hydrates the server-rendered page.

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // After sign-in and sign-out the identity and CSRF token change, so a
    // server-function redirect loads the new page in full instead of routing
    // on the client with a stale token. Set before the router installs its own.
    let _ = leptos::server_fn::redirect::set_redirect_hook(|location: &str| {
        if let Some(window) = web_sys::window() {
            let _ = window.location().assign(location);
        }
    });
    leptos::mount::hydrate_body(app::App);
}
