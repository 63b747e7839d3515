//! `prepare_refund`: stores a refund proposal awaiting approval, through the
//! same use case outside agents use. It executes nothing.
//!
//! The model decides *what should happen*; this tool decides what it may
//! propose: only with evidence this conversation actually read (the order
//! record and at least one policy passage, from earlier tool results), for
//! the amount computed from the live order (a model's amount is checked,
//! never used), with the conversation's open questions attached.

use super::record_unknown::awaiting_customer;
use super::{PREPARE_REFUND, normalize_order_id, scope, scoped_order};
use crate::assistant::scope::TurnScope;
use crate::proposals::{EvidenceRef, Proposer, SubmitError, SubmitProposal};
use agents::{Provenance, Tool, ToolContext, ToolOutcome, parse_arguments};
use async_trait::async_trait;
use domain::proposal::{Evidence, MAX_RECOMMENDATION_CHARS, OpenQuestion, ProposalStatus};
use domain::{Currency, Money, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The agent name recorded on proposals when the runtime gives none.
const AGENT: &str = "refund_specialist";
const MAX_POLICY_REFERENCES: usize = 5;
/// How a refusal because of a proposal in flight begins (the offline rules
/// relay it as the proposal's status).
pub const ALREADY_IN_FLIGHT: &str = "a refund for this order is already in progress";

#[derive(Debug, Clone, Copy, Default)]
pub struct PrepareRefund;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    order_id: String,
    policy_references: Vec<String>,
    recommendation: String,
    #[serde(default)]
    amount_minor: Option<i64>,
    #[serde(default)]
    currency: Option<String>,
}

/// The stored proposal as the model (and the ledger) reads it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreparedProposal {
    pub proposal_id: String,
    pub order_id: String,
    pub amount_minor: i64,
    pub currency: String,
    pub amount: String,
    pub status: String,
    pub expires_at: Timestamp,
    pub evidence: Vec<String>,
    pub open_questions: Vec<OpenQuestion>,
    pub summary: String,
}

#[async_trait]
impl Tool for PrepareRefund {
    fn name(&self) -> &str {
        PREPARE_REFUND
    }

