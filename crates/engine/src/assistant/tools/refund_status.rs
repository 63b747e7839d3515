//! `refund_status`: where the customer's refunds stand, read from the
//! proposals' real state and said in plain words: what has happened, what
//! happens next and when. Read-only: it never prepares, changes or
//! approves anything, and it reads only the conversation's customer's
//! orders.

use super::{REFUND_STATUS, error_kind, normalize_order_id, scope, scoped_order};
use crate::assistant::scope::TurnScope;
use agents::{Tool, ToolContext, ToolOutcome, parse_arguments};
use async_trait::async_trait;
use domain::Timestamp;
use domain::proposal::{ProposalState, ProposalStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use storage::proposals::StoredProposal;

/// Refunds reported at most: the latest ones are what a customer asks about.
const MAX_REFUNDS: usize = 3;
/// Proposals read per order, enough to skip replaced ones.
const PER_ORDER: u64 = 20;

#[derive(Debug, Clone, Copy, Default)]
pub struct RefundStatus;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(default)]
    order_id: Option<String>,
}

/// What the tool returns, as the model (and the offline rules) read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundStatusReport {
    /// The order asked about; none: all of the customer's orders.
    pub order_id: Option<String>,
    /// Newest first.
    pub refunds: Vec<RefundStatusLine>,
    /// Everything above in words the customer can be given as they are.
    pub summary: String,
}

/// One refund request and where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundStatusLine {
    pub proposal_id: String,
    pub order_id: String,
    pub amount: String,
    /// The proposal's status word (`awaiting_approval`, `succeeded`, …).
    pub status: String,
    /// Where it stands, what happens next and when, for the customer.
    pub in_words: String,
}

#[async_trait]
impl Tool for RefundStatus {
    fn name(&self) -> &str {
        REFUND_STATUS
    }

    fn description(&self) -> &str {
        "Where the customer's refund requests stand (awaiting approval, approved, refunded on a date, rejected with the reason, being checked), with what happens next and when. Read-only: use it whenever the customer asks about the status of a refund, and never prepare a new refund to answer such a question. Pass order_id for one order, or nothing for the customer's latest refunds."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "order_id": {
                    "type": "string",
                    "description": "The order whose refund the customer asks about, if they named one."
                }
            },
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
        let order_id = match args.order_id.as_deref().map(normalize_order_id).transpose() {
            Ok(order_id) => order_id,
            Err(outcome) => return outcome,
        };
        let orders = match &order_id {
            Some(order_id) => match scoped_order(scope, order_id).await {
                Ok(order) => vec![order.id],
                Err(outcome) => return outcome,
            },
            None => match super::signed_in_customer(scope) {
                Err(outcome) => return outcome,
                Ok(customer_id) => match scope.tools.customer_orders(&customer_id).await {
                    Ok(orders) => orders.into_iter().map(|order| order.id).collect(),
                    Err(error) => return unreadable(&error),
                },
            },
        };
        let refunds = match latest_refunds(scope, &orders).await {
            Ok(refunds) => refunds,
            Err(error) => return unreadable(&error),
        };
        let report = report(order_id, &refunds, scope.tools.now());
        ToolOutcome::found(
            serde_json::to_value(&report).unwrap_or_default(),
            Vec::new(),
        )
    }
}

fn unreadable(error: &storage::StorageError) -> ToolOutcome {
    tracing::warn!(%error, "reading refund proposals failed");
    ToolOutcome::unknown(format!(
        "the refund records could not be read ({}); whether a refund is under way is unknown, so say you cannot check it right now",
        error_kind(error)
    ))
}

/// The orders' refund proposals, newest first, replaced ones left out.
async fn latest_refunds(
    scope: &TurnScope,
    orders: &[String],
) -> Result<Vec<StoredProposal>, storage::StorageError> {
    let mut refunds = Vec::new();
    for order_id in orders {
        let stored = scope.tools.order_proposals(order_id, PER_ORDER).await?;
        refunds.extend(
            stored
                .into_iter()
                .filter(|p| p.status() != ProposalStatus::Superseded),
        );
    }
    refunds.sort_by_key(|p| std::cmp::Reverse(p.proposal.created_at));
    refunds.truncate(MAX_REFUNDS);
    Ok(refunds)
}

