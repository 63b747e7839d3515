//! What Countersign runs outside a request, on the durable work runner
//! (crate `runner`): its lanes, the kinds of work and their handlers, the
//! schedules, and the operations view's queries and actions.
//!
//! Work that must happen is either an item written with the state change
//! that calls for it (a refund to send with its approval, a person to tell
//! with the transition that needs them) or found from durable state by a
//! sweep (a proposal whose status check or verification is due).

mod handlers;
pub mod ops;
mod sweeps;

use crate::clock::Clock;
use crate::core::EngineSettings;
use crate::execution::{Execution, RefundTarget};
use chrono::Duration;
use domain::Timestamp;
use runner::{LaneSpec, Priority, Runner, Schedule};
use serde_json::json;
use std::sync::Arc;
use storage::Database;
use storage::StorageError;
use storage::work::NewWork;

/// Refund sends, committed with the approval.
pub const PAYMENTS: &str = "payments";
/// Status checks of unknown outcomes and verifications of succeeded refunds.
pub const CHECKS: &str = "checks";
/// Telling a person what only they can settle.
pub const NOTIFICATIONS: &str = "notifications";
/// Sweeps on a timer, at low priority.
pub const SCHEDULED: &str = "scheduled";

/// Send the refund of a proposal that is executing.
pub const REFUND_SEND: &str = "refund.send";
/// Check the outcome of, or verify, one proposal's refund.
pub const PROPOSAL_CHECK: &str = "proposal.check";
/// Raise an alert for a person.
pub const PERSON_NOTIFY: &str = "person.notify";
/// Queue the checks that fell due.
pub const SWEEP_RECONCILE: &str = "sweep.reconcile";
/// Expire proposals nobody decided in time.
pub const SWEEP_EXPIRY: &str = "sweep.expiry";
/// Chain the journal's changed streams into a checkpoint.
pub const JOURNAL_CHECKPOINT: &str = "journal.checkpoint";
/// Verify the whole journal.
pub const AUDIT_VERIFY: &str = "audit.verify";
/// Tell a person about unknown outcomes whose idempotency key the
/// provider is about to forget.
pub const KEY_RETENTION: &str = "keys.retention";
/// Delete finished items after a week.
pub const WORK_PRUNE: &str = "work.prune";

/// Alert kinds.
pub mod alert_kind {
    /// The daily journal check found a break.
    pub const JOURNAL_BROKEN: &str = "journal.broken";
    /// A proposal needs a person (a state transition said so).
    pub const PROPOSAL_NEEDS_PERSON: &str = "proposal.needs_person";
    /// An unknown outcome's key is about to leave the provider's memory.
    pub const KEY_EXPIRING: &str = "key.expiring";
}

/// How often the scheduled kinds run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkSchedule {
    /// Whether this process runs the scheduled lane at all (one replica
    /// suffices; each schedule runs once per period across replicas).
    pub sweeps: bool,
    pub reconcile_every: Duration,
    pub expiry_every: Duration,
    pub checkpoint_every: Duration,
    pub audit_every: Duration,
    pub key_retention_every: Duration,
    /// Tell a person this long before the provider forgets a key.
    pub key_warning: Duration,
    pub prune_every: Duration,
    /// Finished items are kept this long.
    pub keep_finished: Duration,
}

impl Default for WorkSchedule {
    fn default() -> Self {
        WorkSchedule {
            sweeps: true,
            reconcile_every: Duration::seconds(5),
            expiry_every: Duration::seconds(30),
            checkpoint_every: Duration::minutes(1),
            audit_every: Duration::days(1),
            key_retention_every: Duration::minutes(10),
            key_warning: Duration::hours(4),
            prune_every: Duration::hours(6),
            keep_finished: Duration::days(7),
        }
    }
}

