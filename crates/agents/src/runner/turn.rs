//! One turn in progress: the step loop, and how it ends.

use std::collections::HashSet;

use chrono::Utc;
use tokio::time::Instant;

use super::markup;
use super::{RunError, RunnerConfig, TurnOutcome};
use crate::agent::Agent;
use crate::context::ToolContext;
use crate::control::{StopPoint, TurnControl};
use crate::events::{Event, EventKind, EventSink};
use crate::handoff;
use crate::model::{ChatModel, FinishReason, ModelError, ModelRequest};
use crate::state::ConversationState;
use crate::transcript::{Message, ToolCall, UserMessage};
use crate::workflow::Workflow;

/// Result text for calls an earlier turn left without one.
const INTERRUPTED: &str = "interrupted before a result was recorded";

/// The note that ends a stopped turn, so the transcript never ends on a
/// dangling user or tool message.
pub(crate) const STOPPED_NOTE: &str = "Stopped before finishing.";

/// The note that ends a failed turn. It answers the customer's message in
/// the transcript, so the next request never holds two user messages in a
/// row (the chat templates of Mistral and Gemma refuse that), and it is
/// what the customer reads; the reason is in the turn's events.
pub const FAILED_NOTE: &str =
    "Sorry, I could not finish this reply. Please send your message again.";

/// Tool calls written as text that the model is told about in one turn;
/// the next one fails the turn (the server is not parsing tool calls).
const TEXT_CALL_CORRECTIONS: u32 = 1;

pub(super) struct Turn<'a> {
    pub(super) model: &'a dyn ChatModel,
    pub(super) config: RunnerConfig,
    pub(super) workflow: &'a Workflow,
    pub(super) state: &'a mut ConversationState,
    pub(super) ctx: &'a ToolContext,
    pub(super) control: &'a TurnControl,
    pub(super) sink: &'a dyn EventSink,
    pub(super) number: u64,
    pub(super) agent: &'a Agent,
    pub(super) step: u32,
    /// Tool calls written as text so far in this turn.
    pub(super) text_calls: u32,
}

impl<'a> Turn<'a> {
    pub(super) async fn run(mut self, user_message: UserMessage) -> Result<TurnOutcome, RunError> {
        self.emit(EventKind::TurnStarted {
            max_steps: self.config.max_steps,
        })
        .await;
        let repaired = self.state.close_dangling(INTERRUPTED);
        let unanswered = self.close_unanswered();
        if repaired > 0 || unanswered {
            self.emit(EventKind::TranscriptRepaired {
                cancelled_calls: repaired,
                unanswered_message_closed: unanswered,
            })
            .await;
        }
        self.state
            .push(Message::user_at(user_message.text, user_message.at));
        self.state.set_active_agent(self.agent.name());
        loop {
            if self.control.is_stop_requested() {
                return Ok(self.stopped(StopPoint::BetweenSteps, 0).await);
            }
            if self.step >= self.config.max_steps {
                return Ok(self.step_limit().await);
            }
            self.deliver_steering().await;
            self.step += 1;
            let request = self.request();
            let offered: Vec<String> = request.tools.iter().map(|tool| tool.name.clone()).collect();
            self.emit(EventKind::ModelCallStarted {
                step: self.step,
                model: self.model.name().to_owned(),
                tools: offered.clone(),
            })
            .await;
            let started = Instant::now();
            let result = tokio::select! {
                biased;
                () = self.control.stopped() => {
                    return Ok(self.stopped(StopPoint::ModelCall, 0).await);
                }
                result = self.model.complete(request) => result,
            };
            let latency_ms = millis(started);
            let response = match result {
                Ok(response) => response,
                Err(source) => {
                    self.emit(EventKind::ModelCallFailed {
                        step: self.step,
                        latency_ms,
                        error_kind: source.kind().to_owned(),
                        error: source.to_string(),
                    })
                    .await;
                    return Err(self.failed(source).await);
                }
            };
            self.emit(EventKind::ModelCallFinished {
                step: self.step,
                latency_ms,
                tool_calls: response.tool_calls.len(),
                finish_reason: response.finish_reason.as_str().to_owned(),
                usage: response.usage,
            })
            .await;
            // A reply cut off at the output cap is not an answer, and its
            // tool calls may be cut off too: none of it is used.
            if response.finish_reason == FinishReason::Length {
                return Err(self.failed(ModelError::Truncated).await);
            }
            let mut content = response.content.unwrap_or_default();
            let mut calls = response.tool_calls;
            if let Some(text_call) = markup::find(&content, &offered) {
                self.text_calls += 1;
                tracing::warn!(marker = %text_call.marker, step = self.step, "the model wrote a tool call as text");
                if self.text_calls > TEXT_CALL_CORRECTIONS {
                    let source = ModelError::Malformed {
                        message: format!(
                            "the model wrote tool calls as text ({}) again after being told to call tools; the server is not parsing its tool calls (vLLM needs --enable-auto-tool-choice and the model's --tool-call-parser)",
                            text_call.marker
                        ),
                    };
                    return Err(self.failed(source).await);
                }
                calls.push(text_call.into_call(&content));
                content.clear();
            }
            let calls = self.unique_ids(calls);
            self.state.push(Message::assistant(
                self.agent.name(),
                content.clone(),
                calls.clone(),
            ));
            if calls.is_empty() {
                self.finished("answered").await;
                return Ok(TurnOutcome::Answered {
                    agent: self.agent.name().to_owned(),
                    content,
                });
            }
            let batch = self.run_calls(&calls).await;
            if let Some(target) = batch.handoff_to.and_then(|to| self.workflow.agent(&to)) {
                self.agent = target;
                self.state.set_active_agent(target.name());
            }
            if batch.stopped {
                return Ok(self.stopped(StopPoint::ToolCalls, batch.cancelled).await);
            }
        }
    }

