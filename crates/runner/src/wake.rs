//! Nudges a lane to look for work at once: a use case that committed an
//! item calls it after the commit, so the item starts without waiting for
//! the lane's next poll. Other replicas find it on their poll.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::Notify;

#[derive(Clone, Default)]
pub struct Wake {
    lanes: Arc<Mutex<HashMap<String, Arc<Notify>>>>,
}

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wake").finish_non_exhaustive()
    }
}

impl Wake {
    /// Wakes the lane (a no-op when no runner in this process runs it).
    pub fn lane(&self, lane: &str) {
        self.notify(lane).notify_one();
    }

    pub(crate) fn notify(&self, lane: &str) -> Arc<Notify> {
        let mut lanes = self
            .lanes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        lanes.entry(lane.to_owned()).or_default().clone()
    }
}
