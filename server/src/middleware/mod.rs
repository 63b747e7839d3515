//! Request middleware, outermost first: plain paths → ended sessions kept
//! ended → sessions → identity →
//! CSRF → page guard; no-store and HSTS on the way out.

pub mod csrf;
pub mod headers;
pub mod identity;
pub mod page_guard;
pub mod paths;
pub mod sessions;

/// Paths that are not pages: assets, APIs, server functions, probes.
pub fn is_page_path(path: &str) -> bool {
    !["/pkg/", "/api/", "/fn/", "/sandbox/"]
        .iter()
        .any(|prefix| path.starts_with(prefix))
        && !matches!(path, "/healthz" | "/readyz" | "/favicon.ico")
}
