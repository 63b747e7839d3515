//! A client for another agent group's A2A 1.0 endpoint (JSON-RPC binding):
//! `SendMessage` and `GetTask`, read the way the outside world deserves.
//! A peer's answer can be late, missing or malformed; only a JSON-RPC error
//! that says the peer decided is [`PeerError::Refused`]. Everything else is
//! [`PeerError::Unknown`]: the peer may or may not hold the task, and the
//! caller asks again (a resend carries the same task key, so it cannot make
//! a second task).

use crate::ConfigError;
use crate::http::{HttpTimeouts, build_client};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};

/// The A2A version this client speaks.
pub const VERSION: &str = "1.0";

/// A2A's JSON-RPC error codes that mean the peer looked at the request and
/// said no: asking again with the same request gets the same answer.
const FINAL_CODES: [i64; 10] = [
    -32700, // parse error
    -32600, // invalid request
    -32601, // method not found
    -32602, // invalid params (a task the peer's checks refused)
    -32001, // task not found
    -32002, // task not cancelable (it ended already)
    -32004, // unsupported operation
    -32005, // content type not supported
    -32008, // extension support required
    -32009, // version not supported
];

/// What went wrong talking to a peer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// No answer that says what the peer did: unreachable, timed out, a
    /// server error, an answer that does not read as A2A.
    #[error("the peer's answer is unknown: {0}")]
    Unknown(String),
    /// The peer answered with an error that asking again will not change.
    #[error("the peer refused ({code}{}): {message}", reason.as_deref().map(|r| format!(", {r}")).unwrap_or_default())]
    Refused {
        code: i64,
        /// The reason code in the error's `ErrorInfo` detail: Countersign's
        /// own (`countersignReason`) when the peer gives one, else A2A's.
        reason: Option<String>,
        message: String,
    },
    /// HTTP 401: the peer did not accept our credentials.
    #[error("the peer did not accept our credentials: {0}")]
    Unauthenticated(String),
}

/// A task as the peer reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerTask {
    pub id: String,
    /// A2A's state in lower case without the prefix: `submitted`,
    /// `working`, `input-required`, `completed`, `failed`, `canceled`,
    /// `rejected`, `auth-required`.
    pub state: String,
    /// The first data part of the first artifact, if any.
    pub result: Option<Value>,
    /// That artifact's metadata (where extensions put what goes with the
    /// result, e.g. its signature).
    pub result_metadata: Option<Value>,
    /// The status message's text, if the peer gave one.
    pub message: Option<String>,
}

/// An A2A client with bounded timeouts and no redirects.
#[derive(Debug, Clone)]
pub struct A2aClient {
    http: reqwest::Client,
}

impl A2aClient {
    /// # Errors
    /// The HTTP client cannot be built.
    pub fn new(timeouts: HttpTimeouts) -> Result<Self, ConfigError> {
        Ok(Self {
            http: build_client(timeouts)?,
        })
    }

    /// Sends a message with `input` as its data part, whose metadata
    /// carries what `extensions` declare (named in `A2A-Extensions`); the
    /// answer must be a task. A peer that knows the extensions reads them;
    /// a plain A2A peer reads the data part.
    ///
    /// # Errors
    /// [`PeerError`].
    pub async fn send_message(
        &self,
        endpoint: &str,
        message_id: &str,
        input: &Value,
        extensions: &[&str],
        metadata: Value,
    ) -> Result<PeerTask, PeerError> {
        let params = json!({
            "message": {
                "messageId": message_id,
                "role": "ROLE_USER",
                "parts": [{ "data": input }],
                "metadata": metadata,
                "extensions": extensions,
            }
        });
        let result = self
            .call(endpoint, "SendMessage", params, extensions, None)
            .await?;
        match result.get("task") {
            Some(task) => read_task(task),
            None => Err(PeerError::Unknown(
                "SendMessage answered without a task".to_owned(),
            )),
        }
    }

    /// The agent card a group serves at `base_url`'s well-known path, as
    /// served (for an admin to pin its keys from; nothing in it is trusted
    /// by being fetched).
    ///
    /// # Errors
    /// [`PeerError::Unknown`]: unreachable, not 2xx, not JSON.
    pub async fn agent_card(&self, base_url: &str) -> Result<Value, PeerError> {
        let address = format!(
            "{}/.well-known/agent-card.json",
            base_url.trim_end_matches('/')
        );
        let response = self
            .http
            .get(&address)
            .send()
            .await
            .map_err(|e| PeerError::Unknown(format!("{address} could not be reached: {e}")))?;
        if !response.status().is_success() {
            return Err(PeerError::Unknown(format!(
                "{address} answered {}",
                response.status()
            )));
        }
        response
            .json()
            .await
            .map_err(|e| PeerError::Unknown(format!("{address} did not serve JSON: {e}")))
    }

    /// The task `task_id`, asked with a bearer token.
    ///
    /// # Errors
    /// [`PeerError`].
    pub async fn get_task(
        &self,
        endpoint: &str,
        task_id: &str,
        bearer: &str,
    ) -> Result<PeerTask, PeerError> {
        self.task_call(endpoint, "GetTask", task_id, bearer).await
    }

    /// Asks the peer to cancel task `task_id`, with a bearer token.
    ///
    /// # Errors
    /// [`PeerError`]; `-32002` (as [`PeerError::Refused`]) when the task
    /// ended before the cancel reached it.
    pub async fn cancel_task(
        &self,
        endpoint: &str,
        task_id: &str,
        bearer: &str,
    ) -> Result<PeerTask, PeerError> {
        self.task_call(endpoint, "CancelTask", task_id, bearer)
            .await
    }

