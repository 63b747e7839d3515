//! `request_person`: the customer wants a person from the team. The
//! conversation goes to the staff inbox and the agents stay silent until a
//! person hands it back; the agent's reply tells the customer so.

use super::{REQUEST_PERSON, scope};
use crate::assistant::handover::{Handover, REQUESTED_REPLY};
use agents::{Tool, ToolContext, ToolOutcome};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, Default)]
pub struct RequestPerson;

/// What the model reads back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonRequested {
    /// `waiting` or `taken_over`.
    pub status: String,
    /// What to tell the customer.
    pub instruction: String,
}

#[async_trait]
impl Tool for RequestPerson {
    fn name(&self) -> &str {
        REQUEST_PERSON
    }

    fn description(&self) -> &str {
        "Call this when the customer asks to talk to a person (a human, an agent, someone from the team). A member of staff is asked to join this conversation; until they hand it back you will not be asked to answer. Then tell the customer that a member of the team will reply here, and do nothing else."
    }

    fn parameters(&self) -> Value {
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }

    async fn call(&self, ctx: &ToolContext, _args: Value) -> ToolOutcome {
        let scope = match scope(ctx) {
            Ok(scope) => scope,
            Err(outcome) => return outcome,
        };
        match scope
            .tools
            .request_person(&scope.actor(), &scope.conversation_id)
            .await
        {
            Ok(handover) => {
                let status = match handover {
                    Handover::TakenOver { .. } => "taken_over",
                    _ => "waiting",
                };
                let requested = PersonRequested {
                    status: status.to_owned(),
                    instruction: format!("Tell the customer: {REQUESTED_REPLY}"),
                };
                ToolOutcome::found(
                    serde_json::to_value(&requested).unwrap_or_default(),
                    Vec::new(),
                )
            }
            Err(error) => {
                tracing::warn!(%error, "asking for a person failed");
                ToolOutcome::unknown(
                    "the request for a person could not be recorded just now; nobody has been asked yet",
                )
            }
        }
    }
}
