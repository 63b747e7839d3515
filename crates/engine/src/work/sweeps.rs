//! The scheduled sweeps. Each reads first and writes only when it found
//! something to do, so an idle system commits nothing on their account.

use super::handlers::{Ctx, retry};
use super::{CHECKS, alert_kind};
use domain::proposal::{ProposalState, ProposalStatus};
use runner::JobError;
use std::future::Future;
use std::pin::Pin;
use storage::journal::{ChainReport, NewEvent, OPS_STREAM};

type Swept<'a> = Pin<Box<dyn Future<Output = Result<String, JobError>> + Send + 'a>>;
type Found<'a> = Pin<Box<dyn Future<Output = Result<bool, JobError>> + Send + 'a>>;
/// A sweep.
pub(super) type SweepFn = for<'a> fn(&'a Ctx) -> Swept<'a>;
/// The read that says whether a sweep would find anything.
pub(super) type Pending = for<'a> fn(&'a Ctx) -> Found<'a>;

/// Statuses whose status check or verification falls due.
const CHECKED: [ProposalStatus; 3] = [
    ProposalStatus::Executing,
    ProposalStatus::OutcomeUnknown,
    ProposalStatus::Succeeded,
];
/// Statuses that expire when nobody decides (or executes) in time.
const EXPIRING: [ProposalStatus; 2] = [ProposalStatus::AwaitingApproval, ProposalStatus::Approved];

async fn any_due(ctx: &Ctx, statuses: &[ProposalStatus]) -> Result<bool, JobError> {
    let work = &ctx.work;
    let due = storage::proposals::due(work.db.conn(), statuses, work.now(), 1)
        .await
        .map_err(retry)?;
    Ok(!due.is_empty())
}

pub(super) fn reconcile_pending(ctx: &Ctx) -> Found<'_> {
    Box::pin(any_due(ctx, &CHECKED))
}

pub(super) fn expiry_pending(ctx: &Ctx) -> Found<'_> {
    Box::pin(any_due(ctx, &EXPIRING))
}

pub(super) fn checkpoint_pending(ctx: &Ctx) -> Found<'_> {
    Box::pin(async move {
        storage::journal::has_changes(ctx.work.db.conn())
            .await
            .map_err(retry)
    })
}

pub(super) fn key_retention_pending(ctx: &Ctx) -> Found<'_> {
    Box::pin(async move {
        let unknown = storage::proposals::count(ctx.work.db.conn(), ProposalStatus::OutcomeUnknown)
            .await
            .map_err(retry)?;
        Ok(unknown > 0)
    })
}

/// How many due proposals one sweep queues checks for.
const SWEEP_BATCH: u64 = 500;

/// Queues a check for every proposal whose status check or verification
/// is due; the checks lane works through them with bounded concurrency.
pub(super) fn reconcile(ctx: &Ctx) -> Swept<'_> {
    Box::pin(async move {
        let work = &ctx.work;
        let now = work.now();
        let conn = work.db.conn();
        let ids = storage::proposals::due(conn, &CHECKED, now, SWEEP_BATCH)
            .await
            .map_err(retry)?;
        if ids.is_empty() {
            return Ok("nothing due".to_owned());
        }
        let items: Vec<_> = ids
            .iter()
            .map(|id| super::proposal_check(id, now))
            .collect();
        let tx = work.db.begin_write().await.map_err(retry)?;
        let queued = storage::work::enqueue(&*tx, &items, now)
            .await
            .map_err(retry)?;
        tx.commit().await.map_err(retry)?;
        work.wake.lane(CHECKS);
        Ok(format!("{} due, {queued} checks queued", ids.len()))
    })
}

/// Expires proposals nobody decided (or executed) in time, each with its
/// journal event.
pub(super) fn expiry(ctx: &Ctx) -> Swept<'_> {
    Box::pin(async move {
        let work = &ctx.work;
        let ids = storage::proposals::due(work.db.conn(), &EXPIRING, work.now(), SWEEP_BATCH)
            .await
            .map_err(retry)?;
        let mut expired = 0;
        for id in &ids {
            if work.execution.expire(id).await {
                expired += 1;
            }
        }
        Ok(format!("{expired} expired"))
    })
}

