//! The messages of a conversation as the model sees them. The invariant
//! over them (one result per tool call) is kept in [`crate::ConversationState`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::outcome::OutcomeKind;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One tool call issued by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for the call; the result refers back to it.
    pub id: String,
    /// The tool (or `handoff`) the model called.
    pub name: String,
    /// The arguments object. `{}` when the model's arguments were malformed.
    pub arguments: Value,
    /// Set when the model's arguments were not a JSON object. The call is
    /// kept (and answered with `invalid_arguments`) instead of failing the
    /// turn, so the model can correct itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malformed_arguments: Option<MalformedArguments>,
}

impl ToolCall {
    /// A well-formed call.
    #[must_use]
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            malformed_arguments: None,
        }
    }

    /// A call whose arguments text could not be used.
    #[must_use]
    pub fn malformed(
        id: impl Into<String>,
        name: impl Into<String>,
        raw: impl Into<String>,
        error: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: json!({}),
            malformed_arguments: Some(MalformedArguments {
                raw: raw.into(),
                error: error.into(),
                written_as_text: false,
            }),
        }
    }

    /// A call the model wrote into its reply's text instead of making it;
    /// `raw` is the whole text, which nobody is shown.
    #[must_use]
    pub fn written_as_text(
        id: impl Into<String>,
        name: impl Into<String>,
        raw: impl Into<String>,
        error: impl Into<String>,
    ) -> Self {
        let mut call = Self::malformed(id, name, raw, error);
        if let Some(malformed) = &mut call.malformed_arguments {
            malformed.written_as_text = true;
        }
        call
    }
}

/// Arguments text the model sent that was not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MalformedArguments {
    /// Exactly what the model sent.
    pub raw: String,
    /// Why it was rejected.
    pub error: String,
    /// The call was tool-call markup in the reply's text, not a call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub written_as_text: bool,
}

/// One message of the transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// The agent that wrote (assistant) or received (tool) the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Text; for tool messages, the JSON result with its `"outcome"`.
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For tool messages: the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool messages: which kind of result it is, typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<OutcomeKind>,
    /// For user messages: when it was sent, so what the application keeps
    /// from it (an answer quoted as evidence) can say when it was said.
    /// Never sent to a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
}

/// The user's message that starts a turn, and when it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserMessage {
    pub text: String,
    pub at: DateTime<Utc>,
}

impl UserMessage {
    #[must_use]
    pub fn new(text: impl Into<String>, at: DateTime<Utc>) -> Self {
        Self {
            text: text.into(),
            at,
        }
    }
}

impl From<String> for UserMessage {
    fn from(text: String) -> Self {
        Self::new(text, Utc::now())
    }
}

impl From<&str> for UserMessage {
    fn from(text: &str) -> Self {
        Self::new(text, Utc::now())
    }
}

impl Message {
    /// A system message.
    #[must_use]
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, None, content.into())
    }

    /// A user message.
    #[must_use]
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, None, content.into())
    }

    /// A user message sent at `at`.
    #[must_use]
    pub fn user_at(content: impl Into<String>, at: DateTime<Utc>) -> Self {
        Self {
            at: Some(at),
            ..Self::user(content)
        }
    }

    /// An assistant message written by `agent`.
    #[must_use]
    pub fn assistant(
        agent: impl Into<String>,
        content: impl Into<String>,
        tool_calls: Vec<ToolCall>,
    ) -> Self {
        Self {
            tool_calls,
            ..Self::plain(Role::Assistant, Some(agent.into()), content.into())
        }
    }

    /// The result of call `call_id`, rendered as JSON for the model.
    #[must_use]
    pub fn tool_result(
        agent: impl Into<String>,
        call_id: impl Into<String>,
        outcome: OutcomeKind,
        result: &Value,
    ) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            outcome: Some(outcome),
            ..Self::plain(Role::Tool, Some(agent.into()), result.to_string())
        }
    }

    /// A result for a call that never finished.
    #[must_use]
    pub fn cancelled_result(
        agent: impl Into<String>,
        call_id: impl Into<String>,
        reason: &str,
    ) -> Self {
        Self::tool_result(
            agent,
            call_id,
            OutcomeKind::Cancelled,
            &json!({ "outcome": "cancelled", "reason": reason }),
        )
    }

    /// The tool result parsed back as JSON (`None` for other messages).
    #[must_use]
    pub fn result_json(&self) -> Option<Value> {
        (self.role == Role::Tool)
            .then(|| serde_json::from_str(&self.content).ok())
            .flatten()
    }

    /// The message as a model reads it. A found result's `provenance`
    /// (titles, full versions and quotes: the audit record the application
    /// replays from the transcript) becomes the list of its `sources`; the
    /// result's value already carries what the model needs, so nothing is
    /// sent twice. Every other message is sent as stored.
    #[must_use]
    pub fn for_model(&self) -> Message {
        let compacted = (self.outcome == Some(OutcomeKind::Found))
            .then(|| self.result_json())
            .flatten()
            .and_then(|mut result| {
                let provenance = result.as_object_mut()?.remove("provenance")?;
                let sources: Vec<Value> = provenance
                    .as_array()
                    .map(|items| {
                        items
                            .iter()
                            .filter_map(|item| item.get("source").cloned())
                            .collect()
                    })
                    .unwrap_or_default();
                if !sources.is_empty() {
                    result["sources"] = Value::Array(sources);
                }
                Some(result.to_string())
            });
        match compacted {
            Some(content) => Message {
                content,
                ..self.clone()
            },
            None => self.clone(),
        }
    }

    fn plain(role: Role, agent: Option<String>, content: String) -> Self {
        Self {
            role,
            agent,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            outcome: None,
            at: None,
        }
    }
}

/// A found tool result of a transcript, with the tool that gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundResult<'a> {
    /// Its position in the transcript.
    pub index: usize,
    /// The tool the call named.
    pub tool: &'a str,
    /// The result's value.
    pub value: Value,
    /// Where it came from (empty when the result has none).
    pub provenance: Vec<crate::outcome::Provenance>,
}

/// Every found result of `messages`, in order, each with the tool whose
/// call it answers: what applications replay a transcript's facts from.
pub fn found_results(messages: &[Message]) -> Vec<FoundResult<'_>> {
    let mut tool_of: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let mut found = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        for call in &message.tool_calls {
            tool_of.insert(&call.id, &call.name);
        }
        if message.role != Role::Tool || message.outcome != Some(OutcomeKind::Found) {
            continue;
        }
        let Some(tool) = message
            .tool_call_id
            .as_deref()
            .and_then(|id| tool_of.get(id).copied())
        else {
            continue;
        };
        let Some(result) = message.result_json() else {
            continue;
        };
        found.push(FoundResult {
            index,
            tool,
            provenance: result
                .get("provenance")
                .cloned()
                .and_then(|p| serde_json::from_value(p).ok())
                .unwrap_or_default(),
            value: result.get("value").cloned().unwrap_or_default(),
        });
    }
    found
}
