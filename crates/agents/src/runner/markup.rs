//! Tool calls a model wrote into its text instead of calling them. A server
//! that does not parse a model's tool-call format (vLLM started without
//! `--tool-call-parser`, a chat template that lacks one) hands the raw
//! markup back as the answer. It is never shown to anyone: the runtime
//! turns it into a malformed call the model is told about, once per turn.

use crate::transcript::ToolCall;

/// Markers of the tool-call formats models are trained on: Hermes and Qwen
/// (`<tool_call>`), Mistral (`[TOOL_CALLS]`), Llama 3.1+ (`<|python_tag|>`,
/// `<function=`), DeepSeek, Kimi, Granite and Phi, gpt-oss (harmony), and
/// Gemma's `tool_code` blocks.
const MARKERS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<function=",
    "<|tool_call|>",
    "<|tool_calls_section_begin|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "to=functions.",
    "```tool_code",
    "<tool_code>",
];

/// The name given to a text call whose tool could not be made out.
pub(super) const UNNAMED_TEXT_CALL: &str = "tool_call_written_as_text";

/// A tool call found in a model's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TextCall {
    /// What gave it away: a marker, or `a JSON tool call`.
    pub(super) marker: String,
    /// The offered tool it names, if one can be made out.
    pub(super) tool: Option<String>,
}

impl TextCall {
    /// The malformed call that stands for it in the transcript; `raw` keeps
    /// exactly what the model wrote.
    pub(super) fn into_call(self, raw: &str) -> ToolCall {
        let error = format!(
            "this tool call was written as text in your reply ({}) instead of through the tool-calling interface, so it did not run and the customer did not see it; call the tool as a real tool call, and write only plain sentences for the customer",
            self.marker
        );
        ToolCall::written_as_text(
            String::new(),
            self.tool.unwrap_or_else(|| UNNAMED_TEXT_CALL.to_owned()),
            raw,
            error,
        )
    }
}

/// The tool call written into `content`, if there is one. `offered` are
/// the names of the tools the agent was given.
pub(super) fn find(content: &str, offered: &[String]) -> Option<TextCall> {
    if let Some((at, marker)) = MARKERS
        .iter()
        .filter_map(|marker| content.find(marker).map(|at| (at, *marker)))
        .min_by_key(|(at, _)| *at)
    {
        return Some(TextCall {
            marker: marker.to_owned(),
            tool: first_tool_named(&content[at..], offered),
        });
    }
    json_call(content, offered).map(|tool| TextCall {
        marker: "a JSON tool call".to_owned(),
        tool: Some(tool),
    })
}

/// The offered tool whose name appears first in `text`.
fn first_tool_named(text: &str, offered: &[String]) -> Option<String> {
    offered
        .iter()
        .filter_map(|name| text.find(name.as_str()).map(|at| (at, name)))
        .min_by_key(|(at, _)| *at)
        .map(|(_, name)| name.clone())
}

/// A reply that is nothing but a JSON call of an offered tool (Llama's
/// JSON tool format): `{"name": "get_order", "parameters": {...}}`, also
/// in a code fence or as a list of such calls.
fn json_call(content: &str, offered: &[String]) -> Option<String> {
    let trimmed = content.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|inner| inner.strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    if !(unfenced.starts_with('{') || unfenced.starts_with('[')) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(unfenced).ok()?;
    let first = match &value {
        serde_json::Value::Array(items) => items.first()?,
        object => object,
    };
    let name = first.get("name")?.as_str()?;
    let has_arguments = first.get("arguments").is_some() || first.get("parameters").is_some();
    (has_arguments && offered.iter().any(|tool| tool == name)).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered() -> Vec<String> {
        vec!["get_order".to_owned(), "search_policy".to_owned()]
    }

    #[test]
    fn the_common_formats_are_recognised_with_their_tool() {
        for (text, tool) in [
            (
                "<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"4821\"}}\n</tool_call>",
                Some("get_order"),
            ),
            (
                "[TOOL_CALLS][{\"name\": \"search_policy\", \"arguments\": {}}]",
                Some("search_policy"),
            ),
            (
                "<|python_tag|>{\"name\": \"get_order\", \"parameters\": {}}",
                Some("get_order"),
            ),
            (
                "<function=get_order>{\"order_id\": \"1\"}</function>",
                Some("get_order"),
            ),
            (
                "Let me check. <tool_call>{\"name\": \"x\"}</tool_call>",
                None,
            ),
        ] {
            let found = find(text, &offered());
            assert_eq!(
                found.as_ref().map(|f| f.tool.as_deref()),
                Some(tool),
                "{text}"
            );
        }
    }

    #[test]
    fn a_bare_json_call_of_an_offered_tool_is_a_text_call_and_prose_is_not() {
        let json =
            "```json\n{\"name\": \"get_order\", \"parameters\": {\"order_id\": \"4821\"}}\n```";
        assert_eq!(
            find(json, &offered()).and_then(|f| f.tool).as_deref(),
            Some("get_order")
        );
        for prose in [
            "Order 4821 was delivered 12 days ago. Was the item opened?",
            "{\"name\": \"Alice\", \"arguments\": 3}",
            "I will use get_order to look it up.",
        ] {
            assert_eq!(find(prose, &offered()), None, "{prose}");
        }
    }
}