/// Chains the changed journal streams into a checkpoint, only when some
/// stream changed.
pub(super) fn checkpoint(ctx: &Ctx) -> Swept<'_> {
    Box::pin(async move {
        let work = &ctx.work;
        if !storage::journal::has_changes(work.db.conn())
            .await
            .map_err(retry)?
        {
            return Ok("nothing changed".to_owned());
        }
        let covered = work.execution.checkpoint_journal().await.map_err(retry)?;
        Ok(format!("{covered} streams checkpointed"))
    })
}

/// Re-computes the whole journal. A break is journaled, raised as an alert
/// for a person and shown on the operations view and in the metrics.
pub(super) fn audit(ctx: &Ctx) -> Swept<'_> {
    Box::pin(async move {
        let work = &ctx.work;
        let report = storage::journal::verify_chain(work.db.conn())
            .await
            .map_err(retry)?;
        match report {
            ChainReport::Intact {
                events,
                streams,
                checkpoints,
            } => Ok(format!(
                "journal intact: {events} events in {streams} streams, {checkpoints} checkpoints"
            )),
            ChainReport::Broken {
                stream,
                at_seq,
                problem,
            } => {
                let message = format!("journal BROKEN in {stream} at event {at_seq}: {problem}");
                tracing::error!(%message, "the daily journal check failed");
                let now = work.now();
                let tx = work.db.begin_write().await.map_err(retry)?;
                storage::work::alerts::raise(
                    &*tx,
                    alert_kind::JOURNAL_BROKEN,
                    None,
                    &message,
                    alert_kind::JOURNAL_BROKEN,
                    now,
                )
                .await
                .map_err(retry)?;
                storage::journal::append_to_stream(
                    &*tx,
                    OPS_STREAM,
                    vec![NewEvent {
                        proposal_id: None,
                        order_id: None,
                        actor: work.execution.system_actor(),
                        kind: "journal_broken".to_owned(),
                        from_status: None,
                        to_status: None,
                        payload: serde_json::json!({
                            "stream": stream,
                            "at_seq": at_seq,
                            "problem": problem,
                        }),
                        at: now,
                    }],
                )
                .await
                .map_err(retry)?;
                tx.commit().await.map_err(retry)?;
                Ok(message)
            }
        }
    })
}

/// Raises an alert for each unknown outcome whose idempotency key the
/// provider forgets within the warning window: after that, resending could
/// refund twice, so a person must look the payment up before then.
pub(super) fn key_retention(ctx: &Ctx) -> Swept<'_> {
    Box::pin(async move {
        let work = &ctx.work;
        let now = work.now();
        let retention = work.settings.key_retention;
        let unknown = storage::proposals::in_status(
            work.db.conn(),
            &[ProposalStatus::OutcomeUnknown],
            SWEEP_BATCH,
        )
        .await
        .map_err(retry)?;
        let mut raised = 0;
        for stored in unknown {
            let ProposalState::OutcomeUnknown { since, .. } = &stored.state else {
                continue;
            };
            let forgotten_at = *since + retention;
            if now < forgotten_at - ctx.every.key_warning {
                continue;
            }
            let id = &stored.proposal.id;
            let message = format!(
                "The outcome of refund {id} is still unknown and the payment provider forgets its idempotency key at {} UTC. Look the payment up at the provider before then; after it, a resend could refund twice.",
                forgotten_at.format("%Y-%m-%d %H:%M")
            );
            let tx = work.db.begin_write().await.map_err(retry)?;
            storage::work::alerts::raise(
                &*tx,
                alert_kind::KEY_EXPIRING,
                Some(id),
                &message,
                &format!("{}:{id}", alert_kind::KEY_EXPIRING),
                now,
            )
            .await
            .map_err(retry)?;
            tx.commit().await.map_err(retry)?;
            raised += 1;
        }
        Ok(format!("{raised} keys near expiry"))
    })
}

/// Deletes finished items older than the keeping period.
pub(super) fn prune(ctx: &Ctx) -> Swept<'_> {
    Box::pin(async move {
        let work = &ctx.work;
        let before = work.now() - ctx.every.keep_finished;
        let tx = work.db.begin_write().await.map_err(retry)?;
        let pruned = storage::work::prune_finished(&*tx, before)
            .await
            .map_err(retry)?;
        tx.commit().await.map_err(retry)?;
        Ok(format!("{pruned} finished items pruned"))
    })
}
