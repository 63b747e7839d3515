//! Liveness and readiness probes.

use crate::startup::AppState;
use crate::web::api::openapi::ErrorBody;
use crate::web::api_error::ApiError;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Serialize, ToSchema)]
pub struct ProbeView {
    /// `ok` (alive) or `ready` (can serve).
    pub status: &'static str,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "probes", security(()),
    responses((status = 200, body = ProbeView)))]
pub async fn healthz() -> Json<ProbeView> {
    Json(ProbeView { status: "ok" })
}

/// The process can serve: the database answers. While it does not, a 503 in
/// the one error shape, with `Retry-After`.
#[utoipa::path(get, path = "/readyz", tag = "probes", security(()),
    responses((status = 200, body = ProbeView),
        (status = 503, description = "The database does not answer", body = ErrorBody)))]
pub async fn readyz(State(state): State<AppState>) -> Result<Json<ProbeView>, ApiError> {
    state.db.ping().await.map_err(|error| {
        tracing::warn!(%error, "readiness check failed");
        ApiError::new(
            http::StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the database does not answer",
        )
    })?;
    Ok(Json(ProbeView { status: "ready" }))
}
