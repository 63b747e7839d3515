//! An inbox task in A2A 1.0's shape (protobuf JSON: camelCase, states as
//! `TASK_STATE_*`).

use engine::gateway::InboxTaskView;
use gateway::EXTENSION;
use serde_json::{Value, json};

fn state(state: &str) -> &'static str {
    match state {
        "submitted" => "TASK_STATE_SUBMITTED",
        "working" => "TASK_STATE_WORKING",
        "input-required" => "TASK_STATE_INPUT_REQUIRED",
        "completed" => "TASK_STATE_COMPLETED",
        "failed" => "TASK_STATE_FAILED",
        "canceled" => "TASK_STATE_CANCELED",
        "rejected" => "TASK_STATE_REJECTED",
        _ => "TASK_STATE_UNSPECIFIED",
    }
}

/// This group's state for an A2A state name; None for a name that is not
/// one.
pub(super) fn from_a2a_state(name: &str) -> Option<&'static str> {
    [
        "submitted",
        "working",
        "input-required",
        "completed",
        "failed",
        "canceled",
        "rejected",
    ]
    .into_iter()
    .find(|ours| state(ours) == name)
}

pub(super) fn to_a2a(task: &InboxTaskView) -> Value {
    let mut a2a = json!({
        "id": task.task_id,
        // The chain's root groups every task of one piece of work.
        "contextId": task.root_key,
        "status": {
            "state": state(&task.state),
            "timestamp": task.updated_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        },
        "metadata": {
            "countersign/taskKey": task.task_key,
            "countersign/sender": task.sender_group,
            "countersign/kind": task.kind,
        },
    });
    if let Some(message) = &task.message {
        a2a["status"]["message"] = json!({
            "messageId": format!("{}-status", task.task_id),
            "role": "ROLE_AGENT",
            "parts": [{ "text": message }],
        });
    }
    if let Some(result) = &task.result {
        let mut artifact = json!({
            "artifactId": format!("{}-result", task.task_id),
            "name": "result",
            "parts": [{ "data": result }],
        });
        // The result signed by this group, for a Countersign sender to
        // verify; a plain A2A client reads the data part.
        if let Some(signed) = &task.signed_answer {
            artifact["metadata"] = json!({ EXTENSION: signed });
        }
        a2a["artifacts"] = json!([artifact]);
    }
    a2a
}
