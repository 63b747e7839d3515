//! Use cases. Each one owns its transaction; repository calls inside it take
//! the transaction; calls to the outside world happen after commit.

pub mod accounts;
pub mod approvals;
pub mod assistant;
pub mod clock;
pub mod core;
pub mod demo;
pub mod exclusive_lane;
pub mod execution;
pub mod gateway;
pub mod live;
pub mod orders;
pub mod payment_refs;
pub mod policies;
pub mod proposals;
pub mod settings;
pub mod step;
pub mod widget;
pub mod work;

pub use crate::clock::{Clock, ManualClock};
pub use crate::core::{Actor, CarrierParts, Engine, EngineSettings};
pub use storage::{Database, StorageError};

/// The current time, in one place so tests can reason about it.
pub fn now() -> domain::Timestamp {
    chrono::Utc::now()
}
