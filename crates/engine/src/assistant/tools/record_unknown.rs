//! `record_unknown`: what the records cannot say stays an explicit unknown.
//! The question is recorded in the conversation (and later in the
//! proposal's open questions) and the model is told to ask it, not guess.

use super::{RECORD_UNKNOWN, normalize_order_id, scope};
use crate::assistant::ledger::Ledger;
use agents::{Tool, ToolContext, ToolOutcome, parse_arguments};
use async_trait::async_trait;
use domain::proposal::Asker;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const MIN_QUESTION_CHARS: usize = 5;
const MAX_QUESTION_CHARS: usize = 300;

#[derive(Debug, Clone, Copy, Default)]
pub struct RecordUnknown;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    question: String,
    #[serde(default)]
    order_id: Option<String>,
    #[serde(default)]
    ask: Option<Asker>,
}

/// What was recorded, as the model (and the ledger) reads it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedQuestion {
    pub question: String,
    pub order_id: Option<String>,
    pub ask: Asker,
    pub instruction: String,
}

/// The refusal `prepare_refund` gives while a question to the customer
/// about `order_id` waits for their reply: one recorded earlier without a
/// reply since, or one a `record_unknown` call in the same model response
/// is recording (the calls of a response run concurrently, so the ledger
/// may not hold it yet). The wait is a rule here, not a hope in the prompt.
pub(super) fn awaiting_customer(
    ctx: &ToolContext,
    ledger: &Ledger,
    order_id: &str,
) -> Option<ToolOutcome> {
    let being_asked = ctx
        .batch()
        .iter()
        .filter(|call| call.name == RECORD_UNKNOWN && call.malformed_arguments.is_none())
        .filter_map(|call| serde_json::from_value::<Args>(call.arguments.clone()).ok())
        .find(|args| {
            args.ask.unwrap_or(Asker::Customer) == Asker::Customer
                && args
                    .order_id
                    .as_deref()
                    .is_none_or(|id| normalize_order_id(id).is_ok_and(|id| id == order_id))
        })
        .map(|args| args.question);
    let question = being_asked.or_else(|| {
        ledger
            .unanswered_customer_question(order_id)
            .map(str::to_owned)
    })?;
    Some(ToolOutcome::refused(format!(
        "the customer has not answered {:?} yet; nothing was prepared. If you have not just recorded it, record it again with record_unknown; ask it in your reply and wait for their answer before preparing a refund for order {order_id}",
        question.trim()
    )))
}

#[async_trait]
impl Tool for RecordUnknown {
    fn name(&self) -> &str {
        RECORD_UNKNOWN
    }

    fn description(&self) -> &str {
        "Record something the records cannot tell you (e.g. \"Was the item opened?\") as an explicit unknown instead of guessing. It is kept in the conversation and written into the proposal's open questions together with the customer's reply. After recording a question for the customer, ask it in your reply and wait for the answer: prepare_refund for that order is refused until the customer has replied."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "question": {
                    "type": "string",
                    "description": "The question, e.g. \"Was the item opened?\"."
                },
                "order_id": {
                    "type": "string",
                    "description": "The order the question is about, if any."
                },
                "ask": {
                    "type": "string",
                    "enum": ["customer", "approver"],
                    "description": "Who can answer it (default: customer)."
                }
            },
            "required": ["question"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> ToolOutcome {
        let scope = match scope(ctx) {
            Ok(scope) => scope,
            Err(outcome) => return outcome,
        };
        let args: Args = match parse_arguments(args) {
            Ok(args) => args,
            Err(outcome) => return outcome,
        };
        let question = args
            .question
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let chars = question.chars().count();
        if !(MIN_QUESTION_CHARS..=MAX_QUESTION_CHARS).contains(&chars) {
            return ToolOutcome::invalid_arguments(format!(
                "question must be {MIN_QUESTION_CHARS} to {MAX_QUESTION_CHARS} characters"
            ));
        }
        let order_id = match args.order_id.as_deref().map(normalize_order_id).transpose() {
            Ok(order_id) => order_id,
            Err(outcome) => return outcome,
        };
        let ask = args.ask.unwrap_or(Asker::Customer);
        scope
            .ledger()
            .asked(question.clone(), order_id.clone(), ask);
        let instruction = match ask {
            Asker::Customer => {
                "Recorded as an open question. Ask the customer exactly this in your reply and wait for their answer; do not assume one."
            }
            Asker::Approver => {
                "Recorded as an open question for the approver; it will be shown with the proposal."
            }
        };
        let recorded = RecordedQuestion {
            question,
            order_id,
            ask,
            instruction: instruction.to_owned(),
        };
        ToolOutcome::found(
            serde_json::to_value(&recorded).unwrap_or_default(),
            Vec::new(),
        )
    }
}
