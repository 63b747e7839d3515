//! Handoffs are tool calls the runtime answers itself, checked in code
//! against the calling agent's `can_handoff_to`. The prompt may say anything;
//! an unlisted handoff is refused, recorded, and shown to the model as such.

use serde_json::{Value, json};

use crate::agent::Agent;
use crate::outcome::ToolOutcome;
use crate::tool::ToolSpec;
use crate::transcript::ToolCall;
use crate::workflow::Workflow;

/// The name of the tool the runtime adds to agents that have handoff
/// targets. Agents may not define a tool of their own with this name.
pub const HANDOFF_TOOL: &str = "handoff";

/// The handoff tool as `agent`'s model sees it: the allowed targets as an
/// enum, each described by its one accountable sentence.
pub(crate) fn spec(agent: &Agent, workflow: &Workflow) -> Option<ToolSpec> {
    if agent.can_handoff_to().is_empty() {
        return None;
    }
    let targets: Vec<String> = agent
        .can_handoff_to()
        .iter()
        .map(|name| {
            let description = workflow.agent(name).map_or("", Agent::description);
            format!("{name}: {description}")
        })
        .collect();
    Some(ToolSpec {
        name: HANDOFF_TOOL.to_owned(),
        description: format!(
            "Hand the conversation to the agent responsible for it. You may hand off to: {}",
            targets.join("; ")
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "to": {
                    "type": "string",
                    "enum": agent.can_handoff_to(),
                    "description": "The agent to hand the conversation to.",
                },
                "reason": {
                    "type": "string",
                    "description": "Why this agent is responsible for what the user asked.",
                },
            },
            "required": ["to", "reason"],
            "additionalProperties": false,
        }),
    })
}

/// What the runtime decided about one handoff call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    Accepted { to: String, reason: String },
    Refused { to: String, why: String },
    Invalid { message: String },
}

impl Decision {
    /// The tool result the model sees.
    pub(crate) fn to_model_json(&self) -> Value {
        match self {
            Self::Accepted { to, reason } => json!({
                "outcome": "handed_off",
                "to": to,
                "reason": reason,
            }),
            Self::Refused { why, .. } => ToolOutcome::refused(why.clone()).to_model_json(),
            Self::Invalid { message } => {
                ToolOutcome::invalid_arguments(message.clone()).to_model_json()
            }
        }
    }
}

/// Decide a handoff `call` made by `agent`. Only one handoff per model
/// response is accepted: two would leave it ambiguous who holds the turn.
pub(crate) fn decide(agent: &Agent, call: &ToolCall, already_accepted: bool) -> Decision {
    if let Some(malformed) = &call.malformed_arguments {
        return Decision::Invalid {
            message: format!("arguments were not a JSON object: {}", malformed.error),
        };
    }
    let Some(to) = call.arguments.get("to").and_then(Value::as_str) else {
        return Decision::Invalid {
            message: "`to` (the target agent's name) is required".to_owned(),
        };
    };
    let to = to.to_owned();
    let reason = call
        .arguments
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !agent.may_hand_off_to(&to) {
        let allowed = agent.can_handoff_to();
        let why = if allowed.is_empty() {
            format!("agent {} may not hand off to anyone", agent.name())
        } else {
            format!(
                "agent {} may not hand off to {to:?}; allowed: {}",
                agent.name(),
                allowed.join(", ")
            )
        };
        return Decision::Refused { to, why };
    }
    if already_accepted {
        return Decision::Refused {
            to,
            why: "only one handoff per response is accepted; an earlier one already was".to_owned(),
        };
    }
    Decision::Accepted { to, reason }
}
