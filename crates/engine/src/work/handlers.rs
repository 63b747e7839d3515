//! The handlers of each kind of work. Each is idempotent: an item whose
//! worker died after the handler's own commit runs again, and must find
//! nothing left to do.

use super::Work;
use super::sweeps::{self, Pending, SweepFn};
use super::{WorkSchedule, alert_kind};
use crate::execution::RefundTarget;
use domain::proposal::ProposalState;
use runner::{Handler, Job, JobError, RunnerBuilder};
use storage::StorageError;

pub(super) fn register(work: &Work, builder: RunnerBuilder, every: &WorkSchedule) -> RunnerBuilder {
    let with = |work: &Work| Ctx {
        work: work.clone(),
        every: *every,
    };
    builder
        .handle(super::REFUND_SEND, RefundSend(with(work)))
        .handle(super::PROPOSAL_CHECK, ProposalCheck(with(work)))
        .handle(super::PERSON_NOTIFY, PersonNotify(with(work)))
        .handle(
            super::SWEEP_RECONCILE,
            Sweep(
                with(work),
                sweeps::reconcile,
                Some(sweeps::reconcile_pending),
            ),
        )
        .handle(
            super::SWEEP_EXPIRY,
            Sweep(with(work), sweeps::expiry, Some(sweeps::expiry_pending)),
        )
        .handle(
            super::JOURNAL_CHECKPOINT,
            Sweep(
                with(work),
                sweeps::checkpoint,
                Some(sweeps::checkpoint_pending),
            ),
        )
        .handle(super::AUDIT_VERIFY, Sweep(with(work), sweeps::audit, None))
        .handle(
            super::KEY_RETENTION,
            Sweep(
                with(work),
                sweeps::key_retention,
                Some(sweeps::key_retention_pending),
            ),
        )
        .handle(super::WORK_PRUNE, Sweep(with(work), sweeps::prune, None))
}

#[derive(Clone)]
pub(super) struct Ctx {
    pub work: Work,
    pub every: WorkSchedule,
}

/// A storage failure is worth another try.
pub(super) fn retry(error: StorageError) -> JobError {
    JobError::Retry(error.to_string())
}

fn proposal_id(job: &Job) -> Result<String, JobError> {
    job.item
        .payload
        .get("proposal_id")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| JobError::Dead("the item names no proposal".to_owned()))
}

async fn load(work: &Work, id: &str) -> Result<storage::proposals::StoredProposal, JobError> {
    storage::proposals::get(work.db.conn(), id)
        .await
        .map_err(retry)?
        .ok_or_else(|| JobError::Dead(format!("proposal {id} does not exist")))
}

/// Sends an approved refund. The approval committed this item with the
/// proposal's claim, so a crash between the commit and the call loses
/// nothing: the item is still there when the process comes back.
struct RefundSend(Ctx);

#[async_trait::async_trait]
impl Handler for RefundSend {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let id = proposal_id(job)?;
        let span = tracing::info_span!("refund_send", proposal.id = %id);
        tracing::Instrument::instrument(self.send(job, &id), span).await
    }
}

impl RefundSend {
    async fn send(&self, job: &Job, id: &str) -> Result<Option<String>, JobError> {
        let work = &self.0.work;
        // Handed over by the approval that wrote it, with the proposal's
        // claim for this executor, in the transaction that just committed:
        // that state still holds (or, if it moved meanwhile, the answer is
        // not recorded and the provider dedupes a second send under the
        // key), so the send needs no read of the proposal.
        if job.handed
            && let Some(target) = RefundTarget::from_payload(&job.item.payload)
            && target.id == id
        {
            work.execution.send_refund(&target).await;
            return Ok(Some("sent".to_owned()));
        }
        let stored = load(work, id).await?;
        match &stored.state {
            ProposalState::Executing {
                executor,
                sent: true,
                ..
            } if *executor == work.settings.executor_name => {
                work.execution.send_refund(&(&stored.proposal).into()).await;
                Ok(Some("sent".to_owned()))
            }
            ProposalState::Executing { .. } | ProposalState::OutcomeUnknown { .. } => {
                // Claimed by another process (or by this worker under
                // another name before a restart): once its lease runs out
                // the checks take it over, asking the provider by key first.
                let tx = work.db.begin_write().await.map_err(retry)?;
                work.queue_work(&*tx, &[super::proposal_check(id, work.now())])
                    .await
                    .map_err(retry)?;
                tx.commit().await.map_err(retry)?;
                work.wake.lane(super::CHECKS);
                Ok(Some(
                    "held by another executor; handed to the checks".to_owned(),
                ))
            }
            other => Ok(Some(format!(
                "nothing to send: {}",
                other.status().as_str()
            ))),
        }
    }
}

/// Asks the provider what happened to an executing or unknown refund, or
/// verifies a succeeded one, when it is due.
struct ProposalCheck(Ctx);

#[async_trait::async_trait]
impl Handler for ProposalCheck {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let work = &self.0.work;
        let id = proposal_id(job)?;
        let span = tracing::info_span!("proposal_check", proposal.id = %id);
        let checked = tracing::Instrument::instrument(work.execution.check_proposal(&id), span)
            .await
            .map_err(retry)?;
        Ok(Some(checked.to_string()))
    }
}

/// Raises an alert for a person (a transition said only a person can
/// settle this proposal now).
struct PersonNotify(Ctx);

#[async_trait::async_trait]
impl Handler for PersonNotify {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let work = &self.0.work;
        let id = proposal_id(job)?;
        let reason = job
            .item
            .payload
            .get("reason")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("a person must look at this refund");
        tracing::warn!(proposal.id = %id, %reason, "a refund needs a person");
        let tx = work.db.begin_write().await.map_err(retry)?;
        storage::work::alerts::raise(
            &*tx,
            alert_kind::PROPOSAL_NEEDS_PERSON,
            Some(&id),
            reason,
            &format!("{}:{id}", alert_kind::PROPOSAL_NEEDS_PERSON),
            work.now(),
        )
        .await
        .map_err(retry)?;
        tx.commit().await.map_err(retry)?;
        Ok(Some("alert raised".to_owned()))
    }
}

/// A scheduled sweep, with the read that says whether it has work.
struct Sweep(Ctx, SweepFn, Option<Pending>);

#[async_trait::async_trait]
impl Handler for Sweep {
    async fn run(&self, _job: &Job) -> Result<Option<String>, JobError> {
        (self.1)(&self.0).await.map(Some)
    }

    async fn pending(&self) -> Result<bool, JobError> {
        match self.2 {
            Some(pending) => pending(&self.0).await,
            None => Ok(true),
        }
    }
}
