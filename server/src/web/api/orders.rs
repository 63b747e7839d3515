//! `/api/v1/orders`: the order source. A shop's backend (a `shop` account's
//! bearer token) upserts its orders by its own id and version, reads them
//! back, and records refunds it made through other channels.

use super::extract::{ApiJson, ApiPath};
use crate::startup::AppState;
use crate::web::api_error::ApiError;
use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use engine::orders::{
    Change, Feeder, OrderError, OrderRecord, OrderUpsert, RecordRefund, RecordedRefund,
};
use serde::Serialize;
use utoipa::ToSchema;

/// The largest order body accepted (500 lines fit in well under this).
pub const ORDER_BODY_LIMIT: usize = 256 * 1024;

/// An authenticated caller allowed to feed orders, checked before the body
/// is read.
pub struct ShopCaller(pub Feeder);

impl<S: Send + Sync> FromRequestParts<S> for ShopCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let super::Caller(identity) = super::Caller::from_request_parts(parts, state).await?;
        Feeder::from_actor(&identity.actor())
            .map(ShopCaller)
            .map_err(order_error)
    }
}

/// An order as stored, with what has been refunded on it.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderView {
    /// The shop's order id.
    pub external_id: String,
    /// The shop's version last stored (null for an order no shop sent).
    pub source_version: Option<i64>,
    /// Countersign's version: moves whenever the order changes (a new
    /// source version, a recorded refund); approvals compare it.
    pub version: i64,
    /// The customer's Countersign user name.
    pub customer: String,
    /// `placed`, or the kind of the latest delivery event.
    pub status: String,
    pub placed_at: DateTime<Utc>,
    /// The latest `delivered` event, if any.
    pub delivered_at: Option<DateTime<Utc>>,
    pub currency: String,
    pub lines: Vec<LineView>,
    pub shipping_minor: i64,
    pub discount_minor: i64,
    pub total_minor: i64,
    pub payment_reference: String,
    /// Oldest first.
    pub events: Vec<DeliveryEventView>,
    /// Every refund booked on the order, through any channel.
    pub refunds: Vec<RefundView>,
    pub refunded_minor: i64,
    /// What may still be refunded.
    pub refundable_minor: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LineView {
    pub sku: String,
    pub description: String,
    pub quantity: i32,
    pub unit_price_minor: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryEventView {
    /// `shipped`, `delivered` or `returned`.
    pub kind: String,
    pub at: DateTime<Utc>,
}

/// A refund booked on an order.
#[derive(Debug, Serialize, ToSchema)]
pub struct RefundView {
    pub refund_id: String,
    pub amount_minor: i64,
    pub currency: String,
    /// `countersign` for Countersign's own refunds, else the shop's channel.
    pub channel: String,
    pub reference: String,
    pub created_at: DateTime<Utc>,
}

impl OrderView {
    fn of(record: &OrderRecord) -> Result<OrderView, ApiError> {
        let sourced = &record.sourced;
        let order = &sourced.order;
        let (refunded, refundable) = match (order.refunded(), order.refundable()) {
            (Ok(refunded), Ok(refundable)) => (refunded, refundable),
            (Err(error), _) | (_, Err(error)) => return Err(ApiError::internal(&error)),
        };
        Ok(OrderView {
            external_id: order.id.clone(),
            source_version: sourced.source.as_ref().map(|source| source.version),
            version: order.version,
            customer: record.customer_name.clone(),
            status: order.status.clone(),
            placed_at: order.placed_at,
            delivered_at: order.delivered_at,
            currency: order.currency().code().to_owned(),
            lines: order
                .lines
                .iter()
                .map(|line| LineView {
                    sku: line.sku.clone(),
                    description: line.description.clone(),
                    quantity: line.quantity,
                    unit_price_minor: line.unit_price_minor,
                })
                .collect(),
            shipping_minor: sourced.shipping_minor,
            discount_minor: sourced.discount_minor,
            total_minor: order.total.amount_minor,
            payment_reference: order.payment_reference.clone(),
            events: sourced
                .events
                .iter()
                .map(|event| DeliveryEventView {
                    kind: event.kind.as_str().to_owned(),
                    at: event.at,
                })
                .collect(),
            refunds: order.refunds.iter().map(RefundView::of).collect(),
            refunded_minor: refunded.amount_minor,
            refundable_minor: refundable.amount_minor,
        })
    }
}

impl RefundView {
    fn of(refund: &domain::PastRefund) -> RefundView {
        RefundView {
            refund_id: refund.id.clone(),
            amount_minor: refund.amount.amount_minor,
            currency: refund.amount.currency.code().to_owned(),
            channel: refund.channel.clone(),
            reference: refund.reference.clone(),
            created_at: refund.created_at,
        }
    }
}

/// Store the shop's order: created (201), replaced by a higher
/// `source_version` (200), or a repeat of the stored version with the same
/// content (200, nothing written). The same version with other content, or
/// a lower one, is refused (409). The payment reference must be one the
/// configured payment provider can refund.
#[utoipa::path(put, path = "/api/v1/orders/{external_id}", tag = "orders",
    params(("external_id" = String, Path, description = "The shop's order id: 1 to 50 letters, digits, '.', '_' or '-'")),
    request_body = OrderUpsertSchema,
    responses(
        (status = 201, description = "Created", body = OrderView),
        (status = 200, description = "Replaced by a higher source version, or a repeat of the stored one", body = OrderView),
        (status = 400, description = "A malformed id or body", body = super::openapi::ErrorBody),
        (status = 401, body = super::openapi::ErrorBody),
        (status = 403, description = "Not a shop or admin account", body = super::openapi::ErrorBody),
        (status = 409, description = "A stale or conflicting source version", body = super::openapi::ErrorBody),
        (status = 413, description = "A body over 256 KiB", body = super::openapi::ErrorBody),
        (status = 422, description = "An invalid order: the message names the field", body = super::openapi::ErrorBody)))]
