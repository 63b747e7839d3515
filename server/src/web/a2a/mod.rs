//! A2A 1.0 over JSON-RPC: other agent groups send this group tasks here.
//! Mounted only when `gateway_group` is set, outside the session, identity
//! and CSRF layers (a peer has no session; it proves itself by the
//! signature on the task envelope, checked by `engine::gateway`).
//!
//! What it speaks: `SendMessage` and `SendStreamingMessage` carrying a
//! signed Countersign task envelope in the message's metadata under
//! [`EXTENSION`], `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`
//! (server-sent events), and the agent card. `GetExtendedAgentCard`
//! answers "unsupported operation"; push notifications are not supported.

mod card;
mod rpc;
mod stream;
mod task;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use engine::gateway::{CancelError, Gateway, ListError, ReceiveError, TaskQuery};
use rpc::{Call, RpcError};
use serde_json::{Value, json};

pub use gateway::EXTENSION;

/// The A2A version this group speaks.
pub const VERSION: &str = "1.0";

/// A task envelope, with a few levels of parents, is a few KB; this leaves
/// room without letting a peer make the server buffer megabytes.
const MAX_BODY_BYTES: usize = 256 * 1024;

#[derive(Clone)]
pub struct A2aState {
    /// This group's gateway: its receiving end, the kinds it accepts, and
    /// its own keys (published in the card for peers' admins to pin).
    pub gateway: Gateway,
    /// Where peers reach this group (the card's interface URL).
    pub public_url: String,
}

/// The A2A routes, with their state applied, to merge into any router.
pub fn router<S: Clone + Send + Sync + 'static>(state: A2aState) -> Router<S> {
    Router::new()
        .route(
            "/a2a",
            post(rpc_call).layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        )
        .route("/.well-known/agent-card.json", get(card::agent_card))
        .with_state(state)
}

async fn rpc_call(State(state): State<A2aState>, headers: HeaderMap, body: Bytes) -> Response {
    let call = match rpc::parse(&headers, &body) {
        Ok(call) => call,
        Err((id, error)) => return rpc::error(id, error),
    };
    match call.method.as_str() {
        "SubscribeToTask" => return stream::subscribe(&state, call, &headers).await,
        "SendStreamingMessage" => return stream::send(&state, call, &headers).await,
        _ => {}
    }
    let answer = match call.method.as_str() {
        "SendMessage" => send_message(&state, &call, &headers).await,
        "GetTask" => get_task(&state, &call, &headers).await,
        "CancelTask" => cancel_task(&state, &call, &headers).await,
        "ListTasks" => list_tasks(&state, &call, &headers).await,
        "GetExtendedAgentCard" => Err(RpcError::unsupported(&call.method)),
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => Err(RpcError::push_not_supported()),
        other => Err(RpcError::method_not_found(other)),
    };
    match answer {
        Ok(result) => rpc::result(call.id, result),
        Err(error) => rpc::error(call.id, error),
    }
    .into_response()
}

async fn send_message(
    state: &A2aState,
    call: &Call,
    headers: &HeaderMap,
) -> Result<Value, RpcError> {
    let view = receive(state, call, headers).await?;
    Ok(json!({ "task": task::to_a2a(&view) }))
}

/// The task a message carries, received (checked, written once): a signed
/// envelope in the extension, or, from a plain A2A peer that shows the
/// secret an admin issued it, the message's data part.
async fn receive(
    state: &A2aState,
    call: &Call,
    headers: &HeaderMap,
) -> Result<engine::gateway::InboxTaskView, RpcError> {
    let message = &call.params["message"];
    if !message.is_object() {
        return Err(RpcError::invalid_params(
            "params.message (an object) is required",
        ));
    }
    let envelope = &message["metadata"][EXTENSION];
    let received = if envelope.is_null() {
        let from = plain_peer(state, headers).await?;
        state
            .gateway
            .receiver
            .receive_plain(&from, plain_task(message)?)
            .await
    } else {
        state.gateway.receiver.receive(envelope).await
    };
    match received {
        Ok(received) => Ok(received.task),
        Err(ReceiveError::Refused(refusal)) => Err(RpcError::refused(&refusal)),
        Err(error) => Err(RpcError::internal(&error.to_string())),
    }
}

/// The plain A2A peer sending a message without an envelope, known by its
/// secret; anyone else is told how to send a task here.
async fn plain_peer(state: &A2aState, headers: &HeaderMap) -> Result<gateway::GroupName, RpcError> {
    match bearer(headers) {
        Some(token) if token.starts_with(engine::gateway::PEER_SECRET_PREFIX) => {
            match state.gateway.receiver.authenticate(token).await {
                Ok(group) => Ok(group),
                Err(ReceiveError::Unauthenticated(why)) => Err(RpcError::unauthenticated(&why)),
                Err(error) => Err(RpcError::internal(&error.to_string())),
            }
        }
        _ => Err(RpcError::extension_required(&format!(
            "this group takes signed Countersign tasks (the signed envelope in \
             params.message.metadata[\"{EXTENSION}\"]), or, from a plain A2A peer, a message \
             with Authorization: Bearer <the secret this group's admin issued it>"
        ))),
    }
}

