//! Watching a task received here until it ends (A2A `SubscribeToTask`):
//! woken by this process's steps, and a fresh read at least every second
//! for the steps another replica records.

use super::receive::{InboxTaskView, Receiver};
use gateway::GroupName;
use std::time::Duration;
use storage::StorageError;

/// How often a watch reads the task again without being woken.
const REREAD: Duration = Duration::from_secs(1);

impl Receiver {
    /// The task `seen` as soon as it differs from `seen` (a new state, a
    /// new step), for `caller`, the group that sent it; None when it is
    /// no longer there for that group. Waits as long as nothing changes:
    /// the watcher drops the future to stop.
    ///
    /// # Errors
    /// Database failures.
    pub async fn next_change(
        &self,
        caller: &GroupName,
        seen: &InboxTaskView,
    ) -> Result<Option<InboxTaskView>, StorageError> {
        loop {
            // Registered before the read, so a step between the read and
            // the wait still wakes it.
            let changed = self.changed.notified();
            let now = self.task_for(caller, &seen.task_id).await?;
            match now {
                Some(now) if now.state == seen.state && now.updated_at == seen.updated_at => {}
                other => return Ok(other),
            }
            let _ = tokio::time::timeout(REREAD, changed).await;
        }
    }
}
