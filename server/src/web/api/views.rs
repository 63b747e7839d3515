//! What the API shows of proposals: plain JSON documented in the OpenAPI
//! document. Money is integer minor units with an ISO currency.

use chrono::{DateTime, Utc};
use domain::proposal::{Approval, Decision, Evidence, OpenQuestion};
use engine::proposals::queries::ProposalDetail;
use serde::{Deserialize, Serialize};
use storage::journal::JournalEvent;
use storage::proposals::StoredProposal;
use utoipa::ToSchema;

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProposalView {
    /// Opaque id, also the payment idempotency key.
    pub id: String,
    pub kind: String,
    /// `awaiting_approval`, `approved`, `executing`, `outcome_unknown`,
    /// `succeeded`, `verified`, `failed`, `rejected`, `expired`,
    /// `invalidated`, `superseded`, `needs_attention`.
    pub status: String,
    /// The status in words for a person: `Refunded and verified`.
    pub status_label: String,
    pub order_id: String,
    pub payment_reference: String,
    pub amount_minor: i64,
    pub currency: String,
    /// For people: `79.00 EUR`.
    pub amount_display: String,
    pub recommendation: String,
    pub evidence: Vec<EvidenceView>,
    pub open_questions: Vec<QuestionView>,
    /// The order lines (SKUs) it refunds; empty: the whole order.
    pub lines: Vec<String>,
    /// The agent, bound to the submitting credential: `refund_specialist`
    /// (Countersign's own assistant), `external:<user name>` (an agent
    /// service account) or `staff:<user name>`.
    pub agent: String,
    /// The account whose credential submitted it (absent on proposals
    /// stored before submitters were recorded).
    pub submitted_by: Option<SubmitterView>,
    pub requested_by: String,
    pub on_behalf_of: Option<String>,
    pub conversation_id: Option<String>,
    pub supersedes: Option<String>,
    /// SHA-256 of exactly what would execute; send it back to approve.
    pub action_digest: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The state with its data (approvals so far, lease, receipt, reason…).
    #[schema(value_type = Object)]
    pub state: serde_json::Value,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SubmitterView {
    pub user_id: String,
    /// The account's user name.
    pub name: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EvidenceView {
    /// `order`, `policy`, `peer_answer`, `browser_capture` or `other`.
    pub kind: String,
    pub reference: String,
    pub title: String,
    pub section: Option<String>,
    /// Order version, or the policy version's content hash.
    pub version: String,
    pub quote: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct QuestionView {
    pub question: String,
    /// `customer` or `approver`.
    pub ask: String,
    /// The answer, quoted word for word.
    pub answer: Option<String>,
    /// The customer message that gave the answer (the reply in the turn
    /// after the question was asked); absent when the answer was not given
    /// in a conversation or was stored before answers were bound to it.
    pub answered_in: Option<AnsweredInView>,
}

/// A customer message in a conversation.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AnsweredInView {
    pub conversation_id: String,
    /// Its position in the conversation's `messages`
    /// (`GET /api/v1/conversations/{id}`), 0-based.
    pub message_index: u64,
    /// When the customer sent it (absent for messages stored before
    /// messages were timed).
    pub at: Option<DateTime<Utc>>,
    /// Where a person reads it: the conversation page, at the message.
    pub link: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DecisionView {
    pub id: String,
    pub approver_id: String,
    /// `approve` or `reject`.
    pub decision: String,
    pub reason: Option<String>,
    pub action_digest_shown: String,
    #[schema(value_type = Object)]
    pub conditions: serde_json::Value,
    pub decided_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReceiptView {
    pub provider: String,
    pub provider_refund_id: String,
    pub amount_minor: i64,
    pub currency: String,
    pub status: String,
    pub recorded_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProposalDetailView {
    pub proposal: ProposalView,
    pub decisions: Vec<DecisionView>,
    pub receipt: Option<ReceiptView>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventView {
    pub seq: i64,
    pub proposal_id: Option<String>,
    pub order_id: Option<String>,
    pub actor: String,
    pub kind: String,
    pub from_status: Option<String>,
    pub to_status: Option<String>,
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
    pub at: DateTime<Utc>,
    pub hash: String,
}

fn enum_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn evidence_view(e: &Evidence) -> EvidenceView {
    EvidenceView {
        kind: enum_name(&e.kind),
        reference: e.reference.clone(),
        title: e.title.clone(),
        section: e.section.clone(),
        version: e.version.clone(),
        quote: e.quote.clone(),
    }
}

fn question_view(q: &OpenQuestion) -> QuestionView {
    QuestionView {
        question: q.question.clone(),
        ask: enum_name(&q.ask),
        answer: q.answer.clone(),
        answered_in: q.answered_in.as_ref().map(|source| AnsweredInView {
            conversation_id: source.conversation_id.clone(),
            message_index: source.message_index,
            at: source.at,
            link: format!(
                "/chat?conversation={}#{}",
                source.conversation_id,
                source.anchor()
            ),
        }),
    }
}

impl From<&StoredProposal> for ProposalView {
    fn from(stored: &StoredProposal) -> Self {
        let p = &stored.proposal;
        ProposalView {
            id: p.id.clone(),
            kind: "refund".to_owned(),
            status: stored.status().as_str().to_owned(),
            status_label: stored.status().label().to_owned(),
            order_id: p.order_id.clone(),
            payment_reference: p.payment_reference.clone(),
            amount_minor: p.amount.amount_minor,
            currency: p.amount.currency.code().to_owned(),
            amount_display: p.amount.display(),
            recommendation: p.recommendation.clone(),
            evidence: p.evidence.iter().map(evidence_view).collect(),
            open_questions: p.open_questions.iter().map(question_view).collect(),
            lines: p.lines.clone(),
            agent: p.provenance.agent.clone(),
            submitted_by: p.provenance.submitted_by.as_ref().map(|s| SubmitterView {
                user_id: s.user_id.clone(),
                name: s.name.clone(),
            }),
            requested_by: p.provenance.requested_by.clone(),
            on_behalf_of: p.provenance.on_behalf_of.clone(),
            conversation_id: p.provenance.conversation_id.clone(),
            supersedes: p.supersedes.clone(),
            action_digest: p.action_digest.clone(),
            created_at: p.created_at,
            expires_at: p.expires_at,
            state: serde_json::to_value(&stored.state).unwrap_or_default(),
        }
    }
}

fn decision_view(a: &Approval) -> DecisionView {
    let (decision, reason) = match &a.decision {
        Decision::Approve => ("approve", None),
        Decision::Reject { reason } => ("reject", Some(reason.clone())),
    };
    DecisionView {
        id: a.id.clone(),
        approver_id: a.approver_id.clone(),
        decision: decision.to_owned(),
        reason,
        action_digest_shown: a.action_digest_shown.clone(),
        conditions: serde_json::to_value(&a.conditions).unwrap_or_default(),
        decided_at: a.decided_at,
        expires_at: a.expires_at,
    }
}

impl From<&ProposalDetail> for ProposalDetailView {
    fn from(detail: &ProposalDetail) -> Self {
        ProposalDetailView {
            proposal: ProposalView::from(&detail.stored),
            decisions: detail.decisions.iter().map(decision_view).collect(),
            receipt: detail.receipt.as_ref().map(|r| ReceiptView {
                provider: r.provider.clone(),
                provider_refund_id: r.provider_refund_id.clone(),
                amount_minor: r.amount_minor,
                currency: r.currency.clone(),
                status: r.status.clone(),
                recorded_at: r.recorded_at,
            }),
        }
    }
}

impl From<&JournalEvent> for EventView {
    fn from(e: &JournalEvent) -> Self {
        EventView {
            seq: e.seq,
            proposal_id: e.proposal_id.clone(),
            order_id: e.order_id.clone(),
            actor: e.actor.clone(),
            kind: e.kind.clone(),
            from_status: e.from_status.clone(),
            to_status: e.to_status.clone(),
            payload: serde_json::from_str(&e.payload).unwrap_or(serde_json::Value::Null),
            at: e.at,
            hash: e.hash.clone(),
        }
    }
}
