//! Proposal content: immutable once created.
//!
//! The conversation is for understanding; this structured record is what a
//! person approves and what executes. A different amount, order or
//! recommendation is a *new* proposal that supersedes this one.

use super::action::{ActionKind, RefundAction};
use super::evidence::{Evidence, EvidenceKind, OpenQuestion, Provenance};
use crate::Timestamp;
use crate::money::Money;
use serde::{Deserialize, Serialize};

/// The longest recommendation accepted, in characters: one readable paragraph.
pub const MAX_RECOMMENDATION_CHARS: usize = 2000;

/// What an agent (or a staff member) submits; validated into a
/// [`RefundProposal`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalDraft {
    pub order_id: String,
    pub payment_reference: String,
    pub amount: Money,
    /// The order lines (SKUs) the refund is for; empty: the whole order.
    pub lines: Vec<String>,
    pub evidence: Vec<Evidence>,
    pub open_questions: Vec<OpenQuestion>,
    pub recommendation: String,
    pub provenance: Provenance,
}

/// A validated refund proposal. Fields are public for reading and storage;
/// build one only through [`RefundProposal::new`] so the digest is right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundProposal {
    /// Opaque id (`prp_…`); also the provider idempotency key.
    pub id: String,
    pub order_id: String,
    pub payment_reference: String,
    pub amount: Money,
    /// The order lines (SKUs) the refund is for; empty: the whole order.
    /// Two live proposals for different lines of one order may coexist.
    #[serde(default)]
    pub lines: Vec<String>,
    pub evidence: Vec<Evidence>,
    pub open_questions: Vec<OpenQuestion>,
    /// One plain paragraph: what should happen and why.
    pub recommendation: String,
    pub provenance: Provenance,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    /// The proposal this one replaces, if any.
    pub supersedes: Option<String>,
    /// SHA-256 of [`RefundProposal::action`]'s canonical JSON.
    pub action_digest: String,
}

/// Why a draft cannot become a proposal. Messages are for the person or
/// agent that submitted it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProposalError {
    #[error("a proposal needs an id")]
    MissingId,
    #[error("a refund must be a positive amount, got {0}")]
    AmountNotPositive(Money),
    #[error("a proposal must name the order to refund")]
    MissingOrderId,
    #[error("a proposal must name the payment to refund")]
    MissingPaymentReference,
    #[error("a proposal must record which agent produced it and who asked for it")]
    MissingProvenance,
    #[error("a proposal must cite the order record itself ({reference})")]
    MissingOrderEvidence { reference: String },
    #[error("a proposal must cite at least one policy passage")]
    MissingPolicyEvidence,
    #[error(
        "evidence #{index} has no {field}; every citation needs a reference, title, version and quote"
    )]
    IncompleteEvidence { index: usize, field: &'static str },
    #[error("a proposal needs a recommendation")]
    MissingRecommendation,
    #[error(
        "the recommendation is {chars} characters long; keep it to one paragraph of at most {max}"
    )]
    RecommendationTooLong { chars: usize, max: usize },
    #[error("a proposal must expire after it is created")]
    ExpiryNotAfterCreation,
}

impl RefundProposal {
    /// Validates a draft and computes its action digest.
    ///
    /// # Errors
    /// A [`ProposalError`] naming the first rule the draft breaks.
    pub fn new(
        draft: ProposalDraft,
        id: impl Into<String>,
        now: Timestamp,
        ttl: chrono::Duration,
    ) -> Result<RefundProposal, ProposalError> {
        let id = id.into();
        validate(&id, &draft)?;
        let expires_at = now
            .checked_add_signed(ttl)
            .filter(|expires_at| *expires_at > now)
            .ok_or(ProposalError::ExpiryNotAfterCreation)?;
        let mut proposal = RefundProposal {
            id,
            order_id: draft.order_id,
            payment_reference: draft.payment_reference,
            amount: draft.amount,
            lines: draft.lines,
            evidence: draft.evidence,
            open_questions: draft.open_questions,
            recommendation: draft.recommendation,
            provenance: draft.provenance,
            created_at: now,
            expires_at,
            supersedes: None,
            action_digest: String::new(),
        };
        proposal.action_digest = proposal.action().digest();
        Ok(proposal)
    }