/// The lanes, with what each is for (shown on the operations view).
#[must_use]
pub fn lanes() -> Vec<LaneSpec> {
    vec![
        LaneSpec::new(
            PAYMENTS,
            "Sends approved refunds to the payment provider, under the proposal's idempotency key.",
            // Provider calls wait on the network, not on this machine: the
            // bound is on calls in flight at the provider, not on CPU.
            64,
            Priority::Background,
        ),
        LaneSpec::new(
            CHECKS,
            "Asks the provider about unknown outcomes and verifies succeeded refunds against the charge.",
            4,
            Priority::Background,
        ),
        LaneSpec::new(
            NOTIFICATIONS,
            "Raises alerts for people when a refund needs someone to look at it.",
            2,
            Priority::Background,
        ),
        LaneSpec::new(
            SCHEDULED,
            "Sweeps on a timer: due checks, expiry, journal checkpoints, the daily audit, idempotency keys near expiry, pruning.",
            1,
            Priority::Scheduled,
        )
        .with_poll_every(std::time::Duration::from_secs(2)),
    ]
}

fn schedules(every: &WorkSchedule) -> Vec<Schedule> {
    let at = |kind: &str, every: Duration, first_in: Duration| Schedule {
        kind: kind.to_owned(),
        lane: SCHEDULED.to_owned(),
        every,
        first_in,
    };
    vec![
        // Recovery first: due checks and expiries are looked at on start.
        at(SWEEP_RECONCILE, every.reconcile_every, Duration::zero()),
        at(SWEEP_EXPIRY, every.expiry_every, Duration::zero()),
        at(
            JOURNAL_CHECKPOINT,
            every.checkpoint_every,
            every.checkpoint_every,
        ),
        at(AUDIT_VERIFY, every.audit_every, Duration::minutes(1)),
        at(
            KEY_RETENTION,
            every.key_retention_every,
            Duration::minutes(1),
        ),
        at(WORK_PRUNE, every.prune_every, every.prune_every),
    ]
}

/// The item that sends a proposal's refund; it carries what the send
/// needs, so the process that wrote it can send without reading the
/// proposal again.
#[must_use]
pub fn refund_send(target: &RefundTarget, now: Timestamp) -> NewWork {
    let proposal_id = &target.id;
    NewWork {
        kind: REFUND_SEND.to_owned(),
        lane: PAYMENTS.to_owned(),
        subject: Some(proposal_id.to_owned()),
        payload: target.to_payload(),
        run_after: now,
        max_attempts: 8,
        every: None,
        dedupe_key: Some(format!("{REFUND_SEND}:{proposal_id}")),
    }
}

/// The item that checks (or verifies) a proposal's refund at `at`.
#[must_use]
pub fn proposal_check(proposal_id: &str, at: Timestamp) -> NewWork {
    NewWork {
        kind: PROPOSAL_CHECK.to_owned(),
        lane: CHECKS.to_owned(),
        subject: Some(proposal_id.to_owned()),
        payload: json!({ "proposal_id": proposal_id }),
        run_after: at,
        max_attempts: 5,
        every: None,
        dedupe_key: Some(format!("{PROPOSAL_CHECK}:{proposal_id}")),
    }
}

/// The item that tells a person about a proposal.
#[must_use]
pub fn person_notify(proposal_id: &str, reason: &str, now: Timestamp) -> NewWork {
    NewWork {
        kind: PERSON_NOTIFY.to_owned(),
        lane: NOTIFICATIONS.to_owned(),
        subject: Some(proposal_id.to_owned()),
        payload: json!({ "proposal_id": proposal_id, "reason": reason }),
        run_after: now,
        max_attempts: 10,
        every: None,
        dedupe_key: None,
    }
}

/// Refund sends written with an approval, to start once it commits.
#[must_use]
pub(crate) enum Sends {
    /// Claimed for this process's payments lane: handed straight to it.
    Claimed(Vec<storage::work::WorkItem>),
    /// Queued for whichever worker claims them (no runner here runs the
    /// lane).
    Queued(Vec<NewWork>),
}

impl Sends {
    /// Starts the sends; call after the commit.
    pub(crate) fn start(self, wake: &runner::Wake) {
        match self {
            Sends::Claimed(items) => wake.hand_over(items),
            Sends::Queued(items) => crate::step::wake_lanes(wake, &items),
        }
    }
}

