//! The transcript as the offline rules read it: the last customer message,
//! the tool results (with the call that produced each), and which of them
//! belong to the current turn. The rules are a function of this view alone,
//! so a conversation resumed after a restart continues exactly where it was.

use crate::assistant::tools::REQUEST_SIGN_IN;
use agents::{HANDOFF_TOOL, Message, OutcomeKind, Role, ToolCall};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;

/// One tool result and the call it answers.
#[derive(Debug, Clone)]
pub struct ToolResult<'a> {
    /// Position in the transcript.
    pub index: usize,
    pub call: &'a ToolCall,
    pub outcome: OutcomeKind,
    /// The result JSON (`{"outcome": …, "value": …}`).
    pub json: Value,
    /// Produced in the current turn.
    pub this_turn: bool,
}

impl ToolResult<'_> {
    /// The `value` of a found result, typed.
    pub fn value<T: DeserializeOwned>(&self) -> Option<T> {
        if self.outcome != OutcomeKind::Found {
            return None;
        }
        serde_json::from_value(self.json.get("value")?.clone()).ok()
    }

    /// The explanation a not-found, unknown or refused result carries.
    pub fn reason(&self) -> String {
        ["reason", "message", "what"]
            .iter()
            .find_map(|key| self.json.get(*key).and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned()
    }

    /// A string argument of the call.
    pub fn arg(&self, name: &str) -> Option<&str> {
        self.call.arguments.get(name).and_then(Value::as_str)
    }
}

pub struct View<'a> {
    messages: &'a [Message],
    results: Vec<ToolResult<'a>>,
    /// Index of the last user message (the start of the current turn).
    turn_start: usize,
}

impl<'a> View<'a> {
    pub fn new(messages: &'a [Message]) -> View<'a> {
        let turn_start = messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .unwrap_or_default();
        let mut calls: HashMap<&str, &ToolCall> = HashMap::new();
        let mut results = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            for call in &message.tool_calls {
                calls.insert(&call.id, call);
            }
            if message.role != Role::Tool {
                continue;
            }
            let call = message
                .tool_call_id
                .as_deref()
                .and_then(|id| calls.get(id).copied());
            if let (Some(call), Some(outcome)) = (call, message.outcome) {
                results.push(ToolResult {
                    index,
                    call,
                    outcome,
                    json: message.result_json().unwrap_or_default(),
                    this_turn: index > turn_start,
                });
            }
        }
        View {
            messages,
            results,
            turn_start,
        }
    }

    /// The customer's latest message.
    pub fn user_text(&self) -> &str {
        self.messages
            .get(self.turn_start)
            .filter(|m| m.role == Role::User)
            .map_or("", |m| m.content.as_str())
    }

    /// The latest result of `tool` whose call matches `filter`.
    pub fn latest(
        &self,
        tool: &str,
        filter: impl Fn(&ToolResult<'a>) -> bool,
    ) -> Option<&ToolResult<'a>> {
        self.results
            .iter()
            .rev()
            .find(|r| r.call.name == tool && filter(r))
    }

    /// The latest result of any tool matching `filter`.
    pub fn latest_of_any(
        &self,
        filter: impl Fn(&ToolResult<'a>) -> bool,
    ) -> Option<&ToolResult<'a>> {
        self.results.iter().rev().find(|r| filter(r))
    }

    /// Whether the visitor signed in after the result at `index`: what was
    /// refused then for want of a sign-in may be asked again.
    pub fn signed_in_after(&self, index: usize) -> bool {
        self.results.iter().any(|r| {
            r.call.name == REQUEST_SIGN_IN && r.index > index && r.outcome == OutcomeKind::Found
        })
    }

    /// Every result of `tool`, oldest first.
    pub fn all(&self, tool: &str) -> impl Iterator<Item = &ToolResult<'a>> {
        self.results.iter().filter(move |r| r.call.name == tool)
    }

    /// Whether the conversation was handed to `to` during this turn.
    pub fn handed_to_this_turn(&self, to: &str) -> bool {
        self.results.iter().any(|r| {
            r.this_turn
                && r.call.name == HANDOFF_TOOL
                && r.outcome == OutcomeKind::HandedOff
                && r.arg("to") == Some(to)
        })
    }

    /// Customer messages after position `index` (the current one included),
    /// oldest first.
    pub fn user_messages_after(&self, index: usize) -> impl Iterator<Item = (usize, &str)> {
        self.messages
            .iter()
            .enumerate()
            .skip(index + 1)
            .filter(|(_, m)| m.role == Role::User)
            .map(|(i, m)| (i, m.content.as_str()))
    }

    /// Position of the current turn's customer message.
    pub fn turn_start(&self) -> usize {
        self.turn_start
    }

    /// How many tool calls the transcript holds (to number new ones).
    pub fn call_count(&self) -> usize {
        self.messages.iter().map(|m| m.tool_calls.len()).sum()
    }

    /// The latest assistant text before the current turn.
    pub fn previous_reply(&self) -> Option<&str> {
        self.messages
            .get(..self.turn_start)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.content.is_empty())
            .map(|m| m.content.as_str())
    }
}
