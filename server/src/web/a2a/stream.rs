//! The streaming methods: `SubscribeToTask` (a task the caller sent, not
//! ended) and `SendStreamingMessage` (a task sent and followed at once).
//! Server-sent events, each a JSON-RPC response with the request's id: the
//! task as it is first, then a status update at each step, and its result
//! as an artifact update when it completes; the stream ends with the task.

use super::rpc::{self, Call, RpcError};
use super::{A2aState, caller, task, task_id};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use engine::gateway::InboxTaskView;
use gateway::GroupName;
use serde_json::{Value, json};

/// `SubscribeToTask`: the caller's task, followed until it ends.
pub(super) async fn subscribe(state: &A2aState, call: Call, headers: &HeaderMap) -> Response {
    let opened = async {
        let caller = caller(state, headers).await?;
        let id = task_id(&call)?;
        let view = match state.gateway.receiver.task_for(&caller, id).await {
            Ok(Some(view)) => view,
            Ok(None) => return Err(RpcError::task_not_found(id)),
            Err(error) => return Err(RpcError::internal(&error.to_string())),
        };
        if view.is_final() {
            return Err(RpcError::task_ended(id, &view.state));
        }
        Ok((caller, view))
    }
    .await;
    match opened {
        Ok((caller, view)) => follow(state.clone(), call.id, caller, view),
        Err(error) => rpc::error(call.id, error),
    }
}

/// `SendMessage`'s checks and answer, then the task followed as
/// [`subscribe`] follows it; a task resent after it ended streams once.
pub(super) async fn send(state: &A2aState, call: Call, headers: &HeaderMap) -> Response {
    match super::receive(state, &call, headers).await {
        Ok(view) => match GroupName::parse(&view.sender_group) {
            Ok(sender) => follow(state.clone(), call.id, sender, view),
            Err(error) => rpc::error(call.id, RpcError::internal(&error.to_string())),
        },
        Err(error) => rpc::error(call.id, error),
    }
}

fn event(id: &Value, result: Value) -> Event {
    sse(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

fn error_event(id: &Value, error: &RpcError) -> Event {
    sse(json!({ "jsonrpc": "2.0", "id": id, "error": rpc::error_body(error) }))
}

fn sse(response: Value) -> Event {
    Event::default()
        .json_data(response)
        .unwrap_or_else(|_| Event::default().data("{}"))
}

fn status_update(view: &InboxTaskView) -> Value {
    let task = task::to_a2a(view);
    json!({ "statusUpdate": {
        "taskId": task["id"],
        "contextId": task["contextId"],
        "status": task["status"],
    } })
}

fn artifact_update(view: &InboxTaskView) -> Option<Value> {
    let task = task::to_a2a(view);
    let artifact = task["artifacts"].get(0)?.clone();
    Some(json!({ "artifactUpdate": {
        "taskId": task["id"],
        "contextId": task["contextId"],
        "artifact": artifact,
        "lastChunk": true,
    } }))
}

fn follow(state: A2aState, id: Value, caller: GroupName, first: InboxTaskView) -> Response {
    let stream = async_stream::stream! {
        yield Ok::<_, std::convert::Infallible>(event(&id, json!({ "task": task::to_a2a(&first) })));
        let mut seen = first;
        while !seen.is_final() {
            match state.gateway.receiver.next_change(&caller, &seen).await {
                Ok(Some(now)) => {
                    if now.result.is_some() && seen.result.is_none()
                        && let Some(update) = artifact_update(&now)
                    {
                        yield Ok(event(&id, update));
                    }
                    yield Ok(event(&id, status_update(&now)));
                    seen = now;
                }
                Ok(None) => {
                    yield Ok(error_event(&id, &RpcError::task_not_found(&seen.task_id)));
                    break;
                }
                Err(error) => {
                    // The stream cannot say what happened next: end it with
                    // the error; the peer reads the task with GetTask.
                    yield Ok(error_event(&id, &RpcError::internal(&error.to_string())));
                    break;
                }
            }
        }
    };
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
