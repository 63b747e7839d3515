//! Deciding about proposals: the errors every decision can end in, and
//! rejecting (approving, which is batched, lives in `approve`).

use super::Approvals;
use crate::core::Actor;
use crate::execution::step::{ConflictAware, SaveError, Step};
use domain::proposal::{
    Approval, ApprovalContext, ApprovalPolicy, ApproveError, Approver, Command, ConditionsSnapshot,
    EvidenceKind, RefundProposal, TransitionError, check_rejection,
};
use serde_json::json;
use storage::ids::new_id;
use storage::proposals::StoredProposal;
use storage::{ConnectionTrait, StorageError};

#[derive(Debug, thiserror::Error)]
pub enum DecisionError {
    #[error("no proposal {0}")]
    NotFound(String),
    #[error(transparent)]
    Denied(#[from] ApproveError),
    #[error("{0}")]
    Invalid(String),
    /// The provider could not be asked what is left on the charge; nothing
    /// was recorded.
    #[error(
        "the payment provider could not be asked what is left on the charge ({0}); nothing was approved, try again in a moment"
    )]
    ProviderUnavailable(String),
    #[error(transparent)]
    Conflict(SaveError),
    #[error(transparent)]
    Transition(#[from] TransitionError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl ConflictAware for DecisionError {
    fn is_conflict(&self) -> bool {
        matches!(self, DecisionError::Conflict(_))
    }
}

impl From<SaveError> for DecisionError {
    fn from(e: SaveError) -> Self {
        match e {
            SaveError::Storage(inner) => DecisionError::Storage(inner),
            conflict => DecisionError::Conflict(conflict),
        }
    }
}

/// The policy versions a proposal relies on, for the conditions snapshot.
pub(super) fn policy_versions(proposal: &RefundProposal) -> Vec<(String, String)> {
    proposal
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::Policy)
        .map(|e| (e.reference.clone(), e.version.clone()))
        .collect()
}

pub(super) fn conflict() -> DecisionError {
    DecisionError::Conflict(SaveError::Conflict)
}

impl Approvals {
    /// Today's approval policy for refunds in `currency`: its four-eyes
    /// threshold (the default where none is stored) and how long approvals
    /// count. Approvals decide by it; reviewers are told from it how many
    /// approvers a proposal needs.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn approval_policy(
        &self,
        db: &impl ConnectionTrait,
        currency: &str,
    ) -> Result<ApprovalPolicy, StorageError> {
        let threshold = storage::limits::four_eyes_threshold(db, currency)
            .await?
            .unwrap_or(self.settings.four_eyes_threshold_minor);
        Ok(ApprovalPolicy {
            four_eyes_threshold_minor: threshold,
            approval_ttl: self.settings.approval_ttl,
        })
    }

    /// `actor` rejects the proposal with a reason shown to the requester.
    ///
    /// # Errors
    /// As [`Approvals::approve`]; a blank reason is refused.
    pub async fn reject(
        &self,
        actor: &Actor,
        proposal_id: &str,
        reason: &str,
    ) -> Result<StoredProposal, DecisionError> {
        let (approvals, actor) = (self.clone(), actor.clone());
        let (id, reason) = (proposal_id.to_owned(), reason.to_owned());
        let _interactive = self.activity.enter();
        crate::core::detached(&self.tasks, async move {
            approvals.reject_now(&actor, &id, &reason).await
        })
        .await
    }

    async fn reject_now(
        &self,
        actor: &Actor,
        proposal_id: &str,
        reason: &str,
    ) -> Result<StoredProposal, DecisionError> {
        let reason = reason.trim();
        if reason.is_empty() || reason.chars().count() > 2000 {
            return Err(DecisionError::Invalid(
                "a rejection needs a reason of 1 to 2000 characters".into(),
            ));
        }
        let now = self.now();
        let tx = self.db.begin_write().await?;
        let stored = load(&*tx, proposal_id).await?;
        let approver = Approver {
            id: actor.user_id.clone(),
            roles: actor.roles.clone(),
            limit_minor: None,
            // Rejecting is always allowed, whoever spoke.
            spoke_in_conversation: false,
        };
        let policy = ApprovalPolicy {
            four_eyes_threshold_minor: self.settings.four_eyes_threshold_minor,
            approval_ttl: self.settings.approval_ttl,
        };
        let ctx = ApprovalContext {
            approver: &approver,
            proposal: &stored.proposal,
            state: &stored.state,
            digest_shown: &stored.proposal.action_digest,
            policy: &policy,
            now,
        };
        check_rejection(&ctx)?;
        let order = storage::orders::get(&*tx, &stored.proposal.order_id).await?;
        let conditions = match &order {
            Some(order) => ConditionsSnapshot::capture(order, policy_versions(&stored.proposal))
                .unwrap_or_else(|_| empty_conditions()),
            None => empty_conditions(),
        };
        let rejection = Approval::reject(new_id("apv"), &ctx, reason, conditions);
        storage::approvals::insert(&*tx, &rejection).await?;
        let mut step = Step::new(stored);
        step.apply(
            Command::Reject {
                by: actor.user_id.clone(),
                reason: reason.to_owned(),
            },
            &actor.journal_name(),
            json!({ "approval_id": rejection.id, "reason": reason }),
            now,
        )?;
        let stored = self.execution.commit_step(tx, step, now).await?;
        Ok(stored)
    }
}

fn empty_conditions() -> ConditionsSnapshot {
    ConditionsSnapshot {
        order_version: 0,
        order_hash: String::new(),
        policy_versions: Vec::new(),
        refundable_minor: 0,
    }
}

async fn load(
    db: &impl ConnectionTrait,
    proposal_id: &str,
) -> Result<StoredProposal, DecisionError> {
    storage::proposals::get(db, proposal_id)
        .await?
        .ok_or_else(|| DecisionError::NotFound(proposal_id.to_owned()))
}