pub async fn upsert(
    State(state): State<AppState>,
    ShopCaller(feeder): ShopCaller,
    ApiPath(external_id): ApiPath<String>,
    ApiJson(body): ApiJson<OrderUpsert>,
) -> Result<(StatusCode, Json<OrderView>), ApiError> {
    let engine = &state.engine;
    let outcome = engine
        .orders
        .upsert_order(&feeder, &external_id, body)
        .await
        .map_err(order_error)?;
    let status = match outcome.change {
        Change::Created => StatusCode::CREATED,
        Change::Updated | Change::Unchanged => StatusCode::OK,
    };
    Ok((status, Json(OrderView::of(&outcome.order)?)))
}

/// The order as stored, with every refund booked on it and what is still
/// refundable.
#[utoipa::path(get, path = "/api/v1/orders/{external_id}", tag = "orders",
    params(("external_id" = String, Path, description = "The shop's order id")),
    responses(
        (status = 200, body = OrderView),
        (status = 401, body = super::openapi::ErrorBody),
        (status = 403, body = super::openapi::ErrorBody),
        (status = 404, body = super::openapi::ErrorBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    ShopCaller(feeder): ShopCaller,
    ApiPath(external_id): ApiPath<String>,
) -> Result<Json<OrderView>, ApiError> {
    let record = state
        .engine
        .orders
        .get_order(&feeder, &external_id)
        .await
        .map_err(order_error)?;
    Ok(Json(OrderView::of(&record)?))
}

/// Record a refund made through another channel (support desk, the
/// provider's dashboard). Booked on the order like Countersign's own, so
/// proposals see it; a repeat of the same refund id and content answers the
/// same (200, nothing written), other content under that id is refused (409).
#[utoipa::path(post, path = "/api/v1/orders/{external_id}/refunds", tag = "orders",
    params(("external_id" = String, Path, description = "The shop's order id")),
    request_body = RecordRefundSchema,
    responses(
        (status = 201, description = "Recorded", body = RefundView),
        (status = 200, description = "Recorded before with the same content", body = RefundView),
        (status = 401, body = super::openapi::ErrorBody),
        (status = 403, body = super::openapi::ErrorBody),
        (status = 404, description = "No such order", body = super::openapi::ErrorBody),
        (status = 409, description = "The refund id is recorded with other content", body = super::openapi::ErrorBody),
        (status = 413, body = super::openapi::ErrorBody),
        (status = 422, description = "Another currency than the order's, or more than is still refundable", body = super::openapi::ErrorBody)))]
