//! An agent: one accountable responsibility, a bounded tool set, and the
//! agents it may hand off to.
//!
//! The description is architecture, not decoration: "helpful assistant" says
//! nothing, "Checks refund eligibility and prepares proposals." can be tested
//! and audited. So the builder refuses an empty or multi-sentence one.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use crate::handoff::HANDOFF_TOOL;
use crate::tool::Tool;

/// Longest accepted description. One sentence that needs more than this is
/// usually two responsibilities.
const MAX_DESCRIPTION_CHARS: usize = 240;

/// Longest agent or tool name; OpenAI-style function names allow 64.
const MAX_NAME_CHARS: usize = 64;

/// An agent definition. Immutable once built, so the invariants checked by
/// [`AgentBuilder::build`] hold for its whole life.
#[derive(Clone)]
pub struct Agent {
    name: String,
    description: String,
    instructions: String,
    tools: Vec<Arc<dyn Tool>>,
    can_handoff_to: Vec<String>,
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tools: Vec<&str> = self.tools.iter().map(|tool| tool.name()).collect();
        f.debug_struct("Agent")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("tools", &tools)
            .field("can_handoff_to", &self.can_handoff_to)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Start defining an agent called `name`.
    pub fn builder(name: impl Into<String>) -> AgentBuilder {
        AgentBuilder {
            name: name.into(),
            description: String::new(),
            instructions: String::new(),
            tools: Vec::new(),
            can_handoff_to: Vec::new(),
        }
    }

    /// The agent's unique name within a workflow.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The one sentence it is accountable for.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Its system prompt.
    #[must_use]
    pub fn instructions(&self) -> &str {
        &self.instructions
    }

    /// The tools it may call; nothing else is executed on its behalf.
    #[must_use]
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The tool called `name`, if this agent has it.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.name() == name)
    }

    /// The agents it may hand the conversation to.
    #[must_use]
    pub fn can_handoff_to(&self) -> &[String] {
        &self.can_handoff_to
    }

    /// Whether a handoff to `target` is allowed (checked in code at run time).
    #[must_use]
    pub fn may_hand_off_to(&self, target: &str) -> bool {
        self.can_handoff_to.iter().any(|allowed| allowed == target)
    }
}

/// Collects an agent definition; [`build`](Self::build) validates it.
#[must_use]
pub struct AgentBuilder {
    name: String,
    description: String,
    instructions: String,
    tools: Vec<Arc<dyn Tool>>,
    can_handoff_to: Vec<String>,
}

impl AgentBuilder {
    /// The one accountable sentence (required).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The system prompt.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = instructions.into();
        self
    }

    /// Add one tool.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Allow a handoff to the agent called `target`.
    pub fn can_handoff_to(mut self, target: impl Into<String>) -> Self {
        self.can_handoff_to.push(target.into());
        self
    }

    /// Check the definition and build the agent.
    ///
    /// # Errors
    ///
    /// [`AgentError`] when the name or a tool name is not a valid identifier,
    /// the description is empty, longer than 240 characters or more than one
    /// sentence, two tools share a name, a tool uses the reserved name
    /// `handoff`, or a handoff target is listed twice or is the agent itself.
    pub fn build(self) -> Result<Agent, AgentError> {
        check_name(&self.name).map_err(|reason| AgentError::InvalidName {
            name: self.name.clone(),
            reason,
        })?;
        let description = self.description.trim().to_owned();
        check_description(&description).map_err(|reason| AgentError::InvalidDescription {
            agent: self.name.clone(),
            reason,
        })?;
        let mut seen = HashSet::new();
        for tool in &self.tools {
            let tool_name = tool.name();
            check_name(tool_name).map_err(|reason| AgentError::InvalidToolName {
                agent: self.name.clone(),
                tool: tool_name.to_owned(),
                reason,
            })?;
            if tool_name == HANDOFF_TOOL {
                return Err(AgentError::ReservedToolName {
                    agent: self.name.clone(),
                    tool: tool_name.to_owned(),
                });
            }
            if !seen.insert(tool_name) {
                return Err(AgentError::DuplicateTool {
                    agent: self.name.clone(),
                    tool: tool_name.to_owned(),
                });
            }
        }
        let mut targets = HashSet::new();
        for target in &self.can_handoff_to {
            if *target == self.name {
                return Err(AgentError::SelfHandoff { agent: self.name });
            }
            if !targets.insert(target.as_str()) {
                return Err(AgentError::DuplicateHandoffTarget {
                    agent: self.name.clone(),
                    target: target.clone(),
                });
            }
        }
        Ok(Agent {
            name: self.name,
            description,
            instructions: self.instructions,
            tools: self.tools,
            can_handoff_to: self.can_handoff_to,
        })
    }
}

