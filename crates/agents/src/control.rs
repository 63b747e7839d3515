//! Stop always lands. The turn loop checks this control at every step and
//! races it against the model call and every tool call, so a Stop ends the
//! turn promptly even while the agent waits on something slow.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The control handle of one turn. Clone it to hand the Stop button to
/// another task; every clone controls the same turn.
#[derive(Debug, Clone, Default)]
pub struct TurnControl {
    token: CancellationToken,
    requested_at: Arc<OnceLock<Instant>>,
}

impl TurnControl {
    /// A control nobody has stopped yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A control that also stops when `parent` is cancelled, e.g. a
    /// conversation-wide or shutdown token.
    #[must_use]
    pub fn child_of(parent: &CancellationToken) -> Self {
        Self {
            token: parent.child_token(),
            requested_at: Arc::default(),
        }
    }

    /// Ask the turn to stop. Idempotent; the first request's time is kept to
    /// measure how long the stop took to land.
    pub fn stop(&self) {
        let _ = self.requested_at.set(Instant::now());
        self.token.cancel();
    }

    /// Whether a stop has been requested.
    #[must_use]
    pub fn is_stop_requested(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Resolves once a stop is requested.
    pub async fn stopped(&self) {
        self.token.cancelled().await;
    }

    /// When the stop was requested through [`stop`](Self::stop) (`None` if
    /// not requested, or cancelled through a parent token).
    #[must_use]
    pub fn requested_at(&self) -> Option<Instant> {
        self.requested_at.get().copied()
    }
}

/// Where the turn was when the stop landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopPoint {
    /// Between steps (including before the first model call).
    BetweenSteps,
    /// While waiting for the model.
    ModelCall,
    /// While tools were running.
    ToolCalls,
}
