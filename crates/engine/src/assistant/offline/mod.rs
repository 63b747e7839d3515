//! `countersign-offline-rules`: the embedded default model. It is not a
//! language model and never claims to be one: a deterministic intent and
//! slot parser over the transcript (order numbers, refund intent, policy
//! questions, yes/no, the answer to "was it opened?") that answers with the
//! same tool calls and handoffs a language model would, through the same
//! runtime, so every rule the application enforces applies to it too.
//!
//! Supported (see `parse.rs` for the exact phrases):
//! - policy questions ("what is your returns policy for unopened items?"):
//!   the coordinator searches the policies and answers with citations;
//! - refund requests with or without an order number ("check order 4821 and
//!   refund it if it qualifies", "I want a refund" → "which order?" → "4821"):
//!   handed to the refund specialist, who reads the order, searches the
//!   policy, records "Was the item opened?" as an unknown and asks it;
//! - the answer: unopened → a proposal for the full refundable amount;
//!   damaged or faulty → a proposal under the damaged-items section;
//!   opened → the opened-items rule is explained (window and restocking fee
//!   read from the policy text) and no proposal is made, because partial
//!   refunds are left to staff;
//! - status questions ("where is my refund?", "status of 4822"): the
//!   specialist reads the refunds' real state with `refund_status` and says
//!   where each stands, what happens next and when; nothing is prepared;
//! - several orders in one message ("refund 4821 and 4822"): one order
//!   investigator (a subagent) per order through `investigate_orders`, each
//!   asking its question or preparing its proposal, and a reply that relays
//!   each; an answer to their questions goes back to investigators, which
//!   then propose with the customer's words quoted;
//! - several orders in one conversation, one after the other;
//! - an order not on the customer's account: "I can't find an order …";
//! - a failed lookup or search: said plainly, never turned into "no such
//!   order" or "no rule";
//! - a visitor who has not signed in: the first tool that needs their
//!   orders refuses, the specialist calls `request_sign_in` and the turn
//!   waits for them to sign in (in any tab), then makes the refused call
//!   again as the customer they signed in as;
//! - "can I talk to a human?" (a person, an agent, someone): either agent
//!   asks for a person with `request_person` and says one will reply here;
//! - anything else: "I didn't understand", with what it can do.

mod coordinator;
mod investigation;
mod parse;
mod person;
mod sign_in;
mod specialist;
mod status;
mod text;
mod view;

pub use parse::{Opened, Utterance};

use super::team::{COORDINATOR, ORDER_INVESTIGATOR, REFUND_SPECIALIST};
use super::tools::{
    CHECK_CARRIER_TRACKING, CHECK_RETURNED_PARCEL, INVESTIGATE_ORDERS, PREPARE_REFUND,
    PreparedProposal, RECORD_UNKNOWN, RecordedQuestion,
};
use agents::{ChatModel, HANDOFF_TOOL, ModelError, ModelRequest, ModelResponse, ToolCall};
use async_trait::async_trait;
use serde_json::{Value, json};
use view::View;

/// The model's name in events and logs.
pub const MODEL_NAME: &str = "countersign-offline-rules";

/// The offline rules model. Stateless: every answer is a function of the
/// request (agent, transcript, tools).
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineRules;

impl OfflineRules {
    pub fn new() -> Self {
        OfflineRules
    }
}

#[async_trait]
impl ChatModel for OfflineRules {
    fn name(&self) -> &str {
        MODEL_NAME
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(respond(&request))
    }
}

/// The next assistant message for `request`.
pub fn respond(request: &ModelRequest) -> ModelResponse {
    let view = View::new(&request.messages);
    // "Can I talk to a human?" is answered by whichever agent holds the
    // conversation: it asks for a person and says so.
    if let Some(step) = person::next(&view) {
        return step.into_response(&view, request);
    }
    let step = match request.agent.as_str() {
        COORDINATOR => coordinator::next(&view),
        REFUND_SPECIALIST => specialist::next(&view, reach(request)),
        ORDER_INVESTIGATOR => specialist::investigate(&view, reach(request)),
        other => Step::Say(format!(
            "The offline rules have no behaviour for the agent {other:?}, so I cannot answer here."
        )),
    };
    step.into_response(&view, request)
}

/// What the agent's tools let it reach.
fn reach(request: &ModelRequest) -> specialist::Reach<'static> {
    let offered = |name: &str| request.tools.iter().any(|tool| tool.name == name);
    specialist::Reach {
        returns_desk: offered(CHECK_RETURNED_PARCEL),
        carrier: offered(CHECK_CARRIER_TRACKING),
        investigators: offered(INVESTIGATE_ORDERS),
        briefed_answer: None,
    }
}

/// What the rules decided to do next.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Say(String),
    Call { tool: &'static str, args: Value },
    HandOff { to: &'static str, reason: String },
}

impl Step {
    fn into_response(self, view: &View<'_>, request: &ModelRequest) -> ModelResponse {
        let offered = |name: &str| request.tools.iter().any(|tool| tool.name == name);
        let id = format!("offline_{}", view.call_count() + 1);
        match self {
            Step::Say(text) => ModelResponse::text(text),
            Step::Call { tool, args } if offered(tool) => {
                ModelResponse::calls(vec![ToolCall::new(id, tool, args)])
            }
            Step::HandOff { to, reason } if offered(HANDOFF_TOOL) => {
                ModelResponse::calls(vec![ToolCall::new(
                    id,
                    HANDOFF_TOOL,
                    json!({ "to": to, "reason": reason }),
                )])
            }
            Step::Call { tool, .. } => ModelResponse::text(format!(
                "I can't do that here: the {tool} tool is not available to me."
            )),
            Step::HandOff { to, .. } => ModelResponse::text(format!(
                "This needs the {to}, and I can't hand the conversation over from here."
            )),
        }
    }
}

/// The question recorded for the customer that still awaits an answer:
/// no proposal settled it and the reply to it (the customer's next message,
/// the only one that counts as its answer) was not an answer. Returns
/// (order id, question).
fn pending_question(view: &View<'_>) -> Option<(String, String)> {
    let asked = view.latest(RECORD_UNKNOWN, |r| r.value::<RecordedQuestion>().is_some())?;
    let recorded: RecordedQuestion = asked.value()?;
    let order_id = recorded.order_id?;
    let settled = view
        .latest(PREPARE_REFUND, |r| {
            r.index > asked.index
                && r.value::<PreparedProposal>()
                    .is_some_and(|p| p.order_id == order_id)
        })
        .is_some();
    let answered_before =
        view.user_messages_after(asked.index)
            .next()
            .is_some_and(|(index, text)| {
                index < view.turn_start() && Utterance::of(text).opened.is_some()
            });
    (!settled && !answered_before).then_some((order_id, recorded.question))
}

#[cfg(test)]
mod tests;
