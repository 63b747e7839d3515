//! The OpenAI chat-completions wire format: only the fields every
//! compatible server (OpenAI, Ollama, vLLM, llama.cpp) understands.

use serde::Deserialize;
use serde_json::{Value, json};

use super::OpenAiConfig;
use crate::model::{FinishReason, ModelError, ModelRequest, ModelResponse, Usage};
use crate::transcript::{Message, Role, ToolCall};

/// Longest slice of a server's raw body quoted in an error.
const MAX_QUOTED_BODY: usize = 300;

/// The JSON body of `POST /chat/completions`.
pub(super) fn request_body(config: &OpenAiConfig, request: &ModelRequest) -> Value {
    let model = config.model.as_str();
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    for next in request.messages.iter().map(message) {
        match messages.last_mut() {
            Some(previous) if joinable(previous, &next) => join(previous, &next),
            _ => messages.push(next),
        }
    }
    let mut body = json!({ "model": model, "messages": messages });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
        // Only with tools: OpenAI rejects `tool_choice` without them.
        body["tool_choice"] = json!("auto");
    }
    if let Some(temperature) = config.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(cap) = config.max_output_tokens {
        body[config.output_cap_field.as_str()] = json!(cap);
    }
    body
}

/// Two plain messages of the same speaker in a row: the customer writing
/// twice to a person who took the chat over, or that person's reply next to
/// a note that they joined. Chat templates that insist on user and
/// assistant taking turns (Mistral's, Gemma's on vLLM) refuse them apart,
/// so they travel as one message.
fn joinable(previous: &Value, next: &Value) -> bool {
    let plain = |m: &Value| {
        matches!(m["role"].as_str(), Some("user" | "assistant"))
            && m.get("tool_calls").is_none()
            && m["content"].is_string()
    };
    plain(previous) && plain(next) && previous["role"] == next["role"]
}

fn join(previous: &mut Value, next: &Value) {
    let joined = format!(
        "{}\n\n{}",
        previous["content"].as_str().unwrap_or_default(),
        next["content"].as_str().unwrap_or_default()
    );
    previous["content"] = Value::String(joined);
}

fn message(message: &Message) -> Value {
    match message.role {
        Role::System => json!({ "role": "system", "content": message.content }),
        Role::User => json!({ "role": "user", "content": message.content }),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": message.content,
        }),
        Role::Assistant if message.tool_calls.is_empty() => {
            json!({ "role": "assistant", "content": message.content })
        }
        Role::Assistant => {
            let calls: Vec<Value> = message.tool_calls.iter().map(tool_call).collect();
            let content = if message.content.is_empty() {
                Value::Null
            } else {
                json!(message.content)
            };
            json!({ "role": "assistant", "content": content, "tool_calls": calls })
        }
    }
}

/// Malformed arguments are echoed back as `{}`, not as the raw text:
/// vLLM and llama.cpp parse the arguments of earlier calls and would reject
/// the whole request. The raw text is in that call's `invalid_arguments`
/// result, which is what the model needs to correct itself.
fn tool_call(call: &ToolCall) -> Value {
    let arguments = if call.malformed_arguments.is_some() {
        "{}".to_owned()
    } else {
        call.arguments.to_string()
    };
    json!({
        "id": call.id,
        "type": "function",
        "function": { "name": call.name, "arguments": arguments },
    })
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// Counts are read leniently: a server that sends a count as something
/// other than a whole number has not reported it.
#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<Value>,
    #[serde(default)]
    completion_tokens: Option<Value>,
    #[serde(default)]
    total_tokens: Option<Value>,
}

