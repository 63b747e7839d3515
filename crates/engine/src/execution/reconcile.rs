//! The reconciler: at start (recovery) and periodically, it expires stale
//! proposals, takes over executions whose lease ran out, re-checks unknown
//! outcomes, and verifies succeeded refunds. Claims are conditional updates,
//! so several replicas can run it at once.

use super::step::Step;
use crate::core::Engine;
use domain::proposal::{Command, Effect, ProposalStatus};
use serde_json::json;
use std::time::Duration;
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

impl Engine {
    /// One pass over everything due now.
    ///
    /// # Errors
    /// Storage failures while listing due work (individual items that fail
    /// are logged and retried on the next pass).
    pub async fn reconcile_once(&self) -> Result<ReconcileReport, StorageError> {
        let mut report = ReconcileReport::default();
        let now = crate::now();
        let conn = self.db.conn();

        let stale = [ProposalStatus::AwaitingApproval, ProposalStatus::Approved];
        for id in storage::proposals::due(conn, &stale, now, 200).await? {
            if self.expire(&id).await {
                report.expired += 1;
            }
        }
        let uncertain = [ProposalStatus::Executing, ProposalStatus::OutcomeUnknown];
        for id in storage::proposals::due(conn, &uncertain, now, 100).await? {
            if let Some(proposal) = self.claim_for_status_check(&id).await {
                self.query_status(&proposal).await;
                report.checked += 1;
            }
        }
        for id in storage::proposals::due(conn, &[ProposalStatus::Succeeded], now, 100).await? {
            if let Some(stored) = storage::proposals::get(conn, &id).await? {
                self.verify(&stored.proposal).await;
                report.verified += 1;
            }
        }
        report.checkpointed = self.checkpoint_journal().await?;
        Ok(report)
    }

    /// Chains the heads of every journal stream changed since the last
    /// checkpoint into a new checkpoint.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn checkpoint_journal(&self) -> Result<usize, StorageError> {
        let tx = self.db.begin_write().await?;
        let covered = storage::journal::checkpoint(&*tx, crate::now()).await?;
        tx.commit().await?;
        Ok(covered)
    }

    /// Runs a pass now (recovery after a restart) and then every `every`.
    pub fn spawn_reconciler(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let engine = self.clone();
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(every);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                if let Err(error) = engine.reconcile_once().await {
                    tracing::warn!(%error, "reconciliation pass failed; retrying later");
                }
            }
        })
    }

    async fn expire(&self, id: &str) -> bool {
        let result: Result<bool, Box<dyn std::error::Error + Send + Sync>> = async {
            let now = crate::now();
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
            let now = crate::now();
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
