//! What the API shows of proposals: plain JSON documented in the OpenAPI
//! document. Money is integer minor units with an ISO currency.
//!
//! The proposal views borrow from the stored proposal they show and are
//! serialised in place: a list of fifty copies nothing but the amount in
//! words and the answers' links.

use chrono::{DateTime, Utc};
use domain::proposal::{
    Approval, Asker, Decision, Evidence, EvidenceKind, OpenQuestion, ProposalState,
};
use engine::proposals::queries::ProposalDetail;
use serde::Serialize;
use storage::journal::JournalEvent;
use storage::proposals::StoredProposal;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
pub struct ProposalView<'a> {
    /// Opaque id, also the payment idempotency key.
    pub id: &'a str,
    pub kind: &'static str,
    /// `awaiting_approval`, `approved`, `executing`, `outcome_unknown`,
    /// `succeeded`, `verified`, `failed`, `rejected`, `expired`,
    /// `invalidated`, `superseded`, `needs_attention`.
    pub status: &'static str,
    /// The status in words for a person: `Refunded and verified`.
    pub status_label: &'static str,
    pub order_id: &'a str,
    pub payment_reference: &'a str,
    pub amount_minor: i64,
    pub currency: &'a str,
    /// For people: `79.00 EUR`.
    pub amount_display: String,
    pub recommendation: &'a str,
    pub evidence: Vec<EvidenceView<'a>>,
    pub open_questions: Vec<QuestionView<'a>>,
    /// The order lines (SKUs) it refunds; empty: the whole order.
    pub lines: &'a Vec<String>,
    /// The agent, bound to the submitting credential: `refund_specialist`
    /// (Countersign's own assistant), `external:<user name>` (an agent
    /// service account) or `staff:<user name>`.
    pub agent: &'a str,
    /// The account whose credential submitted it (absent on proposals
    /// stored before submitters were recorded).
    pub submitted_by: Option<SubmitterView<'a>>,
    pub requested_by: &'a str,
    pub on_behalf_of: Option<&'a str>,
    pub conversation_id: Option<&'a str>,
    pub supersedes: Option<&'a str>,
    /// SHA-256 of exactly what would execute; send it back to approve.
    pub action_digest: &'a str,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The state with its data (approvals so far, lease, receipt, reason…).
    #[schema(value_type = Object)]
    pub state: &'a ProposalState,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubmitterView<'a> {
    pub user_id: &'a str,
    /// The account's user name.
    pub name: &'a str,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EvidenceView<'a> {
    /// `order`, `policy`, `peer_answer`, `browser_capture` or `other`.
    #[schema(value_type = String)]
    pub kind: EvidenceKind,
    pub reference: &'a str,
    pub title: &'a str,
    pub section: Option<&'a str>,
    /// Order version, or the policy version's content hash.
    pub version: &'a str,
    pub quote: &'a str,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct QuestionView<'a> {
    pub question: &'a str,
    /// `customer` or `approver`.
    #[schema(value_type = String)]
    pub ask: Asker,
    /// The answer, quoted word for word.
    pub answer: Option<&'a str>,
    /// The customer message that gave the answer (the reply in the turn
    /// after the question was asked); absent when the answer was not given
    /// in a conversation or was stored before answers were bound to it.
    pub answered_in: Option<AnsweredInView<'a>>,
}

/// A customer message in a conversation.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnsweredInView<'a> {
    pub conversation_id: &'a str,
    /// Its position in the conversation's `messages`
    /// (`GET /api/v1/conversations/{id}`), 0-based.
    pub message_index: u64,
    /// When the customer sent it (absent for messages stored before
    /// messages were timed).
    pub at: Option<DateTime<Utc>>,
    /// Where a person reads it: the conversation page, at the message.
    pub link: String,
}

#[derive(Debug, Serialize, ToSchema)]
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

#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptView {
    pub provider: String,
    pub provider_refund_id: String,
    pub amount_minor: i64,
    pub currency: String,
    pub status: String,
    pub recorded_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProposalDetailView<'a> {
    pub proposal: ProposalView<'a>,
    pub decisions: Vec<DecisionView>,
    pub receipt: Option<ReceiptView>,
}

#[derive(Debug, Serialize, ToSchema)]
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

fn evidence_view(e: &Evidence) -> EvidenceView<'_> {
    EvidenceView {
        kind: e.kind,
        reference: &e.reference,
        title: &e.title,
        section: e.section.as_deref(),
        version: &e.version,
        quote: &e.quote,
    }
}

fn question_view(q: &OpenQuestion) -> QuestionView<'_> {
    QuestionView {
        question: &q.question,
        ask: q.ask,
        answer: q.answer.as_deref(),
        answered_in: q.answered_in.as_ref().map(|source| AnsweredInView {
            conversation_id: &source.conversation_id,
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

impl<'a> From<&'a StoredProposal> for ProposalView<'a> {
    fn from(stored: &'a StoredProposal) -> Self {
        let p = &stored.proposal;
        ProposalView {
            id: &p.id,
            kind: "refund",
            status: stored.status().as_str(),
            status_label: stored.status().label(),
            order_id: &p.order_id,
            payment_reference: &p.payment_reference,
            amount_minor: p.amount.amount_minor,
            currency: p.amount.currency.code(),
            amount_display: p.amount.display(),
            recommendation: &p.recommendation,
            evidence: p.evidence.iter().map(evidence_view).collect(),
            open_questions: p.open_questions.iter().map(question_view).collect(),
            lines: &p.lines,
            agent: &p.provenance.agent,
            submitted_by: p.provenance.submitted_by.as_ref().map(|s| SubmitterView {
                user_id: &s.user_id,
                name: &s.name,
            }),
            requested_by: &p.provenance.requested_by,
            on_behalf_of: p.provenance.on_behalf_of.as_deref(),
            conversation_id: p.provenance.conversation_id.as_deref(),
            supersedes: p.supersedes.as_deref(),
            action_digest: &p.action_digest,
            created_at: p.created_at,
            expires_at: p.expires_at,
            state: &stored.state,
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

impl<'a> From<&'a ProposalDetail> for ProposalDetailView<'a> {
    fn from(detail: &'a ProposalDetail) -> Self {
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