    /// A method on one task (`{ "id": … }`) that answers the task.
    async fn task_call(
        &self,
        endpoint: &str,
        method: &str,
        task_id: &str,
        bearer: &str,
    ) -> Result<PeerTask, PeerError> {
        let params = json!({ "id": task_id });
        let result = self
            .call(endpoint, method, params, &[], Some(bearer))
            .await?;
        read_task(&result)
    }

    async fn call(
        &self,
        endpoint: &str,
        method: &str,
        params: Value,
        extensions: &[&str],
        bearer: Option<&str>,
    ) -> Result<Value, PeerError> {
        let id = format!("{method}-{}", uuid::Uuid::new_v4());
        let mut request = self
            .http
            .post(endpoint)
            .header("A2A-Version", VERSION)
            .header(CONTENT_TYPE, "application/json")
            .json(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        if !extensions.is_empty() {
            request = request.header("A2A-Extensions", extensions.join(", "));
        }
        if let Some(token) = bearer {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let response = request
            .send()
            .await
            .map_err(|e| PeerError::Unknown(crate::http::transport_error(&e).to_string()))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| PeerError::Unknown(crate::http::transport_error(&e).to_string()))?;
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(PeerError::Unauthenticated(error_message(&body)));
        }
        if !status.is_success() {
            return Err(PeerError::Unknown(format!(
                "HTTP {status}: {}",
                body.chars().take(200).collect::<String>()
            )));
        }
        let answer: Value = serde_json::from_str(&body)
            .map_err(|e| PeerError::Unknown(format!("the answer is not JSON: {e}")))?;
        if answer["id"] != json!(id) {
            return Err(PeerError::Unknown(
                "the answer is for another request id".to_owned(),
            ));
        }
        if let Some(error) = answer.get("error") {
            return Err(read_error(error));
        }
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| PeerError::Unknown("the answer has neither result nor error".to_owned()))
    }
}

fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| body.chars().take(200).collect())
}

fn read_error(error: &Value) -> PeerError {
    let code = error["code"].as_i64();
    let message = error["message"]
        .as_str()
        .unwrap_or("(no message)")
        .chars()
        .take(1000)
        .collect::<String>();
    let detail = error["data"]
        .as_array()
        .and_then(|details| details.iter().find(|d| d["reason"].is_string()));
    let reason = detail.and_then(|d| {
        d["metadata"]["countersignReason"]
            .as_str()
            .or_else(|| d["reason"].as_str())
            .map(|r| r.chars().take(64).collect())
    });
    match code {
        Some(code) if FINAL_CODES.contains(&code) => PeerError::Refused {
            code,
            reason,
            message,
        },
        Some(code) => PeerError::Unknown(format!("JSON-RPC error {code}: {message}")),
        None => PeerError::Unknown(format!("an error without a code: {message}")),
    }
}

fn read_task(task: &Value) -> Result<PeerTask, PeerError> {
    let malformed = |why: &str| PeerError::Unknown(format!("the task does not read as A2A: {why}"));
    let id = task["id"]
        .as_str()
        .filter(|id| !id.is_empty() && id.len() <= 128)
        .ok_or_else(|| malformed("no id"))?;
    let state = task["status"]["state"]
        .as_str()
        .and_then(|state| state.strip_prefix("TASK_STATE_"))
        .filter(|state| !state.is_empty() && *state != "UNSPECIFIED")
        .ok_or_else(|| malformed("no status.state"))?
        .to_ascii_lowercase()
        .replace('_', "-");
    let artifact = task["artifacts"]
        .as_array()
        .and_then(|artifacts| artifacts.first());
    let result = artifact
        .and_then(|artifact| artifact["parts"].as_array())
        .and_then(|parts| parts.iter().find_map(|part| part.get("data")))
        .cloned();
    let result_metadata = artifact
        .and_then(|artifact| artifact.get("metadata"))
        .cloned();
    let message = task["status"]["message"]["parts"]
        .as_array()
        .and_then(|parts| parts.iter().find_map(|part| part["text"].as_str()))
        .map(|text| text.chars().take(1000).collect());
    Ok(PeerTask {
        id: id.to_owned(),
        state,
        result,
        result_metadata,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_carries_countersigns_reason_and_a_server_error_stays_unknown() {
        let refused = read_error(&json!({
            "code": -32602,
            "message": "the pair is not allowed",
            "data": [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                       "reason": "INVALID_PARAMS",
                       "metadata": { "countersignReason": "pair_not_allowed" } }]
        }));
        assert_eq!(
            refused,
            PeerError::Refused {
                code: -32602,
                reason: Some("pair_not_allowed".to_owned()),
                message: "the pair is not allowed".to_owned(),
            }
        );
        assert!(matches!(
            read_error(&json!({ "code": -32603, "message": "database down" })),
            PeerError::Unknown(_)
        ));
        assert!(matches!(
            read_error(&json!({ "message": "?" })),
            PeerError::Unknown(_)
        ));
    }

    #[test]
    fn a_task_reads_its_state_and_result_and_a_task_without_state_is_unknown() {
        let task = read_task(&json!({
            "id": "gtk_1",
            "status": { "state": "TASK_STATE_INPUT_REQUIRED" },
            "artifacts": [{ "artifactId": "a", "parts": [{ "data": { "condition": "sealed" } }] }]
        }))
        .unwrap();
        assert_eq!(task.state, "input-required");
        assert_eq!(task.result, Some(json!({ "condition": "sealed" })));
        assert!(matches!(
            read_task(&json!({ "id": "gtk_1", "status": {} })),
            Err(PeerError::Unknown(_))
        ));
        assert!(matches!(
            read_task(&json!({ "status": { "state": "TASK_STATE_WORKING" } })),
            Err(PeerError::Unknown(_))
        ));
    }
}
