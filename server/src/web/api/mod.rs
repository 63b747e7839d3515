//! The versioned JSON API under `/api/v1`. Browsers authenticate with their
//! session (plus the CSRF header for writes), machines with bearer tokens.

mod browser_checks;
mod conversations;
pub(crate) mod extract;
mod handover;
pub mod openapi;
mod operations;
mod ops;
mod orders;
mod proposals;
mod shipments;
pub mod views;

use super::api_error::ApiError;
use crate::startup::AppState;
use app::server::Identity;
use axum::extract::DefaultBodyLimit;
use axum::extract::rejection::ExtensionRejection;
use axum::routing::{get, post, put};
use axum::{Extension, Json, Router};
use domain::UserSummary;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/me", get(me))
        .route("/proposals", get(proposals::list).post(proposals::submit))
        .route("/proposals/{id}", get(proposals::get_one))
        .route("/proposals/{id}/approve", post(proposals::approve))
        .route("/proposals/{id}/reject", post(proposals::reject))
        .route("/proposals/{id}/resolve", post(proposals::resolve))
        .route("/proposals/{id}/events", get(proposals::events))
        .route("/conversations", post(conversations::create))
        .route("/conversations/{id}", get(conversations::get_one))
        .route("/conversations/{id}/messages", post(conversations::message))
        .route("/conversations/{id}/stop", post(conversations::stop))
        .route("/conversations/{id}/events", get(conversations::events))
        .route(
            "/conversations/{id}/handover",
            get(handover::get_handover).post(handover::request),
        )
        .route("/conversations/{id}/takeover", post(handover::take_over))
        .route(
            "/conversations/{id}/person-messages",
            post(handover::person_message),
        )
        .route("/conversations/{id}/handback", post(handover::hand_back))
        .route("/inbox", get(handover::inbox))
        .route(
            "/orders/{external_id}",
            put(orders::upsert)
                .get(orders::get_one)
                .layer(DefaultBodyLimit::max(orders::ORDER_BODY_LIMIT)),
        )
        .route(
            "/orders/{external_id}/refunds",
            post(orders::record_refund).layer(DefaultBodyLimit::max(orders::ORDER_BODY_LIMIT)),
        )
        .route(
            "/orders/{external_id}/shipment",
            put(shipments::record)
                .get(shipments::get_one)
                .layer(DefaultBodyLimit::max(orders::ORDER_BODY_LIMIT)),
        )
        .route("/sandbox/ledger", get(operations::ledger))
        .route("/audit/verify", get(operations::verify_journal))
        .route("/ops", get(ops::view))
        .route("/ops/work/{id}/retry", post(ops::retry))
        .route("/ops/work/{id}/resolve", post(ops::resolve))
        .route("/ops/work/{id}/cancel", post(ops::cancel))
        .route("/ops/alerts/{id}/acknowledge", post(ops::acknowledge))
        .route("/audit/events.csv", get(crate::web::audit_csv::export))
        .route(
            "/browser-checks/{id}/screenshot",
            get(browser_checks::screenshot),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
}

/// The authenticated caller, for every API handler.
pub struct Caller(pub Identity);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let identity: Result<Extension<Identity>, ExtensionRejection> =
            Extension::from_request_parts(parts, state).await;
        identity
            .map(|Extension(identity)| Caller(identity))
            .map_err(|_| ApiError::unauthenticated("sign in or send a bearer token"))
    }
}

/// The authenticated caller.
#[utoipa::path(get, path = "/api/v1/me", tag = "identity",
    responses((status = 200, body = Object), (status = 401, body = openapi::ErrorBody)))]
pub async fn me(Caller(identity): Caller) -> Json<UserSummary> {
    Json(identity.summary())
}

pub async fn not_found() -> ApiError {
    ApiError::new(http::StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

/// In the one error shape; the router adds `Allow` with the methods that are.
async fn method_not_allowed() -> ApiError {
    ApiError::new(
        http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not answer that method",
    )
}
