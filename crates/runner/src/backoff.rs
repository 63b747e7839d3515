//! Retry delays: exponential with jitter, so items that failed together do
//! not all come back at the same instant.

use chrono::Duration;
use rand::Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub longest: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            first: Duration::seconds(2),
            longest: Duration::minutes(10),
        }
    }
}

impl Backoff {
    /// The wait after the `attempt`-th failure (1 for the first): half of
    /// `first · 2^(attempt-1)` (capped at `longest`) plus a random part of
    /// up to the other half.
    #[must_use]
    pub fn after(&self, attempt: u32) -> Duration {
        let factor = 2i32.saturating_pow(attempt.saturating_sub(1).min(20));
        let full = self
            .first
            .checked_mul(factor)
            .unwrap_or(self.longest)
            .min(self.longest);
        let half = full.num_milliseconds() / 2;
        let jitter = if half > 0 {
            rand::thread_rng().gen_range(0..=half)
        } else {
            0
        };
        Duration::milliseconds(half + jitter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_wait_longer_each_time_within_their_jitter_and_never_past_the_cap() {
        let backoff = Backoff {
            first: Duration::seconds(2),
            longest: Duration::seconds(60),
        };
        for _ in 0..200 {
            let first = backoff.after(1);
            assert!(first >= Duration::seconds(1) && first <= Duration::seconds(2));
            let third = backoff.after(3);
            assert!(third >= Duration::seconds(4) && third <= Duration::seconds(8));
            let late = backoff.after(30);
            assert!(late >= Duration::seconds(30) && late <= Duration::seconds(60));
        }
    }

    #[test]
    fn jitter_spreads_items_that_failed_together() {
        let backoff = Backoff::default();
        let waits: std::collections::HashSet<i64> = (0..50)
            .map(|_| backoff.after(4).num_milliseconds())
            .collect();
        assert!(waits.len() > 10, "only {} distinct waits", waits.len());
    }
}
