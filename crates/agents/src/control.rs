//! Stop always lands. The turn loop checks this control at every step and
//! races it against the model call and every tool call, so a Stop ends the
//! turn promptly even while the agent waits on something slow.
//!
//! The control also carries steering: messages sent "for this turn" while
//! it runs. The turn takes them before its next model call (from a
//! [`Steering`] source the application provides, which records the taking
//! first), so the model reads them without the turn being restarted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;

use crate::transcript::UserMessage;

/// Where a running turn takes the messages sent to steer it. `take` is
/// called only after [`TurnControl::steering_waiting`] said something
/// waits, right before a model call; what it returns is delivered to the
/// model, so it records the taking before returning. The messages will
/// stand in the transcript from position `first_index` on, in order.
#[async_trait]
pub trait Steering: Send + Sync {
    async fn take(&self, first_index: usize) -> Vec<UserMessage>;
}

#[derive(Default)]
struct SteeringSlot {
    waiting: AtomicBool,
    source: OnceLock<Arc<dyn Steering>>,
}

impl std::fmt::Debug for SteeringSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SteeringSlot")
            .field("waiting", &self.waiting.load(Ordering::Relaxed))
            .field("source", &self.source.get().is_some())
            .finish()
    }
}

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The control handle of one turn. Clone it to hand the Stop button to
/// another task; every clone controls the same turn.
///
/// Two ways to end a turn: [`stop`](Self::stop) ends it and everything it
/// started ([`child`](Self::child) controls); [`preempt`](Self::preempt)
/// ends only the turn, so a newer message can take its place while the
/// work it started in the background runs on.
#[derive(Debug, Clone)]
pub struct TurnControl {
    /// Stop: the turn and everything it started.
    token: CancellationToken,
    /// The turn alone: cancelled by a stop (a child of `token`) or a preempt.
    turn: CancellationToken,
    requested_at: Arc<OnceLock<Instant>>,
    steering: Arc<SteeringSlot>,
}

impl Default for TurnControl {
    fn default() -> Self {
        Self::child_of(&CancellationToken::new())
    }
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
        let token = parent.child_token();
        Self {
            turn: token.child_token(),
            token,
            requested_at: Arc::default(),
            steering: Arc::default(),
        }
    }

    /// A control for work this turn starts (a subagent): stopped whenever
    /// this one is stopped (not when it is only preempted), and stoppable
    /// on its own without stopping this one. It takes no steering:
    /// messages for the turn go to the turn.
    #[must_use]
    pub fn child(&self) -> Self {
        Self::child_of(&self.token)
    }

    /// Where the turn takes steering messages from (the first source set
    /// stays).
    #[must_use]
    pub fn with_steering(self, source: Arc<dyn Steering>) -> Self {
        let _ = self.steering.source.set(source);
        self
    }

    /// Says a steering message waits: the turn asks its source before its
    /// next model call.
    pub fn steering_waiting(&self) {
        self.steering.waiting.store(true, Ordering::SeqCst);
    }

    /// The steering messages waiting, taken from the source to stand from
    /// `first_index` on (none without a source or a signal, and then
    /// nothing is asked).
    pub(crate) async fn take_steering(&self, first_index: usize) -> Vec<UserMessage> {
        if !self.steering.waiting.swap(false, Ordering::SeqCst) {
            return Vec::new();
        }
        match self.steering.source.get() {
            Some(source) => source.take(first_index).await,
            None => Vec::new(),
        }
    }

    /// Ask the turn and everything it started to stop. Idempotent (also
    /// after a preempt, whose background work it then stops); the first
    /// request's time is kept to measure how long the stop took to land.
    pub fn stop(&self) {
        let _ = self.requested_at.set(Instant::now());
        self.token.cancel();
    }

    /// Ask the turn alone to end, as a stop ends it, leaving what it
    /// started running (a newer message takes the turn's place).
    pub fn preempt(&self) {
        let _ = self.requested_at.set(Instant::now());
        self.turn.cancel();
    }

    /// Whether the turn was asked to end (stopped or preempted).
    #[must_use]
    pub fn is_stop_requested(&self) -> bool {
        self.turn.is_cancelled()
    }

    /// Whether the turn was preempted and not stopped: what it started in
    /// the background runs on.
    #[must_use]
    pub fn is_preempted(&self) -> bool {
        self.turn.is_cancelled() && !self.token.is_cancelled()
    }

    /// The result a tool call cut short by this control's request gets.
    #[must_use]
    pub fn cut_reason(&self) -> &'static str {
        if self.is_preempted() {
            "interrupted by a newer message"
        } else {
            "cancelled by stop"
        }
    }

    /// Resolves once the turn is asked to end (stopped or preempted).
    pub async fn stopped(&self) {
        self.turn.cancelled().await;
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