    fn description(&self) -> &str {
        "Store a refund proposal for a person to approve; nothing is refunded by this. Requires that you read the order with get_order and the cited policy passages with search_policy earlier in this conversation. The amount is computed from the order (everything still refundable); an amount you pass is only checked against it. Open questions recorded with record_unknown are attached with the customer's replies. Returns the proposal id."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "order_id": {"type": "string", "description": "The order to refund."},
                "policy_references": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": MAX_POLICY_REFERENCES,
                    "description": "References of the policy passages the refund rests on, exactly as search_policy returned them, e.g. [\"returns-policy:section-3\"]."
                },
                "recommendation": {
                    "type": "string",
                    "description": "One plain paragraph for the approver: what should happen and why, naming the facts and the policy."
                },
                "amount_minor": {
                    "type": "integer",
                    "description": "Optional: the amount you expect, in minor units (7900 for 79.00 EUR); it must equal the refundable amount."
                },
                "currency": {"type": "string", "description": "Optional: the ISO currency you expect."}
            },
            "required": ["order_id", "policy_references", "recommendation"],
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
        let order_id = match normalize_order_id(&args.order_id) {
            Ok(id) => id,
            Err(outcome) => return outcome,
        };
        let recommendation = args.recommendation.trim();
        let chars = recommendation.chars().count();
        if chars == 0 || chars > MAX_RECOMMENDATION_CHARS {
            return ToolOutcome::invalid_arguments(format!(
                "recommendation must be 1 to {MAX_RECOMMENDATION_CHARS} characters"
            ));
        }
        if args.policy_references.is_empty() || args.policy_references.len() > MAX_POLICY_REFERENCES
        {
            return ToolOutcome::invalid_arguments(format!(
                "policy_references must list 1 to {MAX_POLICY_REFERENCES} references"
            ));
        }

        // Evidence comes before eligibility, and it must be evidence this
        // conversation read, not evidence the model says it read.
        let (order_reading, policy_readings, open_questions, existing, peer_answer, carrier_page) = {
            let ledger = scope.ledger();
            if let Some(wait) = awaiting_customer(ctx, &ledger, &order_id) {
                return wait;
            }
            let Some(order_reading) = ledger.order_evidence(&order_id).cloned() else {
                return ToolOutcome::refused(format!(
                    "no evidence: order {order_id} has not been read in this conversation; call get_order first"
                ));
            };
            let read = ledger.policy_references();
            if read.is_empty() {
                return ToolOutcome::refused(
                    "no evidence: no policy passage has been read in this conversation; call search_policy first",
                );
            }
            let mut policy_readings = Vec::new();
            for reference in &args.policy_references {
                match ledger.policy_evidence(reference.trim()) {
                    Some(reading) => policy_readings.push(reading.clone()),
                    None => {
                        return ToolOutcome::refused(format!(
                            "{reference:?} was not read in this conversation; cite only passages search_policy returned: {}",
                            read.join(", ")
                        ));
                    }
                }
            }
            (
                order_reading,
                policy_readings,
                ledger.open_questions_for(&order_id),
                ledger.proposal_for(&order_id).map(str::to_owned),
                ledger
                    .peer_evidence(&order_id)
                    .map(|(_, provenance)| provenance.source.clone()),
                ledger
                    .carrier_evidence(&order_id)
                    .map(|provenance| provenance.source.clone()),
            )
        };
        if let Some(existing) = existing {
            return ToolOutcome::refused(format!(
                "proposal {existing} for order {order_id} was already prepared in this conversation; it waits for approval"
            ));
        }

        let order = match scoped_order(scope, &order_id).await {
            Ok(order) => order,
            Err(outcome) => return outcome,
        };
        // One live proposal per order and request: one in flight (prepared
        // anywhere: another conversation, the widget, staff) is the one to
        // follow, and its status is the answer. The submission checks the
        // same again in its transaction.
        match in_flight(scope, &order_id).await {
            Ok(None) => {}
            Ok(Some(outcome)) => return outcome,
            Err(error) => {
                tracing::warn!(%error, order.id = %order_id, "reading live proposals failed");
                return ToolOutcome::unknown(
                    "reading the order's proposals failed; do not tell the customer a proposal exists, ask them to try again later",
                );
            }
        }
        if order_reading.version != order.version.to_string() {
            return ToolOutcome::refused(format!(
                "order {order_id} changed since it was read (version {} then, {} now); read it again with get_order",
                order_reading.version, order.version
            ));
        }
        let refundable = match order.refundable() {
            Ok(money) if money.amount_minor > 0 => money,
            Ok(_) => {
                return ToolOutcome::refused(format!(
                    "order {order_id} has nothing left to refund"
                ));
            }
            Err(_) => {
                return ToolOutcome::unknown(format!(
                    "order {order_id}'s refund records are inconsistent; nothing can be computed from them"
                ));
            }
        };
        if let Some(problem) = amount_mismatch(&args, refundable) {
            return ToolOutcome::refused(problem);
        }

        let mut evidence = vec![EvidenceRef {
            reference: Evidence::order_reference(&order_id),
            version: Some(order_reading.version.clone()),
            quote: None,
        }];
        evidence.extend(policy_readings.iter().map(|reading| EvidenceRef {
            reference: reading.source.clone(),
            version: Some(reading.version.clone()),
            quote: None,
        }));
        // Another group's signed answer about the order (the returns desk's
        // inspection) is cited with its provenance; the submission checks
        // it is a completed, verified answer about this order.
        evidence.extend(peer_answer.map(|reference| EvidenceRef {
            reference,
            version: None,
            quote: None,
        }));
        // The carrier's tracking page, read in the browser, is cited with
        // its screenshot; the submission checks it is about this order.
        evidence.extend(carrier_page.map(|reference| EvidenceRef {
            reference,
            version: None,
            quote: None,
        }));
        let customer_id = match super::signed_in_customer(scope) {
            Ok(customer_id) => customer_id,
            Err(outcome) => return outcome,
        };
        let sender = scope.actor();
        let submitted = scope
            .tools
            .submit_refund(
                Proposer::Assistant {
                    agent: ctx.agent().unwrap_or(AGENT),
                    sender: &sender,
                    customer_id: &customer_id,
                },
                SubmitProposal {
                    order_id: order_id.clone(),
                    amount_minor: Some(refundable.amount_minor),
                    currency: Some(refundable.currency.code().to_owned()),
                    lines: Vec::new(),
                    evidence,
                    open_questions,
                    recommendation: recommendation.to_owned(),
                    agent: None,
                    conversation_id: Some(scope.conversation_id.clone()),
                    supersedes: None,
                },
            )
            .await;
        let stored = match submitted {
            Ok(stored) => stored,
            Err(error) => return submit_outcome(&order_id, error),
        };
        let proposal = &stored.proposal;
        scope.ledger().proposed(&order_id, &proposal.id);
        let summary = format!(
            "Proposal {} stored: refund {} for order {} to the original payment method, awaiting approval by a person; nothing has been refunded yet.",
            proposal.id,
            proposal.amount.display(),
            proposal.order_id
        );
        let prepared = PreparedProposal {
            proposal_id: proposal.id.clone(),
            order_id: proposal.order_id.clone(),
            amount_minor: proposal.amount.amount_minor,
            currency: proposal.amount.currency.code().to_owned(),
            amount: proposal.amount.display(),
            status: stored.status().as_str().to_owned(),
            expires_at: proposal.expires_at,
            evidence: proposal
                .evidence
                .iter()
                .map(|e| e.reference.clone())
                .collect(),
            open_questions: proposal.open_questions.clone(),
            summary,
        };
        let cited: Vec<Provenance> = proposal
            .evidence
            .iter()
            .map(|e| Provenance {
                source: e.reference.clone(),
                title: e.title.clone(),
                section: e.section.clone(),
                version: e.version.clone(),
                quote: Some(e.quote.clone()),
            })
            .collect();
        ToolOutcome::found(serde_json::to_value(&prepared).unwrap_or_default(), cited)
    }
}

