//! Interactive work in progress (chat turns, approvals). Background and
//! scheduled lanes wait for a quiet moment before they take more work, so a
//! flood of background items does not slow the people waiting on a reply.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Clone, Default)]
pub struct Activity {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    busy: AtomicUsize,
    quiet: Notify,
}

impl std::fmt::Debug for Activity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Activity")
            .field("busy", &self.busy())
            .finish()
    }
}

/// Held while one piece of interactive work runs.
#[must_use = "the work counts as interactive only while the guard lives"]
pub struct ActivityGuard {
    inner: Arc<Inner>,
}

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        if self.inner.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.inner.quiet.notify_waiters();
        }
    }
}

impl Activity {
    /// Marks interactive work as running until the guard is dropped.
    pub fn enter(&self) -> ActivityGuard {
        self.inner.busy.fetch_add(1, Ordering::AcqRel);
        ActivityGuard {
            inner: self.inner.clone(),
        }
    }

    /// Interactive work running now.
    #[must_use]
    pub fn busy(&self) -> usize {
        self.inner.busy.load(Ordering::Acquire)
    }

    /// Waits until no interactive work runs, or at most `longest` (so
    /// background work is slowed, never starved). Returns whether it was
    /// quiet.
    pub async fn quiet_or(&self, longest: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + longest;
        loop {
            let notified = self.inner.quiet.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.busy() == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }
}
