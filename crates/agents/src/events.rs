//! Everything the runtime does becomes an event, so an audit can replay who
//! decided what from which evidence: model calls and their latency, each
//! tool call and which outcome it had, handoffs accepted and refused, stops
//! and step limits.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::control::StopPoint;
use crate::model::Usage;
use crate::outcome::OutcomeKind;

/// One thing that happened in a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The turn number within the conversation (1-based).
    pub turn: u64,
    pub at: DateTime<Utc>,
    /// The agent active when it happened.
    pub agent: String,
    /// Set on what a subagent of the turn did: which one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<String>,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    TurnStarted {
        max_steps: u32,
    },
    /// Tool calls left without a result by an earlier, interrupted turn were
    /// closed as cancelled before this turn began, and a customer message
    /// left without a reply (by a version that did not record failures) was
    /// given the failure note, so two user messages never follow each other.
    TranscriptRepaired {
        cancelled_calls: usize,
        #[serde(default)]
        unanswered_message_closed: bool,
    },
    /// Messages sent while the turn ran, for it, were given to the model
    /// before its next call.
    SteeringDelivered {
        step: u32,
        messages: usize,
    },
    ModelCallStarted {
        step: u32,
        model: String,
        tools: Vec<String>,
    },
    ModelCallFinished {
        step: u32,
        latency_ms: u64,
        tool_calls: usize,
        finish_reason: String,
        /// Token counts as the server reported them; `null` when it did
        /// not (unknown, not zero).
        #[serde(default)]
        usage: Option<Usage>,
    },
    ModelCallFailed {
        step: u32,
        latency_ms: u64,
        error_kind: String,
        error: String,
    },
    ToolCallStarted {
        step: u32,
        call_id: String,
        tool: String,
    },
    ToolCallFinished {
        step: u32,
        call_id: String,
        tool: String,
        outcome: OutcomeKind,
        /// Provenance sources of a found result.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        sources: Vec<String>,
        latency_ms: u64,
    },
    HandoffAccepted {
        step: u32,
        call_id: String,
        from: String,
        to: String,
        reason: String,
    },
    HandoffRefused {
        step: u32,
        call_id: String,
        from: String,
        to: String,
        why: String,
    },
    /// The loop noticed a stop request here (it may have been made
    /// earlier; `StopLanded` carries the latency from the request itself).
    StopRequested {
        step: u32,
        during: StopPoint,
    },
    StopLanded {
        /// From [`TurnControl::stop`](crate::TurnControl::stop) to the end of
        /// the turn, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        latency_ms: Option<u64>,
        cancelled_calls: usize,
    },
    StepLimitReached {
        steps: u32,
    },
    TurnFinished {
        outcome: String,
        steps: u32,
    },
    TurnFailed {
        error: String,
    },
    /// A tool of the turn started a subagent; it runs once the
    /// conversation's subagent lane has a place for it.
    SubagentQueued {
        /// What it works on, for people ("order 4821").
        label: String,
        max_steps: u32,
    },
    /// The subagent got its place in the lane and began.
    SubagentStarted {
        label: String,
    },
    /// The subagent ended: `answered`, `stopped`, `step_limit` or `failed`.
    SubagentFinished {
        label: String,
        outcome: String,
        steps: u32,
        latency_ms: u64,
        /// Where a stop found it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped_during: Option<String>,
    },
}

/// Where events go. Recording is awaited inside the turn loop, so a sink
/// should be quick (buffer, or hand off to a channel) and handle its own
/// failures: losing the audit trail is the sink's to report, not the turn's.
#[async_trait]
pub trait EventSink: Send + Sync {
    /// Record one event.
    async fn record(&self, event: Event);
}

/// Keeps every event in memory; for tests and small tools.
#[derive(Debug, Default)]
pub struct MemorySink {
    events: Mutex<Vec<Event>>,
}

impl MemorySink {
    /// An empty sink.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of everything recorded so far.
    #[must_use]
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().clone()
    }

    /// Only the kinds, in order.
    #[must_use]
    pub fn kinds(&self) -> Vec<EventKind> {
        self.events.lock().iter().map(|e| e.kind.clone()).collect()
    }
}

#[async_trait]
impl EventSink for MemorySink {
    async fn record(&self, event: Event) {
        self.events.lock().push(event);
    }
}

/// Discards events.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopSink;

#[async_trait]
impl EventSink for NoopSink {
    async fn record(&self, _event: Event) {}
}
