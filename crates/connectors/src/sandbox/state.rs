//! The sandbox's in-memory world: idempotency keys, ledger, fault engine and
//! a clock that tests can move forward.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use parking_lot::Mutex;

use super::config::SandboxConfig;
use super::faults::{FaultEngine, FaultMode, InvalidFaultPlan};
use super::idempotency::{Admission, KeyStore, RefundParams, StoredOutcome};
use super::ledger::Ledger;
use super::wire::{
    ErrorBody, FaultStatus, FaultUpdate, LedgerView, SandboxRefund, SandboxRefundStatus,
};

/// Payment references starting with this are declined with HTTP 402.
pub const DECLINED_PREFIX: &str = "pay_declined";
/// Payment references starting with this get a refund in status `pending`.
pub const PENDING_PREFIX: &str = "pay_pending";
/// Payment references starting with this get a refund in status `failed`.
pub const FAILED_PREFIX: &str = "pay_failed";

/// Shared state of one sandbox: cheap to clone, one world per `new`.
#[derive(Debug, Clone)]
pub struct SandboxState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    retention: Duration,
    world: Mutex<World>,
    faults: Mutex<FaultEngine>,
    timing: Mutex<Timing>,
    clock_offset: Mutex<Duration>,
}

/// Keys and ledger under one lock, so admission and execution are atomic.
#[derive(Debug, Default)]
struct World {
    keys: KeyStore,
    ledger: Ledger,
}

#[derive(Debug, Clone, Copy)]
struct Timing {
    hang: Duration,
    lookup_latency: Duration,
}

/// The result of admitting a refund request.
pub(crate) enum Gate {
    Execute(ExecutionTicket),
    Replay(StoredOutcome),
    InFlight,
    Conflict { message: String },
}

impl SandboxState {
    /// # Errors
    ///
    /// When the configured fault plan is invalid.
    pub fn new(config: SandboxConfig) -> Result<Self, InvalidFaultPlan> {
        config.faults.validate()?;
        Ok(Self {
            inner: Arc::new(Inner {
                retention: config.retention,
                world: Mutex::new(World::default()),
                faults: Mutex::new(FaultEngine::new(config.faults, config.seed)),
                timing: Mutex::new(Timing {
                    hang: config.hang,
                    lookup_latency: config.lookup_latency,
                }),
                clock_offset: Mutex::new(Duration::ZERO),
            }),
        })
    }

    /// The sandbox's notion of now: wall clock plus any advance.
    #[must_use]
    pub fn now(&self) -> DateTime<Utc> {
        let wall = Utc::now();
        let offset = TimeDelta::from_std(*self.inner.clock_offset.lock()).unwrap_or_default();
        wall.checked_add_signed(offset).unwrap_or(wall)
    }

    /// Move the sandbox clock forward, e.g. past the key retention window.
    pub fn advance_clock(&self, by: Duration) {
        let mut offset = self.inner.clock_offset.lock();
        *offset = offset.saturating_add(by);
    }

    /// Every refund grouped per key.
    #[must_use]
    pub fn ledger(&self) -> LedgerView {
        self.inner.world.lock().ledger.view()
    }

    /// Refunds made under `key`, or every refund when `None`; oldest first.
    #[must_use]
    pub fn refunds(&self, key: Option<&str>) -> Vec<SandboxRefund> {
        let world = self.inner.world.lock();
        match key {
            Some(key) => world.ledger.for_key(key),
            None => world.ledger.all(),
        }
    }

    /// The first refund made under `key`.
    #[must_use]
    pub fn refund_for_key(&self, key: &str) -> Option<SandboxRefund> {
        self.inner.world.lock().ledger.first_for_key(key)
    }

    /// Replace the fault plan for a new run (see [`FaultUpdate`]).
    ///
    /// # Errors
    ///
    /// When the plan is invalid; the plan in force is then kept.
    pub fn set_faults(&self, update: FaultUpdate) -> Result<FaultStatus, InvalidFaultPlan> {
        update.faults.validate()?;
        {
            let mut timing = self.inner.timing.lock();
            timing.hang = update.hang.unwrap_or(timing.hang);
            timing.lookup_latency = update.lookup_latency.unwrap_or(timing.lookup_latency);
        }
        {
            let mut engine = self.inner.faults.lock();
            let seed = update.seed.unwrap_or_else(|| engine.seed());
            *engine = FaultEngine::new(update.faults, seed);
        }
        Ok(self.fault_status())
    }

