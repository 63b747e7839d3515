//! What time it is, for every use case. Each service holds a [`Clock`] and
//! reads the time from it, never from the system directly, so a test moves
//! a [`ManualClock`] forward instead of sleeping until time has passed.

use chrono::Duration;
use domain::Timestamp;
use std::sync::{Arc, Mutex, PoisonError};

/// A source of the current time: wall time in production
/// ([`Clock::system`]), a hand-moved one in tests ([`ManualClock`]).
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Timestamp + Send + Sync>);

impl Clock {
    /// Wall time.
    pub fn system() -> Self {
        Clock(Arc::new(chrono::Utc::now))
    }

    /// Any source of time (a test's own, a fixed instant).
    pub fn from_fn(read: impl Fn() -> Timestamp + Send + Sync + 'static) -> Self {
        Clock(Arc::new(read))
    }

    /// A clock that always reads `at` (records made at one instant).
    pub fn fixed(at: Timestamp) -> Self {
        Clock::from_fn(move || at)
    }

    /// The current time on this clock.
    pub fn now(&self) -> Timestamp {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Clock").field(&self.now()).finish()
    }
}

/// A clock that stands still until the test moves it.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<Timestamp>>);

impl ManualClock {
    pub fn starting_at(start: Timestamp) -> Self {
        ManualClock(Arc::new(Mutex::new(start)))
    }

    /// A [`Clock`] that reads this one, for an engine or a service.
    pub fn clock(&self) -> Clock {
        let time = self.0.clone();
        Clock::from_fn(move || *time.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn now(&self) -> Timestamp {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn set(&self, time: Timestamp) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = time;
    }

    /// Moves time forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut time = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *time += by;
    }
}
