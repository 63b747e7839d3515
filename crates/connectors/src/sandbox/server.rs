//! The sandbox's HTTP API (see the crate README for the full contract).

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::handler::Handler;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter, on};
use axum::{Json, Router};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::auth::require_secret_key;
use super::execution::Executed;
use super::faults::FaultMode;
use super::idempotency::{RefundParams, StoredOutcome};
use super::state::{ChargeCreation, Gate, SandboxState};
use super::wire::{CreateChargeBody, CreateRefundBody, ErrorBody, FaultUpdate, RefundList};

/// Header carrying the idempotency key.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Header set to `true` on a replayed answer.
pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";
const MAX_KEY_LEN: usize = 255;
const MAX_REFERENCE_LEN: usize = 255;

/// One route of the sandbox API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// `GET`, `POST` or `PUT`.
    pub method: &'static str,
    /// As routed, with `{name}` path parameters (`/v1/charges/{id}`).
    pub path: &'static str,
}

type Route = (Endpoint, MethodRouter<SandboxState>);

fn route<H, T>(method: &'static str, path: &'static str, handler: H) -> Route
where
    H: Handler<T, SandboxState>,
    T: 'static,
{
    let filter = match method {
        "POST" => MethodFilter::POST,
        "PUT" => MethodFilter::PUT,
        _ => MethodFilter::GET,
    };
    (Endpoint { method, path }, on(filter, handler))
}

/// The single table the router is built from, so [`endpoints`] lists every
/// route and a test can prove each one demands the key.
fn routes() -> Vec<Route> {
    vec![
        route("POST", "/v1/refunds", create_refund),
        route("GET", "/v1/refunds", list_refunds),
        route("GET", "/v1/refunds/by-key/{key}", refund_by_key),
        route("POST", "/v1/charges", create_charge),
        route("GET", "/v1/charges/{id}", get_charge),
        route("GET", "/v1/ledger", ledger),
        route("GET", "/v1/faults", faults),
        route("PUT", "/v1/faults", replace_faults),
    ]
}

/// Every route of [`router`].
#[must_use]
pub fn endpoints() -> Vec<Endpoint> {
    routes().into_iter().map(|(endpoint, _)| endpoint).collect()
}

/// The sandbox API, ready to be nested (`Router::nest("/sandbox/payments",
/// sandbox::router(state))`) or served alone. Every request must carry
/// `Authorization: Bearer <SandboxState::secret_key>`.
pub fn router(state: SandboxState) -> Router {
    routes()
        .into_iter()
        .fold(Router::new(), |router, (endpoint, handler)| {
            router.route(endpoint.path, handler)
        })
        // Before the layer, so an unrouted path also needs the key.
        .fallback(unrouted)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_secret_key,
        ))
        .with_state(state)
}

async fn unrouted(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "resource_missing",
        format!("Unrecognized request URL ({method}: {})", uri.path()),
    )
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
    let params_reference = params.payment_reference.clone();
    let gate = state.admit(&key, params);
    if let Some(FaultMode::Latency { ms }) = fault {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    let response = match gate {
        Gate::Execute(ticket) => {
            // The key stays in flight while the charge source is asked, so
            // a concurrent resend still sees 409.
            state.ensure_charge(ticket.payment_reference()).await;
            match ticket.execute() {
                Executed::Stored(outcome) => stored_response(outcome, false),
                Executed::NoSuchCharge => no_such_charge(&params_reference),
            }
        }
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
    check_currency(&body.currency)?;
    Ok(RefundParams {
        payment_reference: body.payment_reference,
        amount_minor: body.amount_minor,
        currency: body.currency.to_ascii_uppercase(),
        metadata: body.metadata,
    })
}

fn check_currency(currency: &str) -> Result<(), String> {
    if currency.len() != 3 || !currency.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(format!(
            "currency must be a three-letter ISO 4217 code, got {currency:?}"
        ));
    }
    Ok(())
}

/// What the sandbox can hold as a payment reference: the rule
/// `SandboxProvider::check_reference` applies before anything is sent.
pub(crate) fn check_reference(reference: &str) -> Result<(), String> {
    if reference.is_empty() || reference.len() > MAX_REFERENCE_LEN {
        return Err(format!(
            "payment reference {reference:?} must be 1 to {MAX_REFERENCE_LEN} characters"
        ));
    }
    if !reference.chars().all(|c| c.is_ascii_graphic()) {
        return Err(format!(
            "payment reference {reference:?} must be printable ASCII without whitespace"
        ));
    }
    Ok(())
}

fn stored_response(outcome: StoredOutcome, replayed: bool) -> Response {
    let mut response = match outcome {
        StoredOutcome::Refunded(refund) => (StatusCode::OK, Json(refund)).into_response(),
        StoredOutcome::Declined(body) => (StatusCode::PAYMENT_REQUIRED, Json(body)).into_response(),
        StoredOutcome::Refused(body) => (StatusCode::BAD_REQUEST, Json(body)).into_response(),
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

fn no_such_charge(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "resource_missing",
        format!("No such charge: '{id}'"),
    )
}

async fn create_charge(State(state): State<SandboxState>, body: Bytes) -> Response {
    let body = match parse_json::<CreateChargeBody>(&body).and_then(validate_charge) {
        Ok(body) => body,
        Err(message) => return invalid(message),
    };
    let id = body
        .id
        .unwrap_or_else(|| format!("pay_sbx_{}", uuid::Uuid::new_v4().simple()));
    match state.create_charge(&id, body.amount_minor, &body.currency) {
        ChargeCreation::Created(charge) | ChargeCreation::Existing(charge) => {
            Json(charge).into_response()
        }
        ChargeCreation::Conflict(message) => error(
            StatusCode::CONFLICT,
            "invalid_request_error",
            "resource_already_exists",
            message,
        ),
    }
}

fn validate_charge(body: CreateChargeBody) -> Result<CreateChargeBody, String> {
    if let Some(id) = &body.id {
        check_reference(id)?;
    }
    if body.amount_minor <= 0 {
        return Err(format!(
            "amount_minor must be greater than 0, got {}",
            body.amount_minor
        ));
    }
    check_currency(&body.currency)?;
    Ok(body)
}

async fn get_charge(State(state): State<SandboxState>, Path(id): Path<String>) -> Response {
    state.lookup_pause().await;
    match state.charge(&id).await {
        Some(charge) => Json(charge).into_response(),
        None => no_such_charge(&id),
    }
}
