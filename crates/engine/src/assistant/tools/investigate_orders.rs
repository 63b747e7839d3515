//! `investigate_orders`: several of the customer's orders at once, one
//! subagent (the order investigator) per order, in parallel, at most the
//! conversation's lane limit at a time. Each has its own transcript, step
//! budget and events, and starts from what this conversation established
//! (a copy of its ledger: what was read, asked and answered); each ends
//! with its own proposal or question. What they found comes back as one
//! result that the conversation's ledger takes in as if it had read, asked
//! and proposed it itself, so the evidence rules of `prepare_refund` hold
//! for subagents exactly as for the specialist.
//!
//! Stop reaches them: their controls are children of the turn's, and if
//! this call is dropped (the turn stopped, or the call ran past its time)
//! they are stopped too. The turn saves only after every one has ended —
//! unless a newer message (`now`) preempted it: then they run on in the
//! background and their findings are recorded in the conversation when
//! they end, as the result of this call continued.

use super::{
    CHECK_RETURNED_PARCEL, INVESTIGATE_ORDERS, PREPARE_REFUND, ParcelInspection, PreparedProposal,
    RECORD_UNKNOWN, RecordedQuestion, normalize_order_id, scope,
};
use crate::assistant::scope::TurnScope;
use crate::assistant::subagents::UntilTheyEnd;
use crate::assistant::team::{ORDER_INVESTIGATOR, REFUND_SPECIALIST};
use agents::{
    Provenance, SubagentEnd, SubagentReport, SubagentTask, Tool, ToolCall, ToolContext,
    ToolOutcome, UserMessage, found_results, parse_arguments,
};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Most orders one call investigates (the lane runs at most its limit of
/// them at a time; the rest wait for a place).
pub const MAX_ORDERS: usize = 8;
/// Each investigator's own step budget: read the order, the policy (twice
/// at most), the returns desk, ask or propose, answer.
pub const INVESTIGATOR_STEPS: u32 = 8;
/// How long the whole call may take: the investigators have their own
/// step and tool limits; this bounds the wait for a place in the lane.
const TIME_LIMIT: Duration = Duration::from_secs(300);

/// How an investigator's task begins; the order number follows.
pub const BRIEFING_START: &str = "Investigate order ";
/// Where the briefing gives the customer's answer to the question asked
/// about the order before (the conversation's ledger bound it).
pub const BRIEFING_ANSWER: &str = "The customer answered: \"";
/// Where the briefing quotes the customer's message, last.
pub const BRIEFING_WORDS: &str = "\nTheir message: ";

#[derive(Debug, Clone, Copy, Default)]
pub struct InvestigateOrders;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    order_ids: Vec<String>,
}

/// What the investigators found, as the model (and the ledger) reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Investigation {
    pub orders: Vec<InvestigatedOrder>,
}

/// One order's investigation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvestigatedOrder {
    pub order_id: String,
    /// The subagent's id (its events carry it).
    pub subagent: String,
    #[serde(flatten)]
    pub end: SubagentEnd,
    pub steps: u32,
    /// What the investigator would tell the customer.
    pub reply: String,
    /// The sources it read.
    #[serde(default)]
    pub evidence: Vec<Provenance>,
    /// The question it recorded for the customer.
    #[serde(default)]
    pub question: Option<RecordedQuestion>,
    /// The proposal it prepared.
    #[serde(default)]
    pub proposal: Option<PreparedProposal>,
    /// The returns desk's signed answer about the parcel.
    #[serde(default)]
    pub parcel: Option<ParcelFinding>,
}

/// The returns desk's answer and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParcelFinding {
    pub inspection: ParcelInspection,
    pub provenance: Provenance,
}

#[async_trait]
impl Tool for InvestigateOrders {
    fn name(&self) -> &str {
        INVESTIGATE_ORDERS
    }

