//! Subagents: a tool of a turn may start child agents, each with its own
//! transcript, its own step budget and its own events (recorded in the
//! turn's stream, tagged with the subagent's id), at most a few at once per
//! conversation (a [`SubagentLane`]), and every one stopped with the turn
//! that started it: its control is a [`TurnControl::child`] of the turn's.
//!
//! The runtime only runs them; what a subagent is for, which agent it is
//! and what its result means belong to the application's tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::context::ToolContext;
use crate::control::{StopPoint, TurnControl};
use crate::events::{Event, EventKind, EventSink};
use crate::runner::{RunError, Runner, TurnOutcome};
use crate::state::ConversationState;
use crate::transcript::{Message, UserMessage};
use crate::workflow::Workflow;

/// How many subagents of one conversation run at once; the others wait
/// for a place. Shared by every turn of the conversation.
#[derive(Debug, Clone)]
pub struct SubagentLane {
    places: Arc<Semaphore>,
}

impl SubagentLane {
    /// A lane for `limit` subagents at once (at least one).
    #[must_use]
    pub fn new(limit: usize) -> Self {
        Self {
            places: Arc::new(Semaphore::new(limit.max(1))),
        }
    }

    /// A place, once one is free, or `None` when `control` is stopped
    /// first (the subagent never starts then).
    async fn place(&self, control: &TurnControl) -> Option<OwnedSemaphorePermit> {
        tokio::select! {
            biased;
            () = control.stopped() => None,
            place = Arc::clone(&self.places).acquire_owned() => place.ok(),
        }
    }
}

/// What a subagent is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentTask {
    /// Unique within the conversation; tags its events.
    pub id: String,
    /// The workflow's agent that does the work.
    pub agent: String,
    /// What it works on, for people ("order 4821").
    pub label: String,
    /// Its only message: the task.
    pub message: UserMessage,
    /// Most model calls it may make.
    pub max_steps: u32,
}

/// How a subagent ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SubagentEnd {
    /// It answered; the answer is its report's `reply`.
    Answered,
    /// Its turn was stopped, or it was stopped before it got a place.
    Stopped { during: SubagentStopPoint },
    /// It used its step budget without answering.
    StepLimit { steps: u32 },
    /// Its model failed, or the workflow has no such agent.
    Failed { error: String },
}

impl SubagentEnd {
    /// The outcome's name, as events and reports write it.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::Stopped { .. } => "stopped",
            Self::StepLimit { .. } => "step_limit",
            Self::Failed { .. } => "failed",
        }
    }
}

/// Where a stop found a subagent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubagentStopPoint {
    /// Waiting for a place in the lane: it never started.
    WaitingForPlace,
    BetweenSteps,
    ModelCall,
    ToolCalls,
}

impl SubagentStopPoint {
    fn as_str(self) -> &'static str {
        match self {
            Self::WaitingForPlace => "waiting_for_place",
            Self::BetweenSteps => "between_steps",
            Self::ModelCall => "model_call",
            Self::ToolCalls => "tool_calls",
        }
    }
}

impl From<StopPoint> for SubagentStopPoint {
    fn from(point: StopPoint) -> Self {
        match point {
            StopPoint::BetweenSteps => Self::BetweenSteps,
            StopPoint::ModelCall => Self::ModelCall,
            StopPoint::ToolCalls => Self::ToolCalls,
        }
    }
}

/// What a subagent did.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentReport {
    pub id: String,
    pub agent: String,
    pub label: String,
    pub end: SubagentEnd,
    /// Its last words (its answer, or the note its turn ended with).
    pub reply: String,
    /// Its whole transcript, task first.
    pub transcript: Vec<Message>,
    /// Model calls it made.
    pub steps: u32,
}

/// What a turn's tools need to start subagents: the runner and workflow
/// they run on, the conversation's lane, and the turn's event sink and
/// number (their events are the turn's, tagged). Cheap to clone, and owned,
/// so a subagent may run as a task of its own.
#[derive(Clone)]
pub struct Subagents {
    runner: Runner,
    workflow: Arc<Workflow>,
    lane: SubagentLane,
    sink: Arc<dyn EventSink>,
    turn: u64,
}

impl std::fmt::Debug for Subagents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subagents")
            .field("lane", &self.lane)
            .field("turn", &self.turn)
            .finish_non_exhaustive()
    }
}

impl Subagents {
    #[must_use]
    pub fn new(
        runner: Runner,
        workflow: Arc<Workflow>,
        lane: SubagentLane,
        sink: Arc<dyn EventSink>,
        turn: u64,
    ) -> Self {
        Self {
            runner,
            workflow,
            lane,
            sink,
            turn,
        }
    }

