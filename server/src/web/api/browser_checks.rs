//! `GET /api/v1/browser-checks/{id}/screenshot`: the screenshot the browser
//! lane took when it read a page, for the staff who decide on a proposal
//! citing it. Its SHA-256 is in the citation, so what is shown here can be
//! checked against what the proposal rests on.

use super::Caller;
use super::extract::ApiPath;
use crate::startup::AppState;
use crate::web::api_error::ApiError;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

/// The screenshot of a page read in the browser (approvers, managers,
/// admins).
#[utoipa::path(get, path = "/api/v1/browser-checks/{id}/screenshot", tag = "proposals",
    params(("id" = String, Path, description = "The browser check a citation names (`browser-check:<id>`)")),
    responses(
        (status = 200, description = "The PNG taken when the page was read; `X-Content-SHA256` repeats the hash the citation carries", content_type = "image/png", body = Vec<u8>),
        (status = 400, description = "An id that is not valid in a URL", body = crate::web::api::openapi::ErrorBody),
        (status = 403, description = "Evidence screenshots are for staff", body = crate::web::api::openapi::ErrorBody),
        (status = 404, description = "No such browser check", body = crate::web::api::openapi::ErrorBody)))]
pub async fn screenshot(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, ApiError> {
    if !identity.roles.any_of(app::access::INBOX_ROLES) {
        return Err(ApiError::forbidden(
            "forbidden",
            "evidence screenshots are for staff",
        ));
    }
    let Some(check) = storage::browser::checks::get(state.db.conn(), &id).await? else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no browser check {id}"),
        ));
    };
    Ok((
        [
            (header::CONTENT_TYPE, "image/png".to_owned()),
            (
                header::CACHE_CONTROL,
                "private, max-age=86400, immutable".to_owned(),
            ),
            (
                header::HeaderName::from_static("x-content-sha256"),
                check.screenshot_sha256,
            ),
        ],
        check.screenshot,
    )
        .into_response())
}