/// What a plain peer's message asks: its id (the task key), the kind it
/// names in its metadata, and its first data part (the input).
fn plain_task(message: &Value) -> Result<engine::gateway::PlainTask, RpcError> {
    let message_id = message["messageId"]
        .as_str()
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            RpcError::invalid_params("params.message.messageId (a string) is required")
        })?;
    let kind = match &message["metadata"]["kind"] {
        Value::Null => None,
        Value::String(kind) => Some(kind.clone()),
        _ => {
            return Err(RpcError::invalid_params(
                "params.message.metadata.kind must be a string",
            ));
        }
    };
    let input = message["parts"]
        .as_array()
        .and_then(|parts| parts.iter().find_map(|part| part.get("data").filter(|d| d.is_object())))
        .cloned()
        .ok_or_else(|| {
            RpcError::invalid_params(
                "the message carries no data part: the task's input is a JSON object in a data part",
            )
        })?;
    Ok(engine::gateway::PlainTask {
        message_id: message_id.to_owned(),
        kind,
        input,
    })
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
}

/// The peer group making the request, proven by a bearer token signed by
/// its pinned key (`gateway::peer_token`), or a plain peer's secret.
async fn caller(state: &A2aState, headers: &HeaderMap) -> Result<gateway::GroupName, RpcError> {
    let token = bearer(headers).ok_or_else(|| {
        RpcError::unauthenticated(
            "send Authorization: Bearer <a token signed by your group's key, or your peer secret>",
        )
    })?;
    match state.gateway.receiver.authenticate(token).await {
        Ok(caller) => Ok(caller),
        Err(ReceiveError::Unauthenticated(why)) => Err(RpcError::unauthenticated(&why)),
        Err(error) => Err(RpcError::internal(&error.to_string())),
    }
}

fn task_id(call: &Call) -> Result<&str, RpcError> {
    call.params["id"]
        .as_str()
        .ok_or_else(|| RpcError::invalid_params("params.id (the task id, a string) is required"))
}

/// A task's state, for the group that sent it; to any other group the task
/// does not exist.
async fn get_task(state: &A2aState, call: &Call, headers: &HeaderMap) -> Result<Value, RpcError> {
    let caller = caller(state, headers).await?;
    let id = task_id(call)?;
    match state.gateway.receiver.task_for(&caller, id).await {
        Ok(Some(view)) => Ok(task::to_a2a(&view)),
        Ok(None) => Err(RpcError::task_not_found(id)),
        Err(error) => Err(RpcError::internal(&error.to_string())),
    }
}

/// Cancels a task not yet answered, for the group that sent it.
async fn cancel_task(
    state: &A2aState,
    call: &Call,
    headers: &HeaderMap,
) -> Result<Value, RpcError> {
    let caller = caller(state, headers).await?;
    let id = task_id(call)?;
    match state.gateway.receiver.cancel(&caller, id).await {
        Ok(view) => Ok(task::to_a2a(&view)),
        Err(CancelError::NotFound(_)) => Err(RpcError::task_not_found(id)),
        Err(CancelError::NotCancelable { state, .. }) => Err(RpcError::not_cancelable(id, &state)),
        Err(CancelError::Storage(error)) => Err(RpcError::internal(&error.to_string())),
    }
}

/// The caller's own tasks, a page at a time (`contextId`, `status`,
/// `statusTimestampAfter`, `pageSize`, `pageToken`; artifacts only with
/// `includeArtifacts`).
async fn list_tasks(state: &A2aState, call: &Call, headers: &HeaderMap) -> Result<Value, RpcError> {
    let caller = caller(state, headers).await?;
    let query = task_query(&call.params)?;
    let with_artifacts = match &call.params["includeArtifacts"] {
        Value::Null => false,
        Value::Bool(include) => *include,
        _ => {
            return Err(RpcError::invalid_params(
                "includeArtifacts must be a boolean",
            ));
        }
    };
    let page = match state.gateway.receiver.list_for(&caller, &query).await {
        Ok(page) => page,
        Err(ListError::Storage(error)) => return Err(RpcError::internal(&error.to_string())),
        Err(invalid) => return Err(RpcError::invalid_params(&invalid.to_string())),
    };
    let tasks: Vec<Value> = page
        .tasks
        .iter()
        .map(|view| {
            let mut task = task::to_a2a(view);
            if !with_artifacts && let Some(fields) = task.as_object_mut() {
                fields.remove("artifacts");
            }
            task
        })
        .collect();
    Ok(json!({
        "tasks": tasks,
        "nextPageToken": page.next_page_token.unwrap_or_default(),
        "pageSize": page.page_size,
        "totalSize": page.total,
    }))
}

fn task_query(params: &Value) -> Result<TaskQuery, RpcError> {
    let text = |name: &str| -> Result<Option<String>, RpcError> {
        match &params[name] {
            Value::Null => Ok(None),
            Value::String(text) if text.is_empty() => Ok(None),
            Value::String(text) => Ok(Some(text.clone())),
            _ => Err(RpcError::invalid_params(&format!(
                "{name} must be a string"
            ))),
        }
    };
    let state = match text("status")? {
        Some(name) => Some(
            task::from_a2a_state(&name)
                .ok_or_else(|| {
                    RpcError::invalid_params(&format!(
                        "status {name} is not a task state (TASK_STATE_WORKING, …)"
                    ))
                })?
                .to_owned(),
        ),
        None => None,
    };
    let updated_since = match text("statusTimestampAfter")? {
        Some(at) => Some(
            chrono::DateTime::parse_from_rfc3339(&at)
                .map_err(|e| {
                    RpcError::invalid_params(&format!(
                        "statusTimestampAfter must be an RFC 3339 time: {e}"
                    ))
                })?
                .to_utc(),
        ),
        None => None,
    };
    let page_size = match &params["pageSize"] {
        Value::Null => None,
        size => Some(size.as_u64().ok_or_else(|| {
            RpcError::invalid_params("pageSize must be a whole number from 1 to 100")
        })?),
    };
    Ok(TaskQuery {
        context_id: text("contextId")?,
        state,
        updated_since,
        page_size,
        page_token: text("pageToken")?,
    })
}
