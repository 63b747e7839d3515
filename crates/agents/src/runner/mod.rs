//! The turn loop: model → tool calls → results, until the model answers
//! without tool calls, a step bound is reached, or Stop lands.

mod calls;
mod markup;
mod turn;

pub use turn::FAILED_NOTE;
pub(crate) use turn::millis;

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::context::ToolContext;
use crate::control::{StopPoint, TurnControl};
use crate::events::EventSink;
use crate::model::{ChatModel, ModelError};
use crate::state::ConversationState;
use crate::transcript::UserMessage;
use crate::workflow::Workflow;

/// Limits of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunnerConfig {
    /// Most model calls in one turn. A model that keeps calling tools is
    /// stopped here rather than looping (and spending) forever. 0 ends every
    /// turn before the first model call.
    pub max_steps: u32,
    /// Longest a single tool call may take; past it the call's outcome is
    /// `unknown`, because the tool may still have done its work. `None`
    /// waits for ever (Stop still works).
    pub tool_timeout: Option<Duration>,
}

impl Default for RunnerConfig {
    /// 10 steps, 60 s per tool call.
    fn default() -> Self {
        Self {
            max_steps: 10,
            tool_timeout: Some(Duration::from_secs(60)),
        }
    }
}

/// Runs turns of a conversation against one model.
#[derive(Clone)]
pub struct Runner {
    model: Arc<dyn ChatModel>,
    config: RunnerConfig,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("model", &self.model.name())
            .field("config", &self.config)
            .finish()
    }
}

impl Runner {
    /// A runner with the default limits.
    #[must_use]
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        Self {
            model,
            config: RunnerConfig::default(),
        }
    }

    /// Replace the limits.
    #[must_use]
    pub fn with_config(mut self, config: RunnerConfig) -> Self {
        self.config = config;
        self
    }

    /// Set the most model calls per turn (at least 1).
    #[must_use]
    pub fn with_max_steps(mut self, max_steps: u32) -> Self {
        self.config.max_steps = max_steps.max(1);
        self
    }

    /// The limits in force.
    #[must_use]
    pub fn config(&self) -> RunnerConfig {
        self.config
    }

    /// Run one turn: append `user_message`, then call the active agent's
    /// model and its tools until it answers, hands off, is stopped or runs
    /// out of steps. Handoffs switch the agent within the turn.
    ///
    /// Whatever happens, `state` stays consistent: every tool call issued
    /// has exactly one result (calls cut short by Stop get a "cancelled"
    /// result). Tool calls left dangling by an interrupted earlier turn are
    /// closed the same way before this one starts.
    ///
    /// # Errors
    ///
    /// [`RunError::UnknownActiveAgent`] when the state names an agent the
    /// workflow lacks (nothing is changed), and [`RunError::Model`] when the
    /// model failed after its backend's retries, cut its reply off at the
    /// output cap, or kept writing tool calls as text (the user message and
    /// any completed steps stay in the transcript, followed by
    /// [`FAILED_NOTE`]).
    #[tracing::instrument(skip_all, fields(turn = state.turns() + 1))]
    pub async fn run_turn(
        &self,
        workflow: &Workflow,
        state: &mut ConversationState,
        user_message: impl Into<UserMessage>,
        ctx: &ToolContext,
        control: &TurnControl,
        sink: &dyn EventSink,
    ) -> Result<TurnOutcome, RunError> {
        let agent = match state.active_agent() {
            None => workflow.root(),
            Some(name) => workflow
                .agent(name)
                .ok_or_else(|| RunError::UnknownActiveAgent {
                    agent: name.to_owned(),
                })?,
        };
        let number = state.start_turn();
        turn::Turn {
            model: self.model.as_ref(),
            config: self.config,
            workflow,
            state,
            ctx,
            control,
            sink,
            number,
            agent,
            step: 0,
            text_calls: 0,
        }
        .run(user_message.into())
        .await
    }
}

/// How a turn ended (other than by an error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The model answered without calling tools.
    Answered { agent: String, content: String },
    /// Stop landed; the transcript ends with a short "stopped" note.
    Stopped { agent: String, during: StopPoint },
    /// The step bound was reached; the transcript ends with a plain message
    /// saying so.
    StepLimit { agent: String, steps: u32 },
}

impl TurnOutcome {
    /// The agent holding the conversation when the turn ended.
    #[must_use]
    pub fn agent(&self) -> &str {
        match self {
            Self::Answered { agent, .. }
            | Self::Stopped { agent, .. }
            | Self::StepLimit { agent, .. } => agent,
        }
    }
}

/// Why a turn could not run to an outcome.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("the conversation is held by agent {agent:?}, which the workflow does not have")]
    UnknownActiveAgent { agent: String },
    #[error("agent {agent:?} could not get an answer from the model at step {step}")]
    Model {
        agent: String,
        step: u32,
        #[source]
        source: ModelError,
    },
}
