//! The sandbox's HTTP API (see the crate README for the full contract).

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::faults::FaultMode;
use super::idempotency::{RefundParams, StoredOutcome};
use super::state::{Gate, SandboxState};
use super::wire::{CreateRefundBody, ErrorBody, FaultUpdate, RefundList};

/// Header carrying the idempotency key.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Header set to `true` on a replayed answer.
pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";
const MAX_KEY_LEN: usize = 255;

/// The sandbox API, ready to be nested (`Router::nest("/sandbox/payments",
/// sandbox::router(state))`) or served alone.
pub fn router(state: SandboxState) -> Router {
    Router::new()
        .route("/v1/refunds", get(list_refunds).post(create_refund))
        .route("/v1/refunds/by-key/{key}", get(refund_by_key))
        .route("/v1/ledger", get(ledger))
        .route("/v1/faults", get(faults).put(replace_faults))
        .with_state(state)
}

fn error(status: StatusCode, kind: &str, code: &str, message: impl Into<String>) -> Response {
    (status, Json(ErrorBody::new(kind, code, message))).into_response()
}

fn invalid(message: impl Into<String>) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "invalid_request_error",
        "parameter_invalid",
        message,
    )
}

/// Errors below are messages for a 400 (a `Response` is too large to pass
/// around in a `Result`).
fn parse_json<T: DeserializeOwned>(body: &Bytes) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|err| format!("invalid JSON body: {err}"))
}

async fn create_refund(
    State(state): State<SandboxState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = match idempotency_key(&headers) {
        Ok(key) => key,
        Err(message) => return invalid(message),
    };
    // Run to completion even if the client hangs up: a real provider keeps
    // executing after the caller's timeout, which is the point of the faults.
    match tokio::spawn(process_refund(state, key, body)).await {
        Ok(response) => response,
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "internal_error",
            "the sandbox failed while processing the refund",
        ),
    }
}

fn idempotency_key(headers: &HeaderMap) -> Result<String, String> {
    let Some(value) = headers.get(IDEMPOTENCY_KEY) else {
        return Err("the Idempotency-Key header is required".to_owned());
    };
    let key = value
        .to_str()
        .map_err(|_| "the Idempotency-Key header must be visible ASCII".to_owned())?
        .trim();
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(format!(
            "the Idempotency-Key header must be 1 to {MAX_KEY_LEN} characters"
        ));
    }
    Ok(key.to_owned())
}

async fn process_refund(state: SandboxState, key: String, body: Bytes) -> Response {
    let fault = state.decide_fault(&key);
    match fault {
        Some(FaultMode::RateLimited) => {
            let mut response = error(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "rate_limit",
                "too many requests (injected fault)",
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        }
        Some(FaultMode::ServerError) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "api_error",
                "internal_error",
                "internal error before execution (injected fault)",
            );
        }
        Some(FaultMode::TimeoutBeforeExecute) => {
            tokio::time::sleep(state.hang()).await;
            return error(
                StatusCode::GATEWAY_TIMEOUT,
                "api_error",
                "timeout",
                "timed out before execution (injected fault)",
            );
        }
        Some(FaultMode::ExecuteThenTimeout | FaultMode::Latency { .. }) | None => {}
    }

    let params = match parse_json::<CreateRefundBody>(&body).and_then(validate) {
        Ok(params) => params,
        Err(message) => return invalid(message),
    };
    // The key is marked in flight before any latency, so a concurrent resend
    // during the delay sees 409.
    let gate = state.admit(&key, params);
    if let Some(FaultMode::Latency { ms }) = fault {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    let response = match gate {
        Gate::Execute(ticket) => stored_response(ticket.execute(), false),
        Gate::Replay(outcome) => stored_response(outcome, true),
        Gate::InFlight => error(
            StatusCode::CONFLICT,
            "idempotency_error",
            "idempotency_key_in_use",
            format!("a request with idempotency key {key:?} is still being processed; retry later"),
        ),
        Gate::Conflict { message } => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency_error",
            "idempotency_key_reused",
            message,
        ),
    };
    if fault == Some(FaultMode::ExecuteThenTimeout) {
        tokio::time::sleep(state.hang()).await;
    }
    response
}

fn validate(body: CreateRefundBody) -> Result<RefundParams, String> {
    if body.payment_reference.trim().is_empty() {
        return Err("payment_reference must not be empty".to_owned());
    }
    if body.amount_minor <= 0 {
        return Err(format!(
            "amount_minor must be greater than 0, got {}",
            body.amount_minor
        ));
    }
    if body.currency.len() != 3 || !body.currency.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(format!(
            "currency must be a three-letter ISO 4217 code, got {:?}",
            body.currency
        ));
    }
    Ok(RefundParams {
        payment_reference: body.payment_reference,
        amount_minor: body.amount_minor,
        currency: body.currency.to_ascii_uppercase(),
        metadata: body.metadata,
    })
}

fn stored_response(outcome: StoredOutcome, replayed: bool) -> Response {
    let mut response = match outcome {
        StoredOutcome::Refunded(refund) => (StatusCode::OK, Json(refund)).into_response(),
        StoredOutcome::Declined(body) => (StatusCode::PAYMENT_REQUIRED, Json(body)).into_response(),
    };
    if replayed {
        response
            .headers_mut()
            .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    }
    response
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    idempotency_key: Option<String>,
}

async fn list_refunds(
    State(state): State<SandboxState>,
    Query(query): Query<ListQuery>,
) -> Json<RefundList> {
    state.lookup_pause().await;
    Json(RefundList {
        data: state.refunds(query.idempotency_key.as_deref()),
    })
}

async fn refund_by_key(State(state): State<SandboxState>, Path(key): Path<String>) -> Response {
    state.lookup_pause().await;
    match state.refund_for_key(&key) {
        Some(refund) => Json(refund).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "refund_not_found",
            format!("no refund was made under idempotency key {key:?}"),
        ),
    }
}

async fn ledger(State(state): State<SandboxState>) -> Response {
    state.lookup_pause().await;
    Json(state.ledger()).into_response()
}

async fn faults(State(state): State<SandboxState>) -> Response {
    Json(state.fault_status()).into_response()
}

async fn replace_faults(State(state): State<SandboxState>, body: Bytes) -> Response {
    let update = match parse_json::<FaultUpdate>(&body) {
        Ok(update) => update,
        Err(message) => return invalid(message),
    };
    match state.set_faults(update) {
        Ok(status) => Json(status).into_response(),
        Err(err) => invalid(err.to_string()),
    }
}
