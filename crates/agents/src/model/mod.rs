//! The model port and its backends: an OpenAI-compatible HTTP client and a
//! scripted model for tests.

mod error;
pub mod openai;
mod scripted;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::tool::ToolSpec;
use crate::transcript::{Message, ToolCall};

pub use error::ModelError;
pub use openai::{
    Backoff, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_TEMPERATURE, OpenAiCompatible, OpenAiConfig,
    OpenAiConfigError, OutputCapField,
};
pub use scripted::ScriptedModel;

/// A chat model with tool calling.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// A short name for events and logs (e.g. the model id).
    fn name(&self) -> &str;

    /// Produce the next assistant message for `request`.
    ///
    /// Dropping the returned future abandons the call; the runtime does that
    /// when a Stop lands, so implementations must not rely on completing.
    ///
    /// # Errors
    ///
    /// [`ModelError`] once the backend has given up (after its own retries).
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError>;
}

/// One model call: the active agent's prompt, the transcript and its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The active agent's system prompt.
    pub system: String,
    /// The transcript so far.
    pub messages: Vec<Message>,
    /// The tools this agent may call, the handoff tool included.
    pub tools: Vec<ToolSpec>,
    /// The active agent's name.
    pub agent: String,
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    /// The tokens the call cost, as the server reported them; `None` when
    /// it reported nothing (unknown, which is not zero).
    #[serde(default)]
    pub usage: Option<Usage>,
}

impl ModelResponse {
    /// A plain answer.
    #[must_use]
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: Some(content.into()),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: None,
        }
    }

    /// A response that only calls tools.
    #[must_use]
    pub fn calls(tool_calls: Vec<ToolCall>) -> Self {
        Self {
            content: None,
            tool_calls,
            finish_reason: FinishReason::ToolCalls,
            usage: None,
        }
    }

    /// The same response with the server's token counts.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }
}

/// Token counts of one model call. A count the server left out stays
/// `None`: budgets must be able to tell "not reported" from "free".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub total_tokens: Option<u64>,
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end.
    Stop,
    /// It wants tool results.
    ToolCalls,
    /// It ran out of output tokens; the content may be cut off.
    Length,
    /// The provider's filter withheld or cut the output.
    ContentFilter,
    /// Anything else a server reports.
    Other(String),
}

impl FinishReason {
    /// The wire name (`stop`, `tool_calls`, …).
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::ToolCalls => "tool_calls",
            Self::Length => "length",
            Self::ContentFilter => "content_filter",
            Self::Other(other) => other,
        }
    }
}
