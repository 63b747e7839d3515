//! The owner of every task the process starts. Shutdown tells them to stop
//! (a cancellation token each long-running task watches) and waits for them,
//! within a grace period.

use std::future::Future;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

#[derive(Clone, Default)]
pub struct Supervisor {
    tracker: TaskTracker,
    stopping: CancellationToken,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("tasks", &self.tracker.len())
            .field("stopping", &self.stopping.is_cancelled())
            .finish()
    }
}

impl Supervisor {
    #[must_use]
    pub fn new() -> Self {
        Supervisor::default()
    }

    /// Starts a task the supervisor owns, with the priority of the task
    /// that starts it. Long-running tasks select on
    /// [`Supervisor::stopping`] and end when it fires.
    pub fn spawn<F>(&self, name: &'static str, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // A task started by background work is background work too (its
        // writes give way to interactive ones; see storage::write_gate).
        let task = storage::write_gate::with_priority_of_caller(task);
        self.tracker
            .spawn(task.instrument(tracing::debug_span!("task", task.name = name)))
    }

    /// Fires when shutdown begins.
    #[must_use]
    pub fn stopping(&self) -> CancellationToken {
        self.stopping.clone()
    }

    /// Tasks running now.
    #[must_use]
    pub fn running(&self) -> usize {
        self.tracker.len()
    }

    /// Tells every task to stop and waits up to `grace` for all of them to
    /// end. Returns whether they all did.
    pub async fn shutdown(&self, grace: Duration) -> bool {
        self.stopping.cancel();
        self.tracker.close();
        let finished = tokio::time::timeout(grace, self.tracker.wait())
            .await
            .is_ok();
        if !finished {
            tracing::warn!(
                tasks = self.tracker.len(),
                "shutdown grace period over with tasks still running"
            );
        }
        finished
    }
}