    /// Messages sent for this turn while it ran join the transcript as
    /// customer messages before the next model call, after the results of
    /// the tools the model called. Right after the turn's own message they
    /// wait (two customer messages in a row are refused by some chat
    /// templates); a turn that ends without another model call leaves them
    /// to the next turn.
    async fn deliver_steering(&mut self) {
        let after_customer = self
            .state
            .messages()
            .last()
            .is_none_or(|message| message.role == crate::transcript::Role::User);
        if after_customer {
            return;
        }
        let first_index = self.state.messages().len();
        let steering = self.control.take_steering(first_index).await;
        if steering.is_empty() {
            return;
        }
        let count = steering.len();
        for message in steering {
            self.state.push(Message::user_at(message.text, message.at));
        }
        self.emit(EventKind::SteeringDelivered {
            step: self.step,
            messages: count,
        })
        .await;
    }

    fn request(&self) -> ModelRequest {
        let mut tools: Vec<_> = self.agent.tools().iter().map(|tool| tool.spec()).collect();
        tools.extend(handoff::spec(self.agent, self.workflow));
        ModelRequest {
            system: self.agent.instructions().to_owned(),
            messages: self
                .state
                .messages()
                .iter()
                .map(Message::for_model)
                .collect(),
            tools,
            agent: self.agent.name().to_owned(),
        }
    }

    /// Call ids must be unique across the transcript for results to be
    /// matched; some servers omit them or number them per response.
    fn unique_ids(&self, mut calls: Vec<ToolCall>) -> Vec<ToolCall> {
        let mut seen: HashSet<String> = self
            .state
            .messages()
            .iter()
            .flat_map(|message| message.tool_calls.iter().map(|call| call.id.clone()))
            .collect();
        for (index, call) in calls.iter_mut().enumerate() {
            let mut suffix = 0;
            while call.id.is_empty() || seen.contains(&call.id) {
                suffix += 1;
                call.id = format!("call_t{}_s{}_{index}_{suffix}", self.number, self.step);
            }
            seen.insert(call.id.clone());
        }
        calls
    }

    /// Ends the turn on `source`: the journal says why, the transcript
    /// ends with [`FAILED_NOTE`] (every call answered first).
    async fn failed(&mut self, source: ModelError) -> RunError {
        self.emit(EventKind::TurnFailed {
            error: format!(
                "agent {:?} could not get an answer from the model at step {}: {source}",
                self.agent.name(),
                self.step
            ),
        })
        .await;
        self.state.close_dangling(INTERRUPTED);
        self.state.push(Message::assistant(
            self.agent.name(),
            FAILED_NOTE,
            Vec::new(),
        ));
        RunError::Model {
            agent: self.agent.name().to_owned(),
            step: self.step,
            source,
        }
    }

    /// A transcript that ends on a customer message (a turn that failed
    /// before failures were recorded) gets the failure note; returns
    /// whether it did.
    fn close_unanswered(&mut self) -> bool {
        let unanswered = self.state.ends_unanswered();
        if unanswered {
            self.state.push(Message::assistant(
                self.agent.name(),
                FAILED_NOTE,
                Vec::new(),
            ));
        }
        unanswered
    }

    async fn stopped(&mut self, during: StopPoint, cancelled: usize) -> TurnOutcome {
        self.emit(EventKind::StopRequested {
            step: self.step,
            during,
        })
        .await;
        let cancelled = cancelled + self.state.close_dangling(self.control.cut_reason());
        self.state.push(Message::assistant(
            self.agent.name(),
            STOPPED_NOTE,
            Vec::new(),
        ));
        let latency_ms = self.control.requested_at().map(millis);
        self.emit(EventKind::StopLanded {
            latency_ms,
            cancelled_calls: cancelled,
        })
        .await;
        self.finished("stopped").await;
        TurnOutcome::Stopped {
            agent: self.agent.name().to_owned(),
            during,
        }
    }

    async fn step_limit(&mut self) -> TurnOutcome {
        let steps = self.step;
        self.emit(EventKind::StepLimitReached { steps }).await;
        let note = format!(
            "I could not finish this within {steps} steps, so I stopped here without an answer."
        );
        self.state
            .push(Message::assistant(self.agent.name(), note, Vec::new()));
        self.finished("step_limit").await;
        TurnOutcome::StepLimit {
            agent: self.agent.name().to_owned(),
            steps,
        }
    }

    async fn finished(&self, outcome: &str) {
        self.emit(EventKind::TurnFinished {
            outcome: outcome.to_owned(),
            steps: self.step,
        })
        .await;
    }

    pub(super) async fn emit(&self, kind: EventKind) {
        self.sink
            .record(Event {
                turn: self.number,
                at: Utc::now(),
                agent: self.agent.name().to_owned(),
                subagent: None,
                kind,
            })
            .await;
    }
}

pub(crate) fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
