//! A conversation between turns, and the invariant the runtime keeps over
//! it: every tool call an assistant message issued has exactly one tool
//! result. Model APIs reject a transcript that breaks this, so a Stop or an
//! error must never leave a call dangling.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::transcript::{Message, Role};

/// Everything the runtime needs to continue a conversation: the transcript
/// and the agent currently holding it. Plain serde data; the engine stores
/// it between turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConversationState {
    messages: Vec<Message>,
    /// `None` until the first turn, meaning the workflow's root.
    #[serde(default)]
    active_agent: Option<String>,
    /// How many turns have started, used to number events.
    #[serde(default)]
    turns: u64,
}

impl ConversationState {
    /// A new, empty conversation that starts with the workflow's root.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The transcript.
    #[must_use]
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The agent holding the conversation (`None`: the root).
    #[must_use]
    pub fn active_agent(&self) -> Option<&str> {
        self.active_agent.as_deref()
    }

    /// How many turns have started.
    #[must_use]
    pub fn turns(&self) -> u64 {
        self.turns
    }

    /// Tool calls that have no result yet, in issue order.
    #[must_use]
    pub fn dangling_tool_calls(&self) -> Vec<(String, String)> {
        let answered: HashSet<&str> = self
            .messages
            .iter()
            .filter_map(|message| message.tool_call_id.as_deref())
            .collect();
        self.messages
            .iter()
            .filter(|message| message.role == Role::Assistant)
            .flat_map(|message| {
                let agent = message.agent.clone().unwrap_or_default();
                message
                    .tool_calls
                    .iter()
                    .filter(|call| !answered.contains(call.id.as_str()))
                    .map(move |call| (agent.clone(), call.id.clone()))
            })
            .collect()
    }

    /// Check the invariant: every tool call has exactly one result, every
    /// result answers an earlier call, and call ids are unique.
    ///
    /// # Errors
    ///
    /// The first [`TranscriptError`] found.
    pub fn check_consistency(&self) -> Result<(), TranscriptError> {
        let mut issued: HashMap<&str, usize> = HashMap::new();
        for message in &self.messages {
            match message.role {
                Role::Assistant => {
                    for call in &message.tool_calls {
                        if issued.insert(&call.id, 0).is_some() {
                            return Err(TranscriptError::DuplicateCallId {
                                call_id: call.id.clone(),
                            });
                        }
                    }
                }
                Role::Tool => {
                    let call_id = message.tool_call_id.as_deref().unwrap_or_default();
                    match issued.get_mut(call_id) {
                        None => {
                            return Err(TranscriptError::OrphanResult {
                                call_id: call_id.to_owned(),
                            });
                        }
                        Some(count) if *count > 0 => {
                            return Err(TranscriptError::DuplicateResult {
                                call_id: call_id.to_owned(),
                            });
                        }
                        Some(count) => *count += 1,
                    }
                }
                Role::System | Role::User => {}
            }
        }
        match issued.into_iter().find(|(_, count)| *count == 0) {
            Some((call_id, _)) => Err(TranscriptError::MissingResult {
                call_id: call_id.to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// Whether the transcript ends on a user message no reply answers (a
    /// turn that failed before failures were recorded).
    #[must_use]
    pub fn ends_unanswered(&self) -> bool {
        self.dangling_tool_calls().is_empty()
            && self
                .messages
                .last()
                .is_some_and(|message| message.role == Role::User)
    }

    /// Where the next turn's user message will stand in the transcript:
    /// after the results and the note the turn first adds to close what an
    /// interrupted earlier turn left open. The application refers to a
    /// message by this position.
    #[must_use]
    pub fn next_user_message_index(&self) -> usize {
        self.messages.len() + self.dangling_tool_calls().len() + usize::from(self.ends_unanswered())
    }

    pub(crate) fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    pub(crate) fn set_active_agent(&mut self, agent: &str) {
        self.active_agent = Some(agent.to_owned());
    }

    pub(crate) fn start_turn(&mut self) -> u64 {
        self.turns += 1;
        self.turns
    }

    /// Answer every dangling call with a cancelled result; returns how many.
    pub(crate) fn close_dangling(&mut self, reason: &str) -> usize {
        let dangling = self.dangling_tool_calls();
        for (agent, call_id) in &dangling {
            self.push(Message::cancelled_result(agent, call_id, reason));
        }
        dangling.len()
    }
}

/// A way a transcript breaks the one-result-per-call invariant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscriptError {
    #[error("tool call {call_id:?} has no result")]
    MissingResult { call_id: String },
    #[error("tool call {call_id:?} has more than one result")]
    DuplicateResult { call_id: String },
    #[error("a tool result answers {call_id:?}, which no earlier message issued")]
    OrphanResult { call_id: String },
    #[error("two tool calls share the id {call_id:?}")]
    DuplicateCallId { call_id: String },
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::outcome::OutcomeKind;
    use crate::transcript::ToolCall;

    #[test]
    fn dangling_calls_are_found_and_closed() {
        let mut state = ConversationState::new();
        state.push(Message::user("hi"));
        state.push(Message::assistant(
            "a",
            "",
            vec![
                ToolCall::new("1", "t", json!({})),
                ToolCall::new("2", "t", json!({})),
            ],
        ));
        state.push(Message::tool_result(
            "a",
            "1",
            OutcomeKind::NotFound,
            &json!({}),
        ));
        assert_eq!(
            state.check_consistency(),
            Err(TranscriptError::MissingResult {
                call_id: "2".into()
            })
        );
        assert_eq!(state.close_dangling("interrupted"), 1);
        assert_eq!(state.check_consistency(), Ok(()));
        assert_eq!(
            state.messages().last().and_then(|m| m.outcome),
            Some(OutcomeKind::Cancelled)
        );
    }

    #[test]
    fn orphan_and_duplicate_results_are_inconsistent() {
        let mut state = ConversationState::new();
        state.push(Message::tool_result(
            "a",
            "x",
            OutcomeKind::Found,
            &json!({}),
        ));
        assert!(matches!(
            state.check_consistency(),
            Err(TranscriptError::OrphanResult { .. })
        ));
    }
}
