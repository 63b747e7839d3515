//! Live updates: every committed state change is announced here, so pages
//! can update without reloading.

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalChanged {
    pub proposal_id: String,
    pub order_id: String,
    pub status: String,
    /// The customer the refund is for: they may watch it too.
    pub customer_id: Option<String>,
}

#[derive(Clone)]
pub struct LiveUpdates {
    sender: broadcast::Sender<ProposalChanged>,
}

impl Default for LiveUpdates {
    fn default() -> Self {
        LiveUpdates {
            sender: broadcast::channel(1024).0,
        }
    }
}

impl LiveUpdates {
    /// Announces a committed change; nobody listening is fine.
    pub fn publish(&self, change: ProposalChanged) {
        let _ = self.sender.send(change);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<ProposalChanged> {
        self.sender.subscribe()
    }
}