    /// A new proposal replacing this one ("any change is a new proposal").
    /// Mark this one superseded with [`super::Command::Supersede`].
    ///
    /// # Errors
    /// As [`RefundProposal::new`].
    pub fn supersede_with(
        &self,
        draft: ProposalDraft,
        new_id: impl Into<String>,
        now: Timestamp,
        ttl: chrono::Duration,
    ) -> Result<RefundProposal, ProposalError> {
        let mut successor = RefundProposal::new(draft, new_id, now, ttl)?;
        successor.supersedes = Some(self.id.clone());
        Ok(successor)
    }

    /// This proposal's content as a draft, to change and resubmit.
    pub fn to_draft(&self) -> ProposalDraft {
        ProposalDraft {
            order_id: self.order_id.clone(),
            payment_reference: self.payment_reference.clone(),
            amount: self.amount,
            lines: self.lines.clone(),
            evidence: self.evidence.clone(),
            open_questions: self.open_questions.clone(),
            recommendation: self.recommendation.clone(),
            provenance: self.provenance.clone(),
        }
    }

    /// Exactly what would execute.
    pub fn action(&self) -> RefundAction {
        RefundAction {
            kind: ActionKind::Refund,
            proposal_id: self.id.clone(),
            order_id: self.order_id.clone(),
            payment_reference: self.payment_reference.clone(),
            amount_minor: self.amount.amount_minor,
            currency: self.amount.currency,
        }
    }

    /// Whether the stored digest still matches the action: a stored proposal
    /// edited behind our back fails this and must not be approved or run.
    pub fn verify_digest(&self) -> bool {
        self.action().digest() == self.action_digest
    }

    /// Questions nobody has answered yet.
    pub fn open_questions(&self) -> impl Iterator<Item = &OpenQuestion> {
        self.open_questions.iter().filter(|q| q.is_open())
    }
}