/// Why an agent definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    #[error("agent name {name:?} is invalid: {reason}")]
    InvalidName { name: String, reason: String },
    #[error("agent {agent:?} has an unusable description: {reason}")]
    InvalidDescription { agent: String, reason: String },
    #[error("agent {agent:?} has a tool with an invalid name {tool:?}: {reason}")]
    InvalidToolName {
        agent: String,
        tool: String,
        reason: String,
    },
    #[error("agent {agent:?} has two tools called {tool:?}")]
    DuplicateTool { agent: String, tool: String },
    #[error("agent {agent:?} has a tool called {tool:?}, a name the runtime reserves for handoffs")]
    ReservedToolName { agent: String, tool: String },
    #[error("agent {agent:?} lists {target:?} as a handoff target twice")]
    DuplicateHandoffTarget { agent: String, target: String },
    #[error("agent {agent:?} lists itself as a handoff target")]
    SelfHandoff { agent: String },
}

/// Names travel to model APIs as function names and into event logs, so they
/// are plain identifiers: ASCII letters, digits, `_` and `-`, 1–64 chars.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_owned());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!("it is longer than {MAX_NAME_CHARS} characters"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "{bad:?} is not allowed (use ASCII letters, digits, '_' or '-')"
        ));
    }
    Ok(())
}

/// One sentence: not empty, no line breaks, and no sentence-ending mark
/// followed by more text. Abbreviations such as "e.g." count as a sentence
/// end; rephrase rather than loosen the check.
fn check_description(description: &str) -> Result<(), String> {
    if description.is_empty() {
        return Err("it is empty; state the agent's responsibility in one sentence".to_owned());
    }
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "it is longer than {MAX_DESCRIPTION_CHARS} characters; one responsibility fits in one short sentence"
        ));
    }
    if description.contains(['\n', '\r']) {
        return Err("it spans several lines; use one sentence".to_owned());
    }
    let body = description.trim_end_matches(is_sentence_end);
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_sentence_end(c) {
            continue;
        }
        let full_width = matches!(c, '。' | '！' | '？');
        let next = chars.peek().copied();
        if full_width || next.is_some_and(char::is_whitespace) {
            return Err("it has more than one sentence; state one responsibility".to_owned());
        }
    }
    Ok(())
}

fn is_sentence_end(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '。' | '！' | '？')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sentence_descriptions_pass() {
        assert!(check_description("Checks refund eligibility and prepares proposals.").is_ok());
        assert!(check_description("Answers general questions and routes refund requests").is_ok());
        assert!(check_description("Reads version 1.2 of the policy.").is_ok());
        assert!(check_description("核查退款资格并准备方案。").is_ok());
    }

    #[test]
    fn empty_and_multi_sentence_descriptions_fail() {
        assert!(check_description("").is_err());
        assert!(check_description("Helps. Also refunds.").is_err());
        assert!(check_description("Helps! Refunds?").is_err());
        assert!(check_description("核查退款资格。准备方案。").is_err());
        assert!(check_description("Helps\nwith refunds.").is_err());
        assert!(check_description(&"a".repeat(241)).is_err());
    }

    #[test]
    fn names_are_identifiers() {
        assert!(check_name("refund_specialist").is_ok());
        assert!(check_name("get-order2").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("refund specialist").is_err());
        assert!(check_name(&"a".repeat(65)).is_err());
    }
}
