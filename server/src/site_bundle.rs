//! The browser bundle (hydration wasm, its JS loader, the stylesheet) served
//! under a path named after its content, so a browser keeps it for a year and
//! still never runs a stale copy after a deploy: a new build is a new path.
//!
//! `scripts/build-site.sh` writes the bundle to `<site root>/pkg/<version>/`
//! with `.gz` copies beside each file and the version in `pkg/current`. A
//! site built by hand without that file is served from `pkg/` unversioned
//! and revalidated on every load.

use std::path::{Path, PathBuf};

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, header};
use tower::ServiceBuilder;
use tower_http::services::ServeDir;

/// A year: the path changes whenever the content does.
const VERSIONED: &str = "public, max-age=31536000, immutable";
/// An unversioned bundle may change under the same path: ask every time.
const UNVERSIONED: &str = "no-cache";

#[derive(Clone, Debug)]
pub struct SiteBundle {
    /// Where the files are on disk.
    dir: PathBuf,
    /// The URL path under the site root, `pkg/<version>` or `pkg`.
    pkg_dir: String,
    versioned: bool,
}

impl SiteBundle {
    /// The bundle the last site build published under `site_root`.
    pub fn locate(site_root: &Path) -> SiteBundle {
        let pkg = site_root.join("pkg");
        let version = std::fs::read_to_string(pkg.join("current"))
            .ok()
            .map(|text| text.trim().to_owned())
            .filter(|version| is_version(version));
        match version {
            Some(version) => SiteBundle {
                dir: pkg.join(&version),
                pkg_dir: format!("pkg/{version}"),
                versioned: true,
            },
            None => SiteBundle {
                dir: pkg,
                pkg_dir: "pkg".to_owned(),
                versioned: false,
            },
        }
    }

    /// The path Leptos' hydration scripts and the stylesheet link use.
    pub fn pkg_dir(&self) -> &str {
        &self.pkg_dir
    }

    /// The stylesheet's URL.
    pub fn stylesheet_href(&self) -> String {
        format!("/{}/countersign.css", self.pkg_dir)
    }

    /// The bundle at `/<pkg_dir>`, gzip-compressed from the copies the build
    /// made when the browser accepts it, with the caching its path allows.
    pub fn router<S: Clone + Send + Sync + 'static>(&self) -> Router<S> {
        let policy = if self.versioned {
            VERSIONED
        } else {
            UNVERSIONED
        };
        let files = ServiceBuilder::new()
            .layer(axum::middleware::from_fn(move |request, next| {
                cache_found(policy, request, next)
            }))
            .service(ServeDir::new(&self.dir).precompressed_gzip());
        Router::new().nest_service(&format!("/{}", self.pkg_dir), files)
    }
}

/// Only a file that was found may be kept: a 404 today may be a file after
/// the next deploy.
async fn cache_found(policy: &'static str, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let value = if response.status().is_success() {
        policy
    } else {
        "no-store"
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    response
}

/// A version is the hex digest prefix the build script writes; anything else
/// in the file is ignored rather than put into a URL path.
fn is_version(text: &str) -> bool {
    (8..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_version_names_the_bundle_path() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("pkg/0123abcd4567ef89")).unwrap();
        std::fs::write(root.path().join("pkg/current"), "0123abcd4567ef89\n").unwrap();
        let bundle = SiteBundle::locate(root.path());
        assert_eq!(bundle.pkg_dir(), "pkg/0123abcd4567ef89");
        assert_eq!(
            bundle.stylesheet_href(),
            "/pkg/0123abcd4567ef89/countersign.css"
        );
    }

    #[test]
    fn a_site_without_a_version_or_with_a_garbled_one_is_served_unversioned_from_pkg() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(SiteBundle::locate(root.path()).pkg_dir(), "pkg");
        std::fs::create_dir_all(root.path().join("pkg")).unwrap();
        std::fs::write(root.path().join("pkg/current"), "../../etc").unwrap();
        assert_eq!(SiteBundle::locate(root.path()).pkg_dir(), "pkg");
    }
}