fn report(
    order_id: Option<String>,
    refunds: &[StoredProposal],
    now: Timestamp,
) -> RefundStatusReport {
    let lines: Vec<RefundStatusLine> = refunds
        .iter()
        .map(|stored| RefundStatusLine {
            proposal_id: stored.proposal.id.clone(),
            order_id: stored.proposal.order_id.clone(),
            amount: stored.proposal.amount.display(),
            status: stored.status().as_str().to_owned(),
            in_words: in_words(stored, now),
        })
        .collect();
    let summary = match (&order_id, lines.as_slice()) {
        (Some(order_id), []) => format!(
            "There is no refund request for order {order_id} yet, so nothing is under way. If you'd like, I can check whether it qualifies for a refund."
        ),
        (None, []) => "There are no refund requests on your account yet, so nothing is under way. Tell me the order number if you'd like me to check an order for a refund.".to_owned(),
        (_, lines) => lines
            .iter()
            .map(|line| line.in_words.clone())
            .collect::<Vec<_>>()
            .join(" "),
    };
    RefundStatusReport {
        order_id,
        refunds: lines,
        summary,
    }
}

/// "3 December 2026".
fn day(at: Timestamp) -> String {
    at.format("%-d %B %Y").to_string()
}

/// "3 December 2026 at 14:00 UTC".
fn moment(at: Timestamp) -> String {
    at.format("%-d %B %Y at %H:%M UTC").to_string()
}

