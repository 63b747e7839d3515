//! The operations view over JSON: the work runner's lanes, schedules, items
//! needing a person, open alerts and the last journal check, and the staff
//! actions on them, for managers and admins. The page `/ops` and the
//! `countersign work` command go through the same engine use cases.
//!
//! Refusals: 403 for other roles, 404 for an unknown id, 409 (`conflict`)
//! with the engine's reason when the item's state or kind does not allow
//! the action (a refund's send is never cancelled; only dead letters are
//! retried or resolved).

use super::Caller;
use super::extract::ApiPath;
use crate::startup::AppState;
use crate::web::api_error::ApiError;
use app::ops::backend::{ops_error, page, work_row};
use app::ops::{OpsOverview, WorkAction, WorkRow};
use axum::Json;
use axum::extract::State;

/// The operations view: lanes (purpose, concurrency, priority, counts,
/// oldest waiting item, next run), schedules (next and last run, last
/// finding or error), items running, retrying or dead-lettered (with the
/// actions each allows now), open alerts and the last journal check.
#[utoipa::path(get, path = "/api/v1/ops", tag = "operations",
    responses((status = 200, description = "`{lanes, schedules, attention, alerts, audit, now}`", body = Object),
        (status = 403, description = "Only managers and admins see background work", body = super::openapi::ErrorBody)))]
pub async fn view(
    State(state): State<AppState>,
    Caller(identity): Caller,
) -> Result<Json<OpsOverview>, ApiError> {
    let view = state
        .engine
        .work
        .ops_view(&identity.actor())
        .await
        .map_err(|e| ApiError::from(ops_error(e)))?;
    Ok(Json(page(view)))
}

async fn act(
    state: &AppState,
    caller: &Caller,
    id: &str,
    action: WorkAction,
) -> Result<Json<WorkRow>, ApiError> {
    let after = state
        .engine
        .work
        .act_on_work(&caller.0.actor(), id, action.into())
        .await
        .map_err(|e| ApiError::from(ops_error(e)))?;
    state.server_context.ops_hints.changed();
    Ok(Json(work_row(after)))
}

/// Runs a dead-lettered item again from its first attempt (`queued`).
#[utoipa::path(post, path = "/api/v1/ops/work/{id}/retry", tag = "operations",
    params(("id" = String, Path, description = "The work item id")),
    responses((status = 200, description = "The item afterwards", body = Object),
        (status = 403, body = super::openapi::ErrorBody),
        (status = 404, description = "No such work item", body = super::openapi::ErrorBody),
        (status = 409, description = "The item is not dead-lettered (the message says its state)", body = super::openapi::ErrorBody)))]
pub async fn retry(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<WorkRow>, ApiError> {
    act(&state, &caller, &id, WorkAction::Retry).await
}

/// Marks a dead-lettered item as settled by hand (`resolved`).
#[utoipa::path(post, path = "/api/v1/ops/work/{id}/resolve", tag = "operations",
    params(("id" = String, Path, description = "The work item id")),
    responses((status = 200, description = "The item afterwards", body = Object),
        (status = 403, body = super::openapi::ErrorBody),
        (status = 404, description = "No such work item", body = super::openapi::ErrorBody),
        (status = 409, description = "The item is not dead-lettered (the message says its state)", body = super::openapi::ErrorBody)))]
pub async fn resolve(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<WorkRow>, ApiError> {
    act(&state, &caller, &id, WorkAction::Resolve).await
}

/// Drops an item that is safe to drop (a check or a notification not yet
/// started, or dead-lettered): `cancelled`.
#[utoipa::path(post, path = "/api/v1/ops/work/{id}/cancel", tag = "operations",
    params(("id" = String, Path, description = "The work item id")),
    responses((status = 200, description = "The item afterwards", body = Object),
        (status = 403, body = super::openapi::ErrorBody),
        (status = 404, description = "No such work item", body = super::openapi::ErrorBody),
        (status = 409, description = "Its kind may not be cancelled (a refund's send), or it has started or finished; the message says why", body = super::openapi::ErrorBody)))]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<WorkRow>, ApiError> {
    act(&state, &caller, &id, WorkAction::Cancel).await
}

/// Acknowledges an open alert (journaled with who did it).
#[utoipa::path(post, path = "/api/v1/ops/alerts/{id}/acknowledge", tag = "operations",
    params(("id" = String, Path, description = "The alert id")),
    responses((status = 204, description = "Acknowledged"),
        (status = 403, body = super::openapi::ErrorBody),
        (status = 404, description = "No such open alert", body = super::openapi::ErrorBody)))]
pub async fn acknowledge(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<http::StatusCode, ApiError> {
    state
        .engine
        .work
        .acknowledge_alert(&identity.actor(), &id)
        .await
        .map_err(|e| ApiError::from(ops_error(e)))?;
    state.server_context.ops_hints.changed();
    Ok(http::StatusCode::NO_CONTENT)
}