impl WireUsage {
    /// `None` when the server reported no count at all.
    fn read(self) -> Option<Usage> {
        let count = |value: Option<Value>| value.as_ref().and_then(Value::as_u64);
        let prompt_tokens = count(self.prompt_tokens);
        let completion_tokens = count(self.completion_tokens);
        let total_tokens = count(self.total_tokens).or_else(|| {
            prompt_tokens
                .zip(completion_tokens)
                .map(|(prompt, completion)| prompt.saturating_add(completion))
        });
        let usage = Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
        };
        (usage != Usage::default()).then_some(usage)
    }
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// Read a 2xx body.
pub(super) fn parse_response(body: &str) -> Result<ModelResponse, ModelError> {
    let wire: WireResponse = serde_json::from_str(body).map_err(|err| ModelError::Malformed {
        message: format!("{err}; body: {}", quote(body)),
    })?;
    if let Some(error) = wire.error.filter(|_| wire.choices.is_empty()) {
        // Some servers report failures with a 200 status.
        return Err(error_from_status(
            500,
            None,
            &json!({ "error": error }).to_string(),
        ));
    }
    let usage = wire.usage.and_then(WireUsage::read);
    let Some(choice) = wire.choices.into_iter().next() else {
        return Err(ModelError::Malformed {
            message: "the response has no choices".to_owned(),
        });
    };
    let content = choice.message.content.filter(|text| !text.is_empty());
    let tool_calls: Vec<ToolCall> = choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(index, call)| parse_tool_call(index, call))
        .collect();
    if let Some(refusal) = choice.message.refusal.filter(|text| !text.is_empty())
        && content.is_none()
        && tool_calls.is_empty()
    {
        return Err(ModelError::Refused { message: refusal });
    }
    let finish_reason = match choice.finish_reason.as_deref() {
        Some("stop") => FinishReason::Stop,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
        None if tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolCalls,
    };
    if finish_reason == FinishReason::ContentFilter && content.is_none() && tool_calls.is_empty() {
        return Err(ModelError::Refused {
            message: "the provider's content filter withheld the answer".to_owned(),
        });
    }
    Ok(ModelResponse {
        content,
        tool_calls,
        finish_reason,
        usage,
    })
}

/// Arguments arrive as a JSON string; some servers send an object instead,
/// and an empty string for a call without arguments. Anything that is not an
/// object becomes a malformed call, answered later with `invalid_arguments`.
fn parse_tool_call(index: usize, call: WireToolCall) -> ToolCall {
    let id = call
        .id
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| format!("call_{index}"));
    let name = call.function.name;
    match call.function.arguments {
        None | Some(Value::Null) => ToolCall::new(id, name, json!({})),
        Some(Value::Object(object)) => ToolCall::new(id, name, Value::Object(object)),
        Some(Value::String(raw)) if raw.trim().is_empty() => ToolCall::new(id, name, json!({})),
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(&raw) {
            Ok(Value::Object(object)) => ToolCall::new(id, name, Value::Object(object)),
            Ok(other) => ToolCall::malformed(
                id,
                name,
                raw,
                format!("expected a JSON object, got {}", type_name(&other)),
            ),
            Err(err) => ToolCall::malformed(id, name, raw, format!("invalid JSON: {err}")),
        },
        Some(other) => {
            let raw = other.to_string();
            let error = format!("expected a JSON object, got {}", type_name(&other));
            ToolCall::malformed(id, name, raw, error)
        }
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Map a non-2xx response. Error bodies are `{"error": {"message", "type",
/// "code"}}` (OpenAI, vLLM, llama.cpp) or `{"error": "text"}` (Ollama).
pub(super) fn error_from_status(
    status: u16,
    retry_after: Option<std::time::Duration>,
    body: &str,
) -> ModelError {
    let (message, kind, code) = error_fields(body);
    let message = message.unwrap_or_else(|| quote(body));
    let is = |needle: &str| code.as_deref() == Some(needle) || kind.as_deref() == Some(needle);
    match status {
        429 if is("insufficient_quota") => ModelError::Rejected {
            status,
            code,
            message,
        },
        429 => ModelError::RateLimited {
            retry_after,
            message,
        },
        500..=599 => ModelError::Server { status, message },
        _ if is("content_filter") || is("content_policy_violation") => {
            ModelError::Refused { message }
        }
        _ => ModelError::Rejected {
            status,
            code,
            message,
        },
    }
}

fn error_fields(body: &str) -> (Option<String>, Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (None, None, None);
    };
    let error = &value["error"];
    if let Some(text) = error.as_str() {
        return (Some(text.to_owned()), None, None);
    }
    let text = |key: &str| match &error[key] {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    };
    (text("message"), text("type"), text("code"))
}

fn quote(body: &str) -> String {
    let mut quoted: String = body.chars().take(MAX_QUOTED_BODY).collect();
    if quoted.len() < body.len() {
        quoted.push('…');
    }
    quoted
}