pub async fn record_refund(
    State(state): State<AppState>,
    ShopCaller(feeder): ShopCaller,
    ApiPath(external_id): ApiPath<String>,
    ApiJson(body): ApiJson<RecordRefund>,
) -> Result<(StatusCode, Json<RefundView>), ApiError> {
    let RecordedRefund {
        refund,
        newly_recorded,
        ..
    } = state
        .engine
        .orders
        .record_refund(&feeder, &external_id, body)
        .await
        .map_err(order_error)?;
    let status = if newly_recorded {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(RefundView::of(&refund))))
}

pub(super) fn order_error(error: OrderError) -> ApiError {
    let status = match &error {
        OrderError::NotAllowed => StatusCode::FORBIDDEN,
        OrderError::InvalidExternalId(_) => StatusCode::BAD_REQUEST,
        OrderError::OrderNotFound(_) => StatusCode::NOT_FOUND,
        OrderError::StaleVersion { .. }
        | OrderError::ConflictingContent { .. }
        | OrderError::RefundConflict(_) => StatusCode::CONFLICT,
        OrderError::Invalid(_)
        | OrderError::UnknownCustomer(_)
        | OrderError::NotACustomer(_)
        | OrderError::PaymentReference(_)
        | OrderError::OverRefund { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        OrderError::Storage(storage::StorageError::Unavailable(cause)) => {
            tracing::warn!(%cause, "database unavailable for an order write");
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "the database is briefly unavailable; send the same request again",
            );
        }
        OrderError::Storage(inner) => return ApiError::internal(inner),
    };
    let code = match status {
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::CONFLICT => "conflict",
        _ => "invalid",
    };
    ApiError::new(status, code, error.to_string())
}

/// Documents the body of `PUT /api/v1/orders/{external_id}`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "exists to document the request body in OpenAPI")]
pub struct OrderUpsertSchema {
    /// Optional: the path names the order; if given it must agree.
    pub external_id: Option<String>,
    /// The shop's version of the order, at least 1; a higher one replaces it.
    pub source_version: i64,
    /// The customer's Countersign user name (a user with the customer role).
    pub customer: String,
    pub placed_at: DateTime<Utc>,
    /// ISO 4217, e.g. `EUR`.
    pub currency: String,
    /// 1 to 500 lines.
    pub lines: Vec<LineSchema>,
    /// Default 0.
    pub shipping_minor: Option<i64>,
    /// Default 0.
    pub discount_minor: Option<i64>,
    /// Must equal the lines + shipping_minor − discount_minor.
    pub total_minor: i64,
    /// The charge at the configured provider (Stripe: `pi_…`, `ch_…`, `py_…`).
    pub payment_reference: String,
    /// Delivery events; the status and delivery time derive from them.
    pub events: Option<Vec<DeliveryEventSchema>>,
}

#[derive(ToSchema)]
#[expect(dead_code, reason = "exists to document the request body in OpenAPI")]
pub struct LineSchema {
    pub sku: String,
    pub description: String,
    /// 1 to 100000.
    pub quantity: i64,
    pub unit_price_minor: i64,
}

#[derive(ToSchema)]
#[expect(dead_code, reason = "exists to document the request body in OpenAPI")]
pub struct DeliveryEventSchema {
    /// `shipped`, `delivered` or `returned`.
    pub kind: String,
    /// UTC; not before `placed_at`, not in the future.
    pub at: DateTime<Utc>,
}

/// Documents the body of `POST /api/v1/orders/{external_id}/refunds`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "exists to document the request body in OpenAPI")]
pub struct RecordRefundSchema {
    /// The shop's id for the refund: recording it again is a no-op.
    pub refund_id: String,
    /// Positive; at most what is still refundable on the order.
    pub amount_minor: i64,
    /// The order's currency.
    pub currency: String,
    /// Where the refund was made: `support_desk`, `stripe_dashboard`, …
    pub channel: String,
    /// The shop's reference: a ticket, the provider's refund id.
    pub reference: String,
    pub created_at: DateTime<Utc>,
}