    fn description(&self) -> &str {
        "Investigate several of the customer's orders at once: one order investigator per order works in parallel, reads the order and the policy, asks what the records cannot say, and prepares a refund proposal where the evidence supports one. Use it when a message asks about two or more orders, or answers questions asked about several. Returns each order's result: its reply, and its proposal or question."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "order_ids": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": MAX_ORDERS,
                    "description": "The order numbers, e.g. [\"4821\", \"4822\"]."
                }
            },
            "required": ["order_ids"],
            "additionalProperties": false
        })
    }

    fn time_limit(&self, _runner_limit: Option<Duration>) -> Option<Duration> {
        Some(TIME_LIMIT)
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> ToolOutcome {
        let scope = match scope(ctx) {
            Ok(scope) => scope,
            Err(outcome) => return outcome,
        };
        if let Err(outcome) = super::signed_in_customer(scope) {
            return outcome;
        }
        let Some(subagents) = scope.subagents() else {
            return ToolOutcome::refused(
                "an order investigator cannot start investigators of its own",
            );
        };
        let args: Args = match parse_arguments(args) {
            Ok(args) => args,
            Err(outcome) => return outcome,
        };
        let order_ids = match order_ids(&args.order_ids) {
            Ok(ids) => ids,
            Err(outcome) => return outcome,
        };
        let control = subagents.batch_control();
        let customer_words = scope
            .ledger()
            .last_customer_message()
            .map(|message| message.text.clone())
            .unwrap_or_default();
        let mut running = Vec::with_capacity(order_ids.len());
        for order_id in &order_ids {
            let child = scope.for_subagent();
            let briefing = briefing(order_id, &customer_words, &child);
            let task = SubagentTask {
                id: storage::ids::new_id("sub"),
                agent: ORDER_INVESTIGATOR.to_owned(),
                label: format!("order {order_id}"),
                message: UserMessage::new(briefing, scope.tools.now()),
                max_steps: INVESTIGATOR_STEPS,
            };
            let child_ctx = ToolContext::new(ctx.principal().clone()).with_extension(child);
            running.push((
                order_id.clone(),
                subagents.start(task, child_ctx, control.clone()),
            ));
        }
        let gathering = subagents.gather(gather(running));
        let call = ToolCall::new(
            ctx.call_id().unwrap_or(INVESTIGATE_ORDERS),
            INVESTIGATE_ORDERS,
            json!({ "order_ids": order_ids }),
        );
        let agent = ctx.agent().unwrap_or(REFUND_SPECIALIST).to_owned();
        let tools = Arc::clone(&scope.tools);
        // Dropped before they end: a preempted turn's investigators run on
        // and their findings are recorded later; otherwise they stop.
        let mut until_they_end = UntilTheyEnd::new(
            subagents,
            control,
            gathering,
            (scope.conversation_id.clone(), agent, call),
            move |work| tools.continue_in_background(work),
        );
        let Some(investigation) = until_they_end.findings().await else {
            return ToolOutcome::unknown("the investigators' reports could not be gathered");
        };
        scope.ledger().investigated(&investigation);
        investigation.outcome()
    }
}

impl Investigation {
    /// The tool's result: the findings, with every source the
    /// investigators read as its provenance.
    pub fn outcome(&self) -> ToolOutcome {
        let provenance = self
            .orders
            .iter()
            .flat_map(|order| order.evidence.iter().cloned())
            .collect();
        match serde_json::to_value(self) {
            Ok(value) => ToolOutcome::found(value, provenance),
            Err(error) => ToolOutcome::unknown(format!(
                "the investigators' findings could not be written down: {error}"
            )),
        }
    }
}

/// Waits for every investigator and reads what each found.
async fn gather(running: Vec<(String, JoinHandle<SubagentReport>)>) -> Investigation {
    let mut orders = Vec::with_capacity(running.len());
    for (order_id, handle) in running {
        orders.push(match handle.await {
            Ok(report) => findings(&order_id, &report),
            Err(error) => {
                tracing::error!(%error, order.id = %order_id, "an order investigator's task failed");
                failed(&order_id, "the investigator stopped unexpectedly")
            }
        });
    }
    Investigation { orders }
}

