//! The approval handler: read the stored proposal, the limits and the order,
//! check permission in code, then in one write transaction confirm that what
//! was read is still current (order version, proposal state version), record
//! the approval, revalidate and claim the proposal for execution. A stale
//! read starts the attempt over. The provider is called only after commit.

use crate::core::{Actor, Engine};
use crate::execution::step::{ConflictAware, SaveError, Step, retry_on_conflict};
use domain::proposal::{
    Approval, ApprovalContext, ApprovalPolicy, ApproveError, Approver, Command, ConditionsSnapshot,
    Effect, EvidenceKind, RefundProposal, TransitionError, check_approval, check_rejection,
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
fn policy_versions(proposal: &RefundProposal) -> Vec<(String, String)> {
    proposal
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::Policy)
        .map(|e| (e.reference.clone(), e.version.clone()))
        .collect()
}

impl Engine {
    /// `actor` approves proposal `proposal_id`, having been shown the action
    /// with digest `digest_shown`. When this completes the approvals, the
    /// proposal is revalidated and claimed in the same transaction and the
    /// refund is sent in the background.
    ///
    /// # Errors
    /// [`DecisionError`]: not found, denied (with the rule broken), or a
    /// conflict when another decision landed at the same moment.
    pub async fn approve(
        &self,
        actor: &Actor,
        proposal_id: &str,
        digest_shown: &str,
    ) -> Result<StoredProposal, DecisionError> {
        let (engine, actor) = (self.clone(), actor.clone());
        let (id, digest) = (proposal_id.to_owned(), digest_shown.to_owned());
        crate::core::detached(async move { engine.approve_now(&actor, &id, &digest).await }).await
    }

    async fn approve_now(
        &self,
        actor: &Actor,
        proposal_id: &str,
        digest_shown: &str,
    ) -> Result<StoredProposal, DecisionError> {
        retry_on_conflict(|| self.try_approve(actor, proposal_id, digest_shown)).await
    }

    /// One attempt. Everything that only reads (the proposal, the limits,
    /// the order, the permission check, the conditions) happens before the
    /// write transaction, so writers queue only for their writes; inside it
    /// the order must still be at the version read and the proposal at its
    /// state version (the conditional update), or the attempt is a conflict
    /// and starts over from fresh reads.
    async fn try_approve(
        &self,
        actor: &Actor,
        proposal_id: &str,
        digest_shown: &str,
    ) -> Result<StoredProposal, DecisionError> {
        let now = crate::now();
        let read = self.db.begin_read().await?;
        let stored = load(&read, proposal_id).await?;
        let currency = stored.proposal.amount.currency.code().to_owned();
        let approver = Approver {
            id: actor.user_id.clone(),
            roles: actor.roles.clone(),
            limit_minor: storage::limits::approval_limit(&read, &actor.user_id, &currency)
                .await?
                .or(self.settings.default_approval_limit_minor),
        };
        let policy = ApprovalPolicy {
            four_eyes_threshold_minor: storage::limits::four_eyes_threshold(&read, &currency)
                .await?
                .unwrap_or(self.settings.four_eyes_threshold_minor),
            approval_ttl: self.settings.approval_ttl,
        };
        let ctx = ApprovalContext {
            approver: &approver,
            proposal: &stored.proposal,
            state: &stored.state,
            digest_shown,
            policy: &policy,
            now,
        };
        let outcome = check_approval(&ctx)?;
        let order = storage::orders::get(&read, &stored.proposal.order_id)
            .await?
            .ok_or_else(|| {
                DecisionError::Invalid(format!(
                    "order {} no longer exists; this proposal cannot be approved",
                    stored.proposal.order_id
                ))
            })?;
        let conditions = ConditionsSnapshot::capture(&order, policy_versions(&stored.proposal))
            .map_err(|e| {
                DecisionError::Invalid(format!("the order's records are inconsistent: {e}"))
            })?;
        read.commit().await.map_err(StorageError::from)?;
        let approval = Approval::approve(new_id("apv"), &ctx, conditions.clone());
        let mut step = Step::new(stored);
        let effects = step.apply(
            outcome.command(&approval),
            &actor.journal_name(),
            json!({
                "approval_id": approval.id,
                "action_digest": approval.action_digest_shown,
                "required_approvals": outcome.required_approvals(),
                "conditions": conditions,
            }),
            now,
        )?;

        let tx = self.db.begin_write().await?;
        // Lock order before proposal, as every writer does.
        if storage::orders::lock_version(&*tx, &order.id).await? != Some(order.version) {
            tx.rollback().await?;
            return Err(DecisionError::Conflict(SaveError::Conflict));
        }
        storage::approvals::insert(&*tx, &approval).await?;
        let mut send = false;
        if effects.contains(&Effect::Execute) {
            send = self
                .claim_and_revalidate(&*tx, &mut step, &order, &conditions, now)
                .await?;
        }
        let stored = self.commit_step(tx, step, now).await?;
        if send {
            let engine = self.clone();
            let proposal = stored.proposal.clone();
            tokio::spawn(async move { engine.send_refund(&proposal).await });
        }
        Ok(stored)
    }

    /// `actor` rejects the proposal with a reason shown to the requester.
    ///
    /// # Errors
    /// As [`Engine::approve`]; a blank reason is refused.
    pub async fn reject(
        &self,
        actor: &Actor,
        proposal_id: &str,
        reason: &str,
    ) -> Result<StoredProposal, DecisionError> {
        let (engine, actor) = (self.clone(), actor.clone());
        let (id, reason) = (proposal_id.to_owned(), reason.to_owned());
        crate::core::detached(async move { engine.reject_now(&actor, &id, &reason).await }).await
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
        let now = crate::now();
        let tx = self.db.begin_write().await?;
        let stored = load(&*tx, proposal_id).await?;
        let approver = Approver {
            id: actor.user_id.clone(),
            roles: actor.roles.clone(),
            limit_minor: None,
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
        let stored = self.commit_step(tx, step, now).await?;
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
