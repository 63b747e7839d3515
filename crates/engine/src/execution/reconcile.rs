//! Reconciliation: expiring stale proposals, taking over executions whose
//! lease ran out, re-checking unknown outcomes, and verifying succeeded
//! refunds. The work runner's sweeps call these one proposal at a time
//! (`crate::work`); [`Execution::reconcile_once`] runs everything due inline.
//! Claims are conditional updates, so several replicas can run them at once.

use super::Execution;
use crate::step::Step;
use domain::proposal::{Command, Effect, ProposalStatus};
use serde_json::json;
use storage::StorageError;

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    pub expired: usize,
    pub checked: usize,
    pub verified: usize,
    /// Journal streams covered by a new checkpoint.
    pub checkpointed: usize,
}

impl Execution {
    /// Everything due now, inline and in order: what the runner's sweeps
    /// and checks do over time, in one call (recovery tools and tests).
    ///
    /// # Errors
    /// Storage failures while listing due work (individual items that fail
    /// are logged and left for the next pass).
    pub async fn reconcile_once(&self) -> Result<ReconcileReport, StorageError> {
        let mut report = ReconcileReport::default();
        let now = self.now();
        let conn = self.db.conn();
        let stale = [ProposalStatus::AwaitingApproval, ProposalStatus::Approved];
        for id in storage::proposals::due(conn, &stale, now, 200).await? {
            if self.expire(&id).await {
                report.expired += 1;
            }
        }
        let due = [
            ProposalStatus::Executing,
            ProposalStatus::OutcomeUnknown,
            ProposalStatus::Succeeded,
        ];
        for id in storage::proposals::due(conn, &due, now, 200).await? {
            match self.check_proposal(&id).await? {
                Checked::Status => report.checked += 1,
                Checked::Verified => report.verified += 1,
                Checked::Nothing(_) => {}
            }
        }
        report.checkpointed = self.checkpoint_journal().await?;
        Ok(report)
    }

    /// Checks one proposal's refund: asks the provider by key about an
    /// execution whose lease ran out or an unknown outcome whose next check
    /// is due, or verifies a succeeded refund against the charge.
    ///
    /// # Errors
    /// Storage failures reading the proposal.
    pub async fn check_proposal(&self, id: &str) -> Result<Checked, StorageError> {
        let Some(stored) = storage::proposals::get(self.db.conn(), id).await? else {
            return Ok(Checked::Nothing("no such proposal".to_owned()));
        };
        match stored.state.status() {
            ProposalStatus::Executing | ProposalStatus::OutcomeUnknown => {
                match self.claim_for_status_check(id).await {
                    Some(proposal) => {
                        self.query_status(&proposal).await;
                        Ok(Checked::Status)
                    }
                    None => Ok(Checked::Nothing(
                        "not due, or another executor holds it".to_owned(),
                    )),
                }
            }
            ProposalStatus::Succeeded => {
                self.verify(&stored.proposal).await;
                Ok(Checked::Verified)
            }
            other => Ok(Checked::Nothing(format!(
                "nothing to check: {}",
                other.as_str()
            ))),
        }
    }

    /// Chains the heads of every journal stream changed since the last
    /// checkpoint into a new checkpoint.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn checkpoint_journal(&self) -> Result<usize, StorageError> {
        let tx = self.db.begin_write().await?;
        let covered = storage::journal::checkpoint(&*tx, self.now()).await?;
        tx.commit().await?;
        Ok(covered)
    }

    pub(crate) async fn expire(&self, id: &str) -> bool {
        let result: Result<bool, Box<dyn std::error::Error + Send + Sync>> = async {
            let now = self.now();
            let tx = self.db.begin_write().await?;
            let Some(stored) = storage::proposals::get(&*tx, id).await? else {
                return Ok(false);
            };
            let mut step = Step::new(stored);
            if step
                .apply(Command::Expire, &self.system_actor(), json!({}), now)
                .is_err()
            {
                return Ok(false);
            }
            self.commit_step(tx, step, now).await?;
            Ok(true)
        }
        .await;
        result.unwrap_or_else(|error| {
            tracing::warn!(%error, proposal.id = %id, "could not expire proposal");
            false
        })
    }

    /// Takes the proposal over for a status query; None when it is not due
    /// or another process got there first.
    async fn claim_for_status_check(&self, id: &str) -> Option<domain::proposal::RefundProposal> {
        let result: Result<Option<_>, Box<dyn std::error::Error + Send + Sync>> = async {
            let now = self.now();
            let tx = self.db.begin_write().await?;
            let Some(stored) = storage::proposals::get(&*tx, id).await? else {
                return Ok(None);
            };
            let mut step = Step::new(stored);
            let claim = Command::Claim {
                executor: self.settings.executor_name.clone(),
                lease_until: now + self.settings.lease,
            };
            let Ok(effects) = step.apply(
                claim,
                &self.system_actor(),
                json!({ "reason": "status check" }),
                now,
            ) else {
                return Ok(None);
            };
            if !effects
                .iter()
                .any(|e| matches!(e, Effect::QueryStatus { .. }))
            {
                return Ok(None);
            }
            let stored = self.commit_step(tx, step, now).await?;
            Ok(Some(stored.proposal))
        }
        .await;
        result.unwrap_or_else(|error| {
            tracing::info!(%error, proposal.id = %id, "status check not claimed");
            None
        })
    }
}

/// What a check did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Asked the provider about the refund's outcome.
    Status,
    /// Read the charge back and recorded the verification.
    Verified,
    /// Nothing to do now, and why.
    Nothing(String),
}

impl std::fmt::Display for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Checked::Status => f.write_str("status checked"),
            Checked::Verified => f.write_str("verification recorded"),
            Checked::Nothing(why) => f.write_str(why),
        }
    }
}
