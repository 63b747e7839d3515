//! JSON-RPC 2.0 as the A2A binding uses it: the request checked before any
//! method runs (the `A2A-Version` header, valid JSON, a request object), and
//! answers with A2A's error codes. Every answer is HTTP 200 with a JSON-RPC
//! body, errors included, as JSON-RPC over HTTP clients expect; only a
//! request that fails authentication is HTTP 401.

use super::VERSION;
use axum::Json;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use gateway::Refusal;
use serde_json::{Value, json};

/// A request that passed the envelope checks.
pub(super) struct Call {
    pub id: Value,
    pub method: String,
    pub params: Value,
}

/// The `@type` of the error detail A2A 1.0 puts first in `error.data`.
const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// A JSON-RPC error: A2A's code and reason, a sentence, and (for a refused
/// task) Countersign's own reason code in the detail's metadata.
#[derive(Debug)]
pub(super) struct RpcError {
    code: i64,
    /// A2A's reason for the code (`INVALID_PARAMS`, `TASK_NOT_FOUND`, …).
    reason: &'static str,
    message: String,
    countersign_reason: Option<&'static str>,
    /// Set for an unauthenticated request: HTTP 401 with a Bearer
    /// challenge, as A2A leaves authentication to the transport.
    unauthenticated: bool,
}

impl RpcError {
    fn new(code: i64, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            countersign_reason: None,
            unauthenticated: false,
        }
    }

    /// The request needs a peer's bearer token and had none that verifies.
    pub fn unauthenticated(why: &str) -> Self {
        Self {
            unauthenticated: true,
            ..Self::new(
                -32600,
                "INVALID_REQUEST",
                format!("authentication required: {why}"),
            )
        }
    }

    pub fn invalid_params(why: &str) -> Self {
        Self::new(-32602, "INVALID_PARAMS", why)
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(-32601, "METHOD_NOT_FOUND", format!("no method {method:?}"))
    }

    pub fn internal(why: &str) -> Self {
        Self::new(
            -32603,
            "INTERNAL_ERROR",
            format!("the task could not be recorded ({why}); nothing was accepted, send it again"),
        )
    }

    pub fn task_not_found(id: &str) -> Self {
        Self::new(-32001, "TASK_NOT_FOUND", format!("no task {id:?}"))
    }

    pub fn not_cancelable(id: &str, state: &str) -> Self {
        Self::new(
            -32002,
            "TASK_NOT_CANCELABLE",
            format!("task {id:?} is {state} and can no longer be canceled"),
        )
    }

    pub fn unsupported(method: &str) -> Self {
        Self::new(
            -32004,
            "UNSUPPORTED_OPERATION",
            format!("{method} is not supported by this group"),
        )
    }

    /// A subscription to a task that has ended: nothing more will happen
    /// to it (the spec's answer for a terminal task).
    pub fn task_ended(id: &str, state: &str) -> Self {
        Self::new(
            -32004,
            "UNSUPPORTED_OPERATION",
            format!("task {id:?} is {state}: it will not change again (GetTask reads it)"),
        )
    }

    pub fn push_not_supported() -> Self {
        Self::new(
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            "push notifications are not supported by this group",
        )
    }

    /// The message does not use the extension this group requires.
    pub fn extension_required(why: &str) -> Self {
        Self::new(-32008, "EXTENSION_SUPPORT_REQUIRED", why)
    }

    /// A task the gateway refused: invalid params, with the refusal's
    /// stable code as `countersignReason` in the detail's metadata.
    pub fn refused(refusal: &Refusal) -> Self {
        Self {
            countersign_reason: Some(refusal.code()),
            ..Self::invalid_params(&refusal.to_string())
        }
    }
}

/// Checks the version header and the JSON-RPC envelope.
///
/// # Errors
/// The request id (null when unknown) and the error to answer.
pub(super) fn parse(headers: &HeaderMap, body: &[u8]) -> Result<Call, (Value, RpcError)> {
    // A missing header means 0.3 (the spec's rule); 1.0 with any patch is 1.0.
    let version = headers
        .get("a2a-version")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .unwrap_or("0.3");
    let speaks = version == VERSION
        || version
            .strip_prefix("1.0.")
            .is_some_and(|patch| !patch.is_empty() && patch.chars().all(|c| c.is_ascii_digit()));
    if !speaks {
        return Err((
            Value::Null,
            RpcError::new(
                -32009,
                "VERSION_NOT_SUPPORTED",
                format!("A2A version {version} is not supported; send A2A-Version: {VERSION}"),
            ),
        ));
    }
    let request: Value = serde_json::from_slice(body).map_err(|e| {
        (
            Value::Null,
            RpcError::new(-32700, "PARSE_ERROR", format!("the body is not JSON: {e}")),
        )
    })?;
    let id = match &request["id"] {
        id @ (Value::String(_) | Value::Number(_)) => id.clone(),
        _ => Value::Null,
    };
    let invalid = |why: &str| {
        (
            id.clone(),
            RpcError::new(-32600, "INVALID_REQUEST", why.to_owned()),
        )
    };
    if request["jsonrpc"] != "2.0" {
        return Err(invalid(
            "a JSON-RPC 2.0 request object is required (\"jsonrpc\": \"2.0\")",
        ));
    }
    if id.is_null() {
        return Err(invalid("the request needs an id (a string or a number)"));
    }
    let Some(method) = request["method"].as_str() else {
        return Err(invalid("the request needs a method (a string)"));
    };
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    if !params.is_object() {
        return Err((
            id,
            RpcError::invalid_params("params (an object) is required"),
        ));
    }
    Ok(Call {
        id,
        method: method.to_owned(),
        params,
    })
}

pub(super) fn result(id: Value, result: Value) -> Response {
    Json(json!({ "jsonrpc": "2.0", "id": id, "result": result })).into_response()
}

/// The JSON-RPC error object for `error` (its `code`, `message` and `data`).
pub(super) fn error_body(error: &RpcError) -> Value {
    let mut metadata = json!({});
    if let Some(reason) = error.countersign_reason {
        metadata["countersignReason"] = json!(reason);
    }
    let detail = json!({
        "@type": ERROR_INFO_TYPE,
        "reason": error.reason,
        "domain": "a2a-protocol.org",
        "metadata": metadata,
    });
    json!({ "code": error.code, "message": error.message, "data": [detail] })
}

/// An error answer; `data` holds A2A's `ErrorInfo` detail, as `a2a-sdk`
/// clients read it.
pub(super) fn error(id: Value, error: RpcError) -> Response {
    let body = error_body(&error);
    let answer = Json(json!({ "jsonrpc": "2.0", "id": id, "error": body }));
    if error.unauthenticated {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            answer,
        )
            .into_response();
    }
    answer.into_response()
}