/// The answer when a proposal for the order is already in flight: its
/// status, in words the model (or the offline rules) can pass on.
async fn in_flight(
    scope: &TurnScope,
    order_id: &str,
) -> Result<Option<ToolOutcome>, storage::StorageError> {
    let live = scope.tools.live_proposals(order_id).await?;
    Ok(live
        .iter()
        .find(|stored| stored.status() != ProposalStatus::Succeeded)
        .map(|stored| {
            ToolOutcome::refused(format!(
                "{ALREADY_IN_FLIGHT}: refund proposal {} for order {order_id} ({}) {}; no second proposal was prepared",
                stored.proposal.id,
                stored.proposal.amount.display(),
                status_in_words(stored.status())
            ))
        }))
}

/// Where a proposal in flight stands, for the customer.
fn status_in_words(status: ProposalStatus) -> &'static str {
    match status {
        ProposalStatus::AwaitingApproval => "is waiting for approval by a member of our staff",
        ProposalStatus::Approved | ProposalStatus::Executing => {
            "is approved and the refund is being sent to the original payment method"
        }
        ProposalStatus::OutcomeUnknown => {
            "is approved; we are confirming with the payment provider that the refund went through"
        }
        ProposalStatus::NeedsAttention => "is being checked by a member of our staff",
        ProposalStatus::Succeeded | ProposalStatus::Verified => "has been refunded",
        _ => "is closed",
    }
}

/// Why the model's amount or currency is not the one the order gives.
fn amount_mismatch(args: &Args, refundable: Money) -> Option<String> {
    let right = format!(
        "the refundable amount of order {} is {} ({} minor units); omit amount_minor or pass exactly that",
        args.order_id.trim(),
        refundable.display(),
        refundable.amount_minor
    );
    if let Some(code) = &args.currency
        && Currency::parse(code.trim()).ok() != Some(refundable.currency)
    {
        return Some(format!("currency {code:?} does not match: {right}"));
    }
    match args.amount_minor {
        Some(amount) if amount != refundable.amount_minor => {
            Some(format!("amount_minor {amount} does not match: {right}"))
        }
        _ => None,
    }
}

/// The submit use case's verdict, as a tool outcome.
fn submit_outcome(order_id: &str, error: SubmitError) -> ToolOutcome {
    match error {
        SubmitError::OrderNotFound(_) | SubmitError::NotYourOrder(_) => {
            ToolOutcome::not_found(format!("order {order_id} on this customer's account"))
        }
        SubmitError::Storage(error) => {
            tracing::warn!(%error, order.id = %order_id, "storing a proposal failed");
            ToolOutcome::unknown(
                "storing the proposal failed; do not tell the customer a proposal exists, ask them to try again later",
            )
        }
        SubmitError::Conflict(error) => {
            tracing::warn!(%error, order.id = %order_id, "storing a proposal conflicted");
            ToolOutcome::unknown(
                "storing the proposal conflicted with another change; do not tell the customer a proposal exists",
            )
        }
        SubmitError::OverlapsLive { live, .. } => ToolOutcome::refused(format!(
            "{ALREADY_IN_FLIGHT}: refund proposal {} for order {order_id} {}; no second proposal was prepared",
            live.first().map(|p| p.id.as_str()).unwrap_or_default(),
            live.first()
                .map_or("is in progress", |p| status_in_words(p.status)),
        )),
        refused => ToolOutcome::refused(refused.to_string()),
    }
}
