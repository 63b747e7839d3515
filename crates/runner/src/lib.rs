//! The durable work runner.
//!
//! Work that must happen is a row in `work_items`, written in the same
//! transaction as the state change that calls for it (see `storage::work`).
//! A [`Runner`] runs lanes: each lane claims its due items with a lease,
//! runs at most its concurrency at once, renews leases while handlers work,
//! retries failures with backoff and jitter, dead-letters an item after its
//! last attempt, and re-queues schedules after each run. Background and
//! scheduled lanes give way to interactive work ([`Activity`]). Every task
//! runs under the process's [`Supervisor`], which shutdown waits for.

mod activity;
mod backoff;
pub mod batch;
mod lane;
mod run;
mod supervisor;
mod wake;

pub use activity::{Activity, ActivityGuard};
pub use backoff::Backoff;
pub use lane::{LaneSpec, Priority};
pub use run::{Finished, Handler, Job, JobError, Runner, RunnerBuilder, Schedule};
pub use supervisor::Supervisor;
pub use wake::Wake;

/// A source of the current time (tests move it instead of sleeping).
pub type Clock = std::sync::Arc<dyn Fn() -> chrono::DateTime<chrono::Utc> + Send + Sync>;
