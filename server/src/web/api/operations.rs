//! Operational reads: the sandbox provider's ledger (proof of exactly one
//! refund per key) and the journal's hash-chain check.

use super::Caller;
use crate::startup::AppState;
use crate::web::api_error::ApiError;
use axum::Json;
use axum::extract::State;
use domain::Role;
use http::StatusCode;

/// The sandbox payment provider's ledger: refunds grouped per idempotency key.
#[utoipa::path(get, path = "/api/v1/sandbox/ledger", tag = "operations",
    responses((status = 200, body = Object), (status = 403, body = super::openapi::ErrorBody), (status = 404, body = super::openapi::ErrorBody)))]
pub async fn ledger(
    State(state): State<AppState>,
    Caller(identity): Caller,
) -> Result<Json<serde_json::Value>, ApiError> {
    if !identity
        .roles
        .any_of(&[Role::Approver, Role::Manager, Role::Admin])
    {
        return Err(ApiError::forbidden("forbidden", "the ledger is for staff"));
    }
    let sandbox = state.sandbox.as_ref().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "the payment provider is not the sandbox",
        )
    })?;
    let ledger = sandbox.ledger().await.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "provider_unavailable",
            format!("the sandbox did not answer: {e}"),
        )
    })?;
    Ok(Json(serde_json::to_value(ledger).unwrap_or_default()))
}

/// Re-computes the journal's hash chain.
#[utoipa::path(get, path = "/api/v1/audit/verify", tag = "operations",
    responses((status = 200, body = Object), (status = 403, body = super::openapi::ErrorBody)))]
pub async fn verify_journal(
    State(state): State<AppState>,
    Caller(identity): Caller,
) -> Result<Json<serde_json::Value>, ApiError> {
    if !identity.roles.any_of(&[Role::Manager, Role::Admin]) {
        return Err(ApiError::forbidden(
            "forbidden",
            "the audit trail is for managers",
        ));
    }
    let report = storage::journal::verify_chain(state.db.conn())
        .await
        .map_err(|e| ApiError::internal(&e))?;
    Ok(Json(serde_json::to_value(report).unwrap_or_default()))
}