/// Where one refund stands, what happens next and when, for the customer.
pub fn in_words(stored: &StoredProposal, now: Timestamp) -> String {
    let proposal = &stored.proposal;
    let subject = format!(
        "Your refund of {} for order {} (request {})",
        proposal.amount.display(),
        proposal.order_id,
        proposal.id
    );
    match &stored.state {
        ProposalState::AwaitingApproval { expires_at, .. } if *expires_at > now => format!(
            "{subject} is waiting for approval by a member of our staff; they decide by {} at the latest. Nothing has been refunded yet, and nothing more is needed from you.",
            moment(*expires_at)
        ),
        ProposalState::AwaitingApproval { .. } | ProposalState::Expired { .. } => format!(
            "{subject} was not decided in time and has lapsed; nothing was refunded. Ask me to check the order again and I'll prepare a new request if it still qualifies."
        ),
        ProposalState::Approved { .. } => format!(
            "{subject} has been approved; the money is about to be sent back to your original payment method. I'll show it as refunded once the payment provider confirms it."
        ),
        ProposalState::Executing { .. } => format!(
            "{subject} has been approved and is being sent back to your original payment method right now."
        ),
        ProposalState::OutcomeUnknown { next_check_at, .. } => format!(
            "{subject} has been approved and sent; we are confirming with the payment provider that it went through (next check {}). You don't need to do anything.",
            moment(*next_check_at)
        ),
        ProposalState::Succeeded { receipt } | ProposalState::Verified { receipt, .. } => format!(
            "{subject} was refunded on {} to your original payment method. Banks usually take 5–10 business days to show it on your statement.",
            day(receipt.recorded_at)
        ),
        ProposalState::Rejected { reason, .. } => format!(
            "{subject} was declined by a member of our staff, who gave this reason: \"{}\". Nothing was refunded.",
            reason.trim()
        ),
        ProposalState::Failed { .. } | ProposalState::NeedsAttention { .. } => format!(
            "{subject} needs attention: a member of our staff is checking it with the payment provider. You don't need to do anything; we'll sort it out."
        ),
        ProposalState::Invalidated { .. } => format!(
            "{subject} was withdrawn before any money was sent, because the order changed since it was prepared. Ask me to check the order again if you'd still like a refund."
        ),
        ProposalState::Superseded { by } => {
            format!("{subject} was replaced by request {by}; nothing was refunded from it.")
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use domain::proposal::{
        Evidence, EvidenceKind, ProposalDraft, Provenance, Receipt, RefundProposal,
    };
    use domain::{Currency, Money};

    fn at(text: &str) -> Timestamp {
        chrono::DateTime::parse_from_rfc3339(text).unwrap().to_utc()
    }

    fn stored(state: impl FnOnce(&RefundProposal) -> ProposalState) -> StoredProposal {
        let draft = ProposalDraft {
            order_id: "4822".into(),
            payment_reference: "pay_4822".into(),
            amount: Money::new(5020, Currency::EUR),
            lines: Vec::new(),
            evidence: vec![
                Evidence {
                    kind: EvidenceKind::Order,
                    reference: "order:4822".into(),
                    title: "Order 4822".into(),
                    section: None,
                    version: "1".into(),
                    quote: "delivered".into(),
                },
                Evidence::policy(
                    "returns-policy:section-3",
                    "Returns",
                    None,
                    "9f2c",
                    "Unopened…",
                ),
            ],
            open_questions: Vec::new(),
            recommendation: "Refund it.".into(),
            provenance: Provenance {
                agent: "refund_specialist".into(),
                conversation_id: None,
                on_behalf_of: Some("usr_cas".into()),
                requested_by: "usr_cas".into(),
                submitted_by: None,
            },
        };
        let proposal = RefundProposal::new(
            draft,
            "prp_7",
            at("2026-12-01T10:00:00Z"),
            chrono::Duration::hours(24),
        )
        .unwrap();
        StoredProposal {
            state: state(&proposal),
            proposal,
            state_version: 1,
            updated_at: at("2026-12-01T10:00:00Z"),
        }
    }

    #[test]
    fn a_customer_is_told_where_their_refund_stands_what_happens_next_and_when() {
        let now = at("2026-12-01T12:00:00Z");
        let receipt = Receipt {
            provider: "sandbox".into(),
            provider_refund_id: "re_1".into(),
            amount: Money::new(5020, Currency::EUR),
            status: "succeeded".into(),
            recorded_at: at("2026-12-03T09:30:00Z"),
        };
        let cases = [
            (
                stored(ProposalState::initial),
                "waiting for approval by a member of our staff; they decide by 2 December 2026 at 10:00 UTC",
            ),
            (
                stored(|_| ProposalState::Approved {
                    approvals: Vec::new(),
                    expires_at: now,
                }),
                "has been approved; the money is about to be sent back",
            ),
            (
                stored(|_| ProposalState::Succeeded {
                    receipt: receipt.clone(),
                }),
                "was refunded on 3 December 2026 to your original payment method. Banks usually take 5–10 business days",
            ),
            (
                stored(|_| ProposalState::Rejected {
                    by: "usr_anna".into(),
                    reason: "the tent was used".into(),
                }),
                "was declined by a member of our staff, who gave this reason: \"the tent was used\"",
            ),
            (
                stored(|_| ProposalState::NeedsAttention {
                    reason: "provider said no".into(),
                    receipt: None,
                }),
                "a member of our staff is checking it",
            ),
        ];
        for (stored, expected) in cases {
            let words = in_words(&stored, now);
            assert!(
                words.starts_with("Your refund of 50.20 EUR for order 4822 (request prp_7)"),
                "{words}"
            );
            assert!(words.contains(expected), "{words}");
        }
        // Past its deadline, an undecided request is not "waiting" any more.
        let lapsed = in_words(&stored(ProposalState::initial), at("2026-12-03T00:00:00Z"));
        assert!(
            lapsed.contains("has lapsed; nothing was refunded"),
            "{lapsed}"
        );
    }

    #[test]
    fn no_refund_request_is_said_as_nothing_under_way_not_as_an_error() {
        let report = report(Some("4822".into()), &[], at("2026-12-01T12:00:00Z"));
        assert!(report.refunds.is_empty());
        assert!(
            report
                .summary
                .starts_with("There is no refund request for order 4822 yet")
        );
    }
}