fn validate(id: &str, draft: &ProposalDraft) -> Result<(), ProposalError> {
    if id.trim().is_empty() {
        return Err(ProposalError::MissingId);
    }
    if draft.amount.amount_minor <= 0 {
        return Err(ProposalError::AmountNotPositive(draft.amount));
    }
    if draft.order_id.trim().is_empty() {
        return Err(ProposalError::MissingOrderId);
    }
    if draft.payment_reference.trim().is_empty() {
        return Err(ProposalError::MissingPaymentReference);
    }
    if draft.provenance.agent.trim().is_empty() || draft.provenance.requested_by.trim().is_empty() {
        return Err(ProposalError::MissingProvenance);
    }
    if let Some((index, field)) = draft
        .evidence
        .iter()
        .enumerate()
        .find_map(|(i, e)| e.missing_field().map(|field| (i, field)))
    {
        return Err(ProposalError::IncompleteEvidence { index, field });
    }
    // Citing *an* order is not enough: it must be the order being refunded.
    let order_reference = Evidence::order_reference(&draft.order_id);
    if !draft
        .evidence
        .iter()
        .any(|e| e.kind == EvidenceKind::Order && e.reference == order_reference)
    {
        return Err(ProposalError::MissingOrderEvidence {
            reference: order_reference,
        });
    }
    if !draft
        .evidence
        .iter()
        .any(|e| e.kind == EvidenceKind::Policy)
    {
        return Err(ProposalError::MissingPolicyEvidence);
    }
    if draft.recommendation.trim().is_empty() {
        return Err(ProposalError::MissingRecommendation);
    }
    let chars = draft.recommendation.chars().count();
    if chars > MAX_RECOMMENDATION_CHARS {
        return Err(ProposalError::RecommendationTooLong {
            chars,
            max: MAX_RECOMMENDATION_CHARS,
        });
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::money::Currency;
    use crate::proposal::fixtures::{self, t0};
    use chrono::Duration;

    fn create(draft: ProposalDraft) -> Result<RefundProposal, ProposalError> {
        RefundProposal::new(draft, "prp_17", t0(), Duration::hours(24))
    }

    #[test]
    fn a_valid_draft_becomes_a_proposal_with_a_verifiable_digest() {
        let proposal = create(fixtures::draft()).unwrap();
        assert_eq!(proposal.expires_at, t0() + Duration::hours(24));
        assert_eq!(proposal.action_digest, proposal.action().digest());
        assert!(proposal.verify_digest());
        assert_eq!(proposal.open_questions().count(), 1);
    }

    #[test]
    fn a_proposal_edited_after_creation_fails_its_digest() {
        let mut proposal = create(fixtures::draft()).unwrap();
        proposal.amount.amount_minor = 79_000;
        assert!(!proposal.verify_digest());
    }

    #[test]
    fn a_zero_or_negative_refund_is_refused() {
        for amount in [0, -7900] {
            let mut draft = fixtures::draft();
            draft.amount = Money::new(amount, Currency::EUR);
            assert!(matches!(
                create(draft),
                Err(ProposalError::AmountNotPositive(_))
            ));
        }
    }

    #[test]
    fn a_proposal_without_order_and_policy_evidence_is_refused() {
        let mut draft = fixtures::draft();
        draft.evidence.retain(|e| e.kind != EvidenceKind::Policy);
        assert_eq!(create(draft), Err(ProposalError::MissingPolicyEvidence));

        let mut draft = fixtures::draft();
        draft.evidence.retain(|e| e.kind != EvidenceKind::Order);
        assert!(matches!(
            create(draft),
            Err(ProposalError::MissingOrderEvidence { .. })
        ));
    }

    #[test]
    fn citing_a_different_order_is_not_evidence_for_this_one() {
        let mut draft = fixtures::draft();
        draft.order_id = "9999".into();
        assert_eq!(
            create(draft),
            Err(ProposalError::MissingOrderEvidence {
                reference: "order:9999".into()
            })
        );
    }

    #[test]
    fn blank_ids_and_references_are_refused() {
        assert_eq!(
            RefundProposal::new(fixtures::draft(), " ", t0(), Duration::hours(1)),
            Err(ProposalError::MissingId)
        );
        let mut draft = fixtures::draft();
        draft.payment_reference = String::new();
        assert_eq!(create(draft), Err(ProposalError::MissingPaymentReference));
        let mut draft = fixtures::draft();
        draft.provenance.requested_by = String::new();
        assert_eq!(create(draft), Err(ProposalError::MissingProvenance));
    }

    #[test]
    fn a_recommendation_longer_than_a_paragraph_is_refused() {
        let mut draft = fixtures::draft();
        draft.recommendation = "é".repeat(MAX_RECOMMENDATION_CHARS);
        assert!(create(draft.clone()).is_ok(), "counted in characters");
        draft.recommendation.push('x');
        assert!(matches!(
            create(draft),
            Err(ProposalError::RecommendationTooLong { chars: 2001, .. })
        ));
    }

    #[test]
    fn a_proposal_must_expire_after_it_is_created() {
        for ttl in [Duration::zero(), Duration::minutes(-5), Duration::MAX] {
            assert_eq!(
                RefundProposal::new(fixtures::draft(), "prp_17", t0(), ttl),
                Err(ProposalError::ExpiryNotAfterCreation)
            );
        }
    }

    #[test]
    fn a_changed_amount_is_a_new_proposal_that_supersedes_the_old() {
        let original = create(fixtures::draft()).unwrap();
        let mut draft = original.to_draft();
        draft.amount = Money::new(3900, Currency::EUR);
        let successor = original
            .supersede_with(draft, "prp_18", t0(), Duration::hours(24))
            .unwrap();
        assert_eq!(successor.supersedes.as_deref(), Some("prp_17"));
        assert_ne!(successor.action_digest, original.action_digest);
        assert!(successor.verify_digest());
    }

    #[test]
    fn proposals_round_trip_through_json() {
        let proposal = create(fixtures::draft()).unwrap();
        let json = serde_json::to_string(&proposal).unwrap();
        let back: RefundProposal = serde_json::from_str(&json).unwrap();
        assert_eq!(back, proposal);
        assert!(back.verify_digest());
    }
}
