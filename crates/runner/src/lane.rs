//! A lane: one kind of work with its own concurrency, lease and priority.

use crate::backoff::Backoff;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Work that follows from a person's action (a refund to send): gives
    /// way to interactive work only briefly.
    Background,
    /// Sweeps and checks on a timer: gives way to interactive work for
    /// longer.
    Scheduled,
}

impl Priority {
    /// How long the lane waits for interactive work to finish before it
    /// takes more items anyway.
    #[must_use]
    pub fn longest_deferral(self) -> Duration {
        match self {
            Priority::Background => Duration::from_millis(200),
            Priority::Scheduled => Duration::from_secs(2),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneSpec {
    pub name: String,
    /// What the lane is for, shown on the operations view.
    pub purpose: String,
    /// Items of this lane running at once in this process.
    pub concurrency: usize,
    pub priority: Priority,
    /// How long a claim lasts without renewal; renewed every third of it.
    pub lease: Duration,
    /// How often an idle lane looks for work another replica queued.
    pub poll_every: Duration,
    pub backoff: Backoff,
}

impl LaneSpec {
    #[must_use]
    pub fn new(name: &str, purpose: &str, concurrency: usize, priority: Priority) -> Self {
        LaneSpec {
            name: name.to_owned(),
            purpose: purpose.to_owned(),
            concurrency: concurrency.max(1),
            priority,
            lease: Duration::from_secs(30),
            poll_every: Duration::from_secs(1),
            backoff: Backoff::default(),
        }
    }

    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    #[must_use]
    pub fn with_poll_every(mut self, every: Duration) -> Self {
        self.poll_every = every;
        self
    }

    #[must_use]
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }
}