    /// Runs one subagent: it waits for a place in the lane, then runs one
    /// turn of `task.agent` on a fresh transcript with `task.max_steps`,
    /// under `control` (a [`TurnControl::child`] of the starting turn's).
    pub async fn run(
        &self,
        task: SubagentTask,
        ctx: &ToolContext,
        control: &TurnControl,
    ) -> SubagentReport {
        let tagged = Tagged {
            inner: self.sink.as_ref(),
            turn: self.turn,
            subagent: task.id.clone(),
            model_calls: AtomicU32::new(0),
        };
        let started = Instant::now();
        tagged
            .emit(
                &task.agent,
                EventKind::SubagentQueued {
                    label: task.label.clone(),
                    max_steps: task.max_steps,
                },
            )
            .await;
        let mut state = ConversationState::new();
        let report = |end: SubagentEnd, state: &ConversationState| SubagentReport {
            id: task.id.clone(),
            agent: task.agent.clone(),
            label: task.label.clone(),
            reply: last_words(state),
            end,
            transcript: state.messages().to_vec(),
            steps: 0,
        };
        let Some(_place) = self.lane.place(control).await else {
            let end = SubagentEnd::Stopped {
                during: SubagentStopPoint::WaitingForPlace,
            };
            tagged.finished(&task, &end, 0, started).await;
            return report(end, &state);
        };
        if self.workflow.agent(&task.agent).is_none() {
            let end = SubagentEnd::Failed {
                error: format!("the workflow has no agent {:?}", task.agent),
            };
            tagged.finished(&task, &end, 0, started).await;
            return report(end, &state);
        }
        tagged
            .emit(
                &task.agent,
                EventKind::SubagentStarted {
                    label: task.label.clone(),
                },
            )
            .await;
        state.set_active_agent(&task.agent);
        let budget = self.runner.clone().with_max_steps(task.max_steps);
        let outcome = budget
            .run_turn(
                &self.workflow,
                &mut state,
                task.message.clone(),
                ctx,
                control,
                &tagged,
            )
            .await;
        let steps = tagged.steps();
        let end = match outcome {
            Ok(TurnOutcome::Answered { .. }) => SubagentEnd::Answered,
            Ok(TurnOutcome::Stopped { during, .. }) => SubagentEnd::Stopped {
                during: during.into(),
            },
            Ok(TurnOutcome::StepLimit { steps, .. }) => SubagentEnd::StepLimit { steps },
            Err(error @ (RunError::Model { .. } | RunError::UnknownActiveAgent { .. })) => {
                SubagentEnd::Failed {
                    error: error.to_string(),
                }
            }
        };
        tagged.finished(&task, &end, steps, started).await;
        SubagentReport {
            steps,
            ..report(end, &state)
        }
    }
}

/// The last thing the subagent's agent said.
fn last_words(state: &ConversationState) -> String {
    state
        .messages()
        .iter()
        .rev()
        .find(|message| {
            message.role == crate::transcript::Role::Assistant && !message.content.is_empty()
        })
        .map(|message| message.content.clone())
        .unwrap_or_default()
}

/// The starting turn's sink, seen from a subagent: its events belong to the
/// starting turn and say which subagent they come from.
struct Tagged<'a> {
    inner: &'a dyn EventSink,
    turn: u64,
    subagent: String,
    model_calls: AtomicU32,
}

impl Tagged<'_> {
    async fn emit(&self, agent: &str, kind: EventKind) {
        self.inner
            .record(Event {
                turn: self.turn,
                at: chrono::Utc::now(),
                agent: agent.to_owned(),
                subagent: Some(self.subagent.clone()),
                kind,
            })
            .await;
    }

    async fn finished(&self, task: &SubagentTask, end: &SubagentEnd, steps: u32, since: Instant) {
        let stopped_during = match end {
            SubagentEnd::Stopped { during } => Some(during.as_str().to_owned()),
            _ => None,
        };
        self.emit(
            &task.agent,
            EventKind::SubagentFinished {
                label: task.label.clone(),
                outcome: end.as_str().to_owned(),
                steps,
                latency_ms: crate::runner::millis(since),
                stopped_during,
            },
        )
        .await;
    }

    /// Model calls the subagent made.
    fn steps(&self) -> u32 {
        self.model_calls.load(Ordering::Relaxed)
    }
}

#[async_trait]
impl EventSink for Tagged<'_> {
    async fn record(&self, mut event: Event) {
        if matches!(event.kind, EventKind::ModelCallStarted { .. }) {
            self.model_calls.fetch_add(1, Ordering::Relaxed);
        }
        event.turn = self.turn;
        event.subagent = Some(self.subagent.clone());
        self.inner.record(event).await;
    }
}
