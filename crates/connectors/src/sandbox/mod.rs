//! An in-memory payment provider served over real HTTP, with Stripe's
//! idempotency semantics and seeded fault injection. It stands for the
//! outside world: the main binary mounts [`router`] (for example at
//! `/sandbox/payments`) or a test runs it alone with [`serve_standalone`];
//! [`SandboxProvider`] talks to it over HTTP.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use connectors::sandbox::{self, FaultMode, FaultPlan, FaultRule, SandboxConfig, SandboxState};
//!
//! let config = SandboxConfig::default().with_seed(42).with_faults(FaultPlan::new(vec![
//!     FaultRule::always(FaultMode::ExecuteThenTimeout).with_probability(0.2).first_attempt_only(),
//! ]));
//! let state = SandboxState::new(config)?;
//! let app = axum::Router::new().nest("/sandbox/payments", sandbox::router(state));
//! # let _ = app;
//! # Ok(())
//! # }
//! ```

mod answers;
mod auth;
mod charges;
mod client;
mod config;
mod execution;
mod faults;
mod idempotency;
mod ledger;
mod server;
mod state;
pub mod wire;

pub use charges::{ChargeSeed, ChargeSource};
pub use client::SandboxProvider;
pub use config::SandboxConfig;
pub use execution::{DECLINED_PREFIX, FAILED_PREFIX, PENDING_PREFIX};
pub use faults::{FaultDecision, FaultMode, FaultPlan, FaultRule, InvalidFaultPlan};
pub use server::{Endpoint, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, endpoints, router};
pub use state::SandboxState;
pub use wire::{
    CreateChargeBody, FaultStatus, FaultUpdate, LedgerEntry, LedgerView, SandboxCharge,
    SandboxRefund,
};

/// Serve the sandbox API on `listener` (bind `127.0.0.1:0` in tests) until
/// the task is dropped.
///
/// # Errors
///
/// When the server fails to accept connections.
pub async fn serve_standalone(
    listener: tokio::net::TcpListener,
    state: SandboxState,
) -> std::io::Result<()> {
    axum::serve(listener, router(state)).await
}
