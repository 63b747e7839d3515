//! The sandbox's in-memory world: idempotency keys, ledger, charges, fault
//! engine, its secret key and a clock that tests can move forward.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use parking_lot::{Mutex, MutexGuard};
use rand::Rng;
use rand::distributions::Alphanumeric;
use secrecy::{ExposeSecret, SecretString};

use super::charges::{Charge, ChargeSource, Charges, Registration};
use super::config::SandboxConfig;
use super::execution::ExecutionTicket;
use super::faults::{FaultEngine, FaultMode, InvalidFaultPlan};
use super::idempotency::{Admission, KeyStore, RefundParams, StoredOutcome};
use super::ledger::Ledger;
use super::wire::{FaultStatus, FaultUpdate, LedgerView, SandboxCharge, SandboxRefund};

/// Shared state of one sandbox: cheap to clone, one world per `new`.
#[derive(Debug, Clone)]
pub struct SandboxState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    retention: Duration,
    secret_key: SecretString,
    world: Mutex<World>,
    faults: Mutex<FaultEngine>,
    timing: Mutex<Timing>,
    clock_offset: Mutex<Duration>,
    charge_source: Mutex<Option<Arc<dyn ChargeSource>>>,
}

impl std::fmt::Debug for dyn ChargeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChargeSource")
    }
}

/// Keys, ledger and charges under one lock, so admission and execution are
/// atomic, and two refunds on one charge can never together exceed it.
#[derive(Debug, Default)]
pub(crate) struct World {
    pub(crate) keys: KeyStore,
    pub(crate) ledger: Ledger,
    pub(crate) charges: Charges,
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

/// What `POST /v1/charges` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChargeCreation {
    Created(SandboxCharge),
    Existing(SandboxCharge),
    Conflict(String),
}

impl SandboxState {
    /// # Errors
    ///
    /// When the configured fault plan is invalid.
    pub fn new(config: SandboxConfig) -> Result<Self, InvalidFaultPlan> {
        config.faults.validate()?;
        let secret_key = config.secret_key.unwrap_or_else(generate_secret_key);
        Ok(Self {
            inner: Arc::new(Inner {
                retention: config.retention,
                secret_key,
                world: Mutex::new(World::default()),
                faults: Mutex::new(FaultEngine::new(config.faults, config.seed)),
                timing: Mutex::new(Timing {
                    hang: config.hang,
                    lookup_latency: config.lookup_latency,
                }),
                clock_offset: Mutex::new(Duration::ZERO),
                charge_source: Mutex::new(None),
            }),
        })
    }

    /// The key every request must present as `Authorization: Bearer <key>`:
    /// the configured one, or the `sk_sbx_…` key generated at `new`. The
    /// process that mounts or starts the sandbox hands it to its client.
    #[must_use]
    pub fn secret_key(&self) -> SecretString {
        self.inner.secret_key.clone()
    }

    pub(crate) fn secret_key_bytes(&self) -> &[u8] {
        self.inner.secret_key.expose_secret().as_bytes()
    }

    pub(crate) fn world(&self) -> MutexGuard<'_, World> {
        self.inner.world.lock()
    }

    /// Register a charge (a customer's payment) that refunds can draw on, as
    /// a test-mode payment would. Idempotent for the same amount and
    /// currency.
    ///
    /// # Errors
    ///
    /// When `id` already names a charge with another amount or currency.
    pub fn add_charge(
        &self,
        id: &str,
        amount_minor: i64,
        currency: &str,
    ) -> Result<SandboxCharge, String> {
        match self.create_charge(id, amount_minor, currency) {
            ChargeCreation::Created(charge) | ChargeCreation::Existing(charge) => Ok(charge),
            ChargeCreation::Conflict(message) => Err(message),
        }
    }

    pub(crate) fn create_charge(
        &self,
        id: &str,
        amount_minor: i64,
        currency: &str,
    ) -> ChargeCreation {
        let mut world = self.world();
        match world.charges.register(id, amount_minor, currency) {
            Registration::Created(charge) => {
                ChargeCreation::Created(view_of(&charge, &world.ledger))
            }
            Registration::Existing(charge) => {
                ChargeCreation::Existing(view_of(&charge, &world.ledger))
            }
            Registration::Conflict(message) => ChargeCreation::Conflict(message),
        }
    }

    /// Where to learn of charges the registry lacks (see [`ChargeSource`]).
    pub fn set_charge_source(&self, source: Arc<dyn ChargeSource>) {
        *self.inner.charge_source.lock() = Some(source);
    }

    /// The charge as `GET /v1/charges/{id}` shows it, asking the charge
    /// source when the registry lacks it.
    pub async fn charge(&self, id: &str) -> Option<SandboxCharge> {
        self.ensure_charge(id).await;
        view_charge(&self.world(), id)
    }

    /// Make sure the registry holds `id` if anyone knows it: ask the charge
    /// source once, outside the lock (it may do I/O), and insert what it
    /// says unless the charge appeared meanwhile.
    pub(crate) async fn ensure_charge(&self, id: &str) {
        if self.world().charges.contains(id) {
            return;
        }
        let source = self.inner.charge_source.lock().clone();
        let Some(source) = source else {
            return;
        };
        if let Some(seed) = source.charge(id).await {
            self.world().charges.insert_seed(id, seed);
        }
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
        self.world().ledger.view()
    }

    /// Refunds made under `key`, or every refund when `None`; oldest first.
    #[must_use]
    pub fn refunds(&self, key: Option<&str>) -> Vec<SandboxRefund> {
        let world = self.world();
        match key {
            Some(key) => world.ledger.for_key(key),
            None => world.ledger.all(),
        }
    }

    /// The first refund made under `key`.
    #[must_use]
    pub fn refund_for_key(&self, key: &str) -> Option<SandboxRefund> {
        self.world().ledger.first_for_key(key)
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
            .world()
            .keys
            .admit(key, &params, now, self.inner.retention);
        match admission {
            Admission::Execute => Gate::Execute(ExecutionTicket::new(self.clone(), key, params)),
            Admission::Replay(outcome) => Gate::Replay(outcome),
            Admission::InFlight => Gate::InFlight,
            Admission::Conflict { message } => Gate::Conflict { message },
        }
    }
}

fn view_charge(world: &World, id: &str) -> Option<SandboxCharge> {
    world
        .charges
        .get(id)
        .map(|charge| view_of(charge, &world.ledger))
}

fn view_of(charge: &Charge, ledger: &Ledger) -> SandboxCharge {
    SandboxCharge {
        id: charge.id.clone(),
        amount_minor: charge.amount_minor,
        currency: charge.currency.clone(),
        amount_refunded_minor: charge.amount_refunded_minor,
        refunded: charge.fully_refunded(),
        refunds: ledger.for_payment(&charge.id),
    }
}

/// `sk_sbx_` and 32 random letters and digits (about 190 bits).
fn generate_secret_key() -> SecretString {
    let random: String = rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(32)
        .map(char::from)
        .collect();
    SecretString::from(format!("sk_sbx_{random}"))
}
