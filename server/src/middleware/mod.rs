//! Request middleware, outermost first: sessions → identity → CSRF → page guard.

pub mod csrf;
pub mod identity;
pub mod page_guard;

/// Paths that are not pages: assets, APIs, server functions, probes.
pub fn is_page_path(path: &str) -> bool {
    !["/pkg/", "/api/", "/fn/", "/sandbox/"]
        .iter()
        .any(|prefix| path.starts_with(prefix))
        && !matches!(path, "/healthz" | "/readyz" | "/favicon.ico")
}