/// One line per order: what its investigator would tell the customer.
pub fn relay(investigation: &Investigation) -> String {
    let mut reply = format!(
        "I checked {} orders at the same time:",
        investigation.orders.len()
    );
    for order in &investigation.orders {
        let said = match &order.end {
            SubagentEnd::Answered if !order.reply.trim().is_empty() => order.reply.trim().to_owned(),
            SubagentEnd::Answered | SubagentEnd::Failed { .. } => {
                "I couldn't finish checking it just now; ask me about it again in a moment."
                    .to_owned()
            }
            SubagentEnd::Stopped { .. } => "Stopped before I finished checking it.".to_owned(),
            SubagentEnd::StepLimit { .. } => {
                "I couldn't finish checking it within the steps I allow myself; ask me about it on its own."
                    .to_owned()
            }
        };
        reply.push_str(&format!("\n- Order {}: {said}", order.order_id));
    }
    if investigation
        .orders
        .iter()
        .any(|order| order.question.is_some())
    {
        reply.push_str("\nOne answer is enough if it is the same for every order.");
    }
    reply
}

/// The order ids as the customer's orders are numbered, each once, in the
/// order given.
fn order_ids(raw: &[String]) -> Result<Vec<String>, ToolOutcome> {
    let mut ids: Vec<String> = Vec::with_capacity(raw.len());
    for id in raw {
        let id = normalize_order_id(id)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.is_empty() || ids.len() > MAX_ORDERS {
        return Err(ToolOutcome::invalid_arguments(format!(
            "order_ids must name 1 to {MAX_ORDERS} different orders"
        )));
    }
    Ok(ids)
}

/// The investigator's task: its order, the customer's answer to the
/// question asked about this order before (when the conversation's ledger
/// bound one), and last the customer's words, so nothing they wrote can
/// pass for the lines before it.
fn briefing(order_id: &str, customer_words: &str, scope: &TurnScope) -> String {
    let mut task = format!(
        "{BRIEFING_START}{order_id} for the customer and prepare a refund proposal if the evidence supports one; otherwise ask what the records cannot say, or explain why it does not qualify."
    );
    if let Some((question, answer)) = scope.ledger().answer_for(order_id) {
        task.push_str(&format!(
            "\nAsked before: \"{question}\" {BRIEFING_ANSWER}{}\"",
            answer.text.replace('\n', " ")
        ));
    }
    task.push_str(&format!("{BRIEFING_WORDS}\"{}\"", customer_words.trim()));
    task
}

/// What the investigator's transcript shows it found.
fn findings(order_id: &str, report: &SubagentReport) -> InvestigatedOrder {
    let mut found = InvestigatedOrder {
        order_id: order_id.to_owned(),
        subagent: report.id.clone(),
        end: report.end.clone(),
        steps: report.steps,
        reply: report.reply.clone(),
        evidence: Vec::new(),
        question: None,
        proposal: None,
        parcel: None,
    };
    for result in found_results(&report.transcript) {
        let (value, provenance) = (result.value, result.provenance);
        match result.tool {
            RECORD_UNKNOWN => found.question = serde_json::from_value(value).ok(),
            PREPARE_REFUND => found.proposal = serde_json::from_value(value).ok(),
            CHECK_RETURNED_PARCEL => {
                if let (Ok(inspection), Some(provenance)) = (
                    serde_json::from_value::<ParcelInspection>(value),
                    provenance.first().cloned(),
                ) {
                    found.parcel = Some(ParcelFinding {
                        inspection,
                        provenance,
                    });
                }
                continue;
            }
            _ => {}
        }
        for item in provenance {
            found.evidence.retain(|known| known.source != item.source);
            found.evidence.push(item);
        }
    }
    if found.proposal.is_some() {
        // A proposal settles the question it was asked with.
        found.question = None;
    }
    found
}

fn failed(order_id: &str, why: &str) -> InvestigatedOrder {
    InvestigatedOrder {
        order_id: order_id.to_owned(),
        subagent: String::new(),
        end: SubagentEnd::Failed {
            error: why.to_owned(),
        },
        steps: 0,
        reply: String::new(),
        evidence: Vec::new(),
        question: None,
        proposal: None,
        parcel: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_ids_are_normalized_deduplicated_and_bounded() {
        let ids = order_ids(&["#4821".into(), "order 4822".into(), "4821".into()]);
        assert_eq!(ids.ok(), Some(vec!["4821".to_owned(), "4822".to_owned()]));
        assert!(order_ids(&[]).is_err());
        let too_many: Vec<String> = (0..=MAX_ORDERS).map(|n| format!("48{n:02}")).collect();
        assert!(order_ids(&too_many).is_err());
        assert!(order_ids(&["48 21".into()]).is_err());
    }
}
