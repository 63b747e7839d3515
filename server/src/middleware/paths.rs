//! Requests are routed and guarded on their plain path only: a path with
//! empty, `.` or `..` segments (`/./admin`, `/queue/../admin`) is sent to
//! its plain form (reads) or refused (writes, or a path above the root)
//! before sessions, CSRF and the page guard look at it.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use http::{Method, StatusCode};

pub async fn plain_only(request: Request, next: Next) -> Response {
    let Some(clean) = normalised(request.uri().path()) else {
        return next.run(request).await;
    };
    match (clean, request.method()) {
        (Ok(clean), &Method::GET | &Method::HEAD) => {
            let query = request
                .uri()
                .query()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            Redirect::permanent(&format!("{clean}{query}")).into_response()
        }
        _ => (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({"error": {
                "code": "invalid",
                "message": "the path has empty, `.` or `..` segments; send it in its plain form"
            }})),
        )
            .into_response(),
    }
}

/// The path with `.` and `..` segments resolved and empty segments dropped,
/// when it differs from the path given; `Err` when `..` climbs above the
/// root. Access rules are decided on the normalised path only.
fn normalised(path: &str) -> Option<Result<String, ()>> {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/').skip(1) {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Some(Err(()));
                }
            }
            other => segments.push(other),
        }
    }
    let mut clean = format!("/{}", segments.join("/"));
    if path.ends_with('/') && clean != "/" && !path.ends_with("/./") && !path.ends_with("/../") {
        clean.push('/');
    }
    (clean != path).then_some(Ok(clean))
}

#[cfg(test)]
mod tests {
    use super::normalised;

    #[test]
    fn dot_segments_and_empty_segments_are_resolved() {
        assert_eq!(normalised("/./admin"), Some(Ok("/admin".into())));
        assert_eq!(normalised("/queue/../admin"), Some(Ok("/admin".into())));
        assert_eq!(normalised("//admin"), Some(Ok("/admin".into())));
        assert_eq!(normalised("/admin/."), Some(Ok("/admin".into())));
        assert_eq!(normalised("/../admin"), Some(Err(())));
    }

    #[test]
    fn a_clean_path_is_left_alone() {
        assert_eq!(normalised("/admin"), None);
        assert_eq!(normalised("/"), None);
        assert_eq!(normalised("/proposals/prp_1"), None);
    }
}