    /// The plan in force and what it decided so far.
    #[must_use]
    pub fn fault_status(&self) -> FaultStatus {
        let timing = *self.inner.timing.lock();
        let engine = self.inner.faults.lock();
        FaultStatus {
            faults: engine.plan().clone(),
            seed: engine.seed(),
            hang: timing.hang,
            lookup_latency: timing.lookup_latency,
            requests_seen: engine.requests_seen(),
            history: engine.history(),
        }
    }

    pub(crate) fn decide_fault(&self, key: &str) -> Option<FaultMode> {
        self.inner.faults.lock().decide(key)
    }

    pub(crate) fn hang(&self) -> Duration {
        self.inner.timing.lock().hang
    }

    /// Waits out the configured latency of lookups. Without one it returns
    /// at once: even a zero sleep goes through the timer and a wake-up.
    pub(crate) async fn lookup_pause(&self) {
        let latency = self.inner.timing.lock().lookup_latency;
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
    }

    /// Check the key and, when it is new, mark it in flight.
    pub(crate) fn admit(&self, key: &str, params: RefundParams) -> Gate {
        let now = self.now();
        let admission = self
            .inner
            .world
            .lock()
            .keys
            .admit(key, &params, now, self.inner.retention);
        match admission {
            Admission::Execute => Gate::Execute(ExecutionTicket {
                state: self.clone(),
                key: key.to_owned(),
                params,
                completed: false,
            }),
            Admission::Replay(outcome) => Gate::Replay(outcome),
            Admission::InFlight => Gate::InFlight,
            Admission::Conflict { message } => Gate::Conflict { message },
        }
    }
}

/// The right to execute one admitted key. Dropping it unexecuted (a panic,
/// a cancelled task) releases the key so a retry can execute.
pub(crate) struct ExecutionTicket {
    state: SandboxState,
    key: String,
    params: RefundParams,
    completed: bool,
}

impl ExecutionTicket {
    /// Execute: record the refund (or the decline) and store the answer for
    /// replay, under one lock.
    pub(crate) fn execute(mut self) -> StoredOutcome {
        let now = self.state.now();
        let outcome = outcome_for(&self.key, &self.params, now);
        let mut world = self.state.inner.world.lock();
        if let StoredOutcome::Refunded(refund) = &outcome {
            world.ledger.record(refund.clone());
        }
        world.keys.complete(&self.key, outcome.clone());
        self.completed = true;
        outcome
    }
}

impl Drop for ExecutionTicket {
    fn drop(&mut self) {
        if !self.completed {
            self.state.inner.world.lock().keys.abandon(&self.key);
        }
    }
}

fn outcome_for(key: &str, params: &RefundParams, now: DateTime<Utc>) -> StoredOutcome {
    let reference = &params.payment_reference;
    if reference.starts_with(DECLINED_PREFIX) {
        return StoredOutcome::Declined(ErrorBody::new(
            "card_error",
            "charge_declined",
            format!(
                "Payment {reference} cannot be refunded: the sandbox declines payment references \
                 starting with {DECLINED_PREFIX}."
            ),
        ));
    }
    let (status, failure_reason) = if reference.starts_with(PENDING_PREFIX) {
        (SandboxRefundStatus::Pending, None)
    } else if reference.starts_with(FAILED_PREFIX) {
        (
            SandboxRefundStatus::Failed,
            Some("expired_or_canceled_card".to_owned()),
        )
    } else {
        (SandboxRefundStatus::Succeeded, None)
    };
    StoredOutcome::Refunded(SandboxRefund {
        id: format!("re_sbx_{}", uuid::Uuid::now_v7().simple()),
        idempotency_key: key.to_owned(),
        payment_reference: reference.clone(),
        amount_minor: params.amount_minor,
        currency: params.currency.clone(),
        status,
        failure_reason,
        metadata: params.metadata.clone(),
        created_at: now,
    })
}
