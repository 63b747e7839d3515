//! `/api/v1/orders/{external_id}/shipment`: how the shop's order went out
//! (carrier and tracking number), which the specialist's browser lane reads
//! when the order record shows no delivery.

use super::extract::{ApiJson, ApiPath};
use super::orders::{ShopCaller, order_error};
use crate::startup::AppState;
use crate::web::api_error::ApiError;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use engine::orders::{ShipmentChange, ShipmentInput};
use serde::Serialize;
use storage::browser::shipments::Shipment;
use utoipa::ToSchema;

/// An order's shipment as recorded.
#[derive(Debug, Serialize, ToSchema)]
pub struct ShipmentView {
    /// The shop's order id.
    pub external_id: String,
    pub carrier: String,
    pub tracking_number: String,
}

impl From<Shipment> for ShipmentView {
    fn from(shipment: Shipment) -> Self {
        ShipmentView {
            external_id: shipment.order_id,
            carrier: shipment.carrier,
            tracking_number: shipment.tracking_number,
        }
    }
}

/// Record the order's shipment: recorded (201), corrected to another
/// carrier or number (200), or a repeat (200, nothing written). It is not
/// part of the order's content: the order's version, and the approvals
/// given on it, stay as they are.
#[utoipa::path(put, path = "/api/v1/orders/{external_id}/shipment", tag = "orders",
    params(("external_id" = String, Path, description = "The shop's order id")),
    request_body = ShipmentSchema,
    responses(
        (status = 201, description = "Recorded", body = ShipmentView),
        (status = 200, description = "Corrected, or the same shipment again", body = ShipmentView),
        (status = 400, description = "A malformed id or body", body = super::openapi::ErrorBody),
        (status = 401, body = super::openapi::ErrorBody),
        (status = 403, description = "Not a shop or admin account", body = super::openapi::ErrorBody),
        (status = 404, description = "No such order", body = super::openapi::ErrorBody),
        (status = 413, body = super::openapi::ErrorBody),
        (status = 422, description = "An invalid carrier or tracking number: the message names the field", body = super::openapi::ErrorBody)))]
pub async fn record(
    State(state): State<AppState>,
    ShopCaller(feeder): ShopCaller,
    ApiPath(external_id): ApiPath<String>,
    ApiJson(body): ApiJson<ShipmentInput>,
) -> Result<(StatusCode, Json<ShipmentView>), ApiError> {
    let (shipment, change) = state
        .engine
        .orders
        .record_shipment(&feeder, &external_id, body)
        .await
        .map_err(order_error)?;
    let status = match change {
        ShipmentChange::Recorded => StatusCode::CREATED,
        ShipmentChange::Corrected | ShipmentChange::Unchanged => StatusCode::OK,
    };
    Ok((status, Json(shipment.into())))
}

/// The order's shipment as recorded.
#[utoipa::path(get, path = "/api/v1/orders/{external_id}/shipment", tag = "orders",
    params(("external_id" = String, Path, description = "The shop's order id")),
    responses(
        (status = 200, body = ShipmentView),
        (status = 400, description = "A malformed id", body = super::openapi::ErrorBody),
        (status = 401, body = super::openapi::ErrorBody),
        (status = 403, body = super::openapi::ErrorBody),
        (status = 404, description = "No such order, or no shipment recorded for it", body = super::openapi::ErrorBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    ShopCaller(feeder): ShopCaller,
    ApiPath(external_id): ApiPath<String>,
) -> Result<Json<ShipmentView>, ApiError> {
    let shipment = state
        .engine
        .orders
        .get_shipment(&feeder, &external_id)
        .await
        .map_err(order_error)?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no shipment is recorded for order {external_id}"),
            )
        })?;
    Ok(Json(shipment.into()))
}

/// Documents the body of `PUT /api/v1/orders/{external_id}/shipment`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "exists to document the request body in OpenAPI")]
pub struct ShipmentSchema {
    /// The carrier's name as this team configures it (`parcelway` for the
    /// sandbox carrier): 1 to 40 lowercase letters, digits, `-` or `_`.
    pub carrier: String,
    /// As the carrier prints it: 1 to 64 letters, digits or `-`.
    pub tracking_number: String,
}