/// Writes refund sends in the caller's transaction. When this process runs
/// the payments lane they are written already claimed for it, so a send
/// costs no claim transaction and starts the moment the approval commits
/// ([`Sends::start`]); if the process dies first, its worker takes them
/// back when it starts again (or another takes them over when the lease
/// runs out).
///
/// # Errors
/// Database failures.
pub(crate) async fn queue_sends(
    wake: &runner::Wake,
    tx: &impl storage::ConnectionTrait,
    items: Vec<NewWork>,
    now: Timestamp,
) -> Result<Sends, StorageError> {
    let Some(taker) = wake.taker(PAYMENTS) else {
        storage::work::enqueue(tx, &items, now).await?;
        return Ok(Sends::Queued(items));
    };
    let lease = Duration::from_std(taker.lease).unwrap_or(Duration::MAX);
    let claimed =
        storage::work::enqueue_claimed(tx, &items, &taker.owner, now + lease, now).await?;
    Ok(Sends::Claimed(claimed))
}

/// The work outside requests: the runner's lanes and handlers, and the
/// operations view. What it holds is all it uses.
#[derive(Clone)]
pub struct Work {
    pub(crate) db: Database,
    pub(crate) clock: Clock,
    pub(crate) settings: Arc<EngineSettings>,
    pub(crate) execution: Execution,
    /// The door to this process's runner: wake a lane after queuing work.
    pub wake: runner::Wake,
    pub(crate) activity: runner::Activity,
    pub(crate) tasks: runner::Supervisor,
    /// The gateway's lane and handlers run here when it is on.
    gateway: Option<crate::gateway::Gateway>,
}

impl std::fmt::Debug for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Work").finish_non_exhaustive()
    }
}

impl Work {
    pub(crate) fn new(
        db: Database,
        clock: Clock,
        settings: Arc<EngineSettings>,
        execution: Execution,
        wake: runner::Wake,
        activity: runner::Activity,
        tasks: runner::Supervisor,
    ) -> Self {
        Work {
            db,
            clock,
            settings,
            execution,
            wake,
            activity,
            tasks,
            gateway: None,
        }
    }

    /// The lanes of this deployment: the gateway's only when it is on.
    pub(crate) fn lanes(&self) -> Vec<LaneSpec> {
        let mut all = lanes();
        if self.gateway.is_some() {
            all.push(crate::gateway::lane());
        }
        all
    }

    /// The same work, with the gateway's lane and handlers run too.
    pub(crate) fn with_gateway(mut self, gateway: Option<crate::gateway::Gateway>) -> Self {
        self.gateway = gateway;
        self
    }

    /// The current time on the engine's clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The runner for this engine's work, working under the executor name
    /// (`EngineSettings::executor_name`: a name that stays the same across
    /// restarts of this worker and differs between replicas, so a restart
    /// takes back at once what its previous life held, and the proposals it
    /// claimed are still its own). Call [`Runner::start`] on it; stop it
    /// with `engine.tasks.shutdown`.
    #[must_use]
    pub fn runner(&self, every: &WorkSchedule) -> Runner {
        let owner = self.settings.executor_name.as_str();
        let mut builder = Runner::builder(
            self.db.clone(),
            {
                let clock = self.clock.clone();
                std::sync::Arc::new(move || clock.now())
            },
            owner,
            self.wake.clone(),
            self.activity.clone(),
            self.tasks.clone(),
        );
        for lane in lanes() {
            if lane.name != SCHEDULED || every.sweeps {
                builder = builder.lane(lane);
            }
        }
        if let Some(gateway) = &self.gateway {
            builder = gateway.register(builder);
        }
        if every.sweeps {
            for schedule in schedules(every) {
                builder = builder.schedule(schedule);
            }
        }
        handlers::register(self, builder, every).build()
    }

    /// Queues work in the caller's transaction (wake its lane after the
    /// commit).
    ///
    /// # Errors
    /// Database failures.
    pub(crate) async fn queue_work(
        &self,
        tx: &impl storage::ConnectionTrait,
        items: &[NewWork],
    ) -> Result<(), StorageError> {
        storage::work::enqueue(tx, items, self.now()).await?;
        Ok(())
    }
}
