//! Which `/fn/*` paths are server functions. Leptos routes each registered
//! function itself (a wrong method gets 405 with `Allow`); every other
//! `/fn/*` path reaches our catch-all, which answers with the JSON error
//! shape instead of the framework's developer message.

use std::collections::HashSet;
use std::sync::OnceLock;

/// Server functions register themselves before `main` runs, so the set is
/// built once, on first use.
pub fn is_server_fn(path: &str) -> bool {
    static PATHS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    PATHS
        .get_or_init(|| {
            leptos::server_fn::axum::server_fn_paths()
                .map(|(path, _)| path)
                .collect()
        })
        .contains(path)
}

#[cfg(test)]
mod tests {
    use super::is_server_fn;

    #[test]
    fn registered_functions_are_known_and_others_are_not() {
        assert!(is_server_fn("/fn/login"));
        assert!(!is_server_fn("/fn/no_such_function"));
    }
}
