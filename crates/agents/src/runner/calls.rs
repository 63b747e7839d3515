//! Answering the tool calls of one model response. Handoffs and calls the
//! agent may not make are decided in code on the spot; real tool calls run
//! concurrently, raced against Stop; results are appended in call order,
//! one per call, whatever happened.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tokio::time::Instant;

use super::turn::{Turn, millis};
use crate::context::ToolContext;
use crate::events::EventKind;
use crate::handoff::{self, Decision, HANDOFF_TOOL};
use crate::outcome::{OutcomeKind, ToolOutcome};
use crate::tool::Tool;
use crate::transcript::{Message, ToolCall};

/// Longest slice of malformed arguments echoed back to the model.
const MAX_ECHOED_ARGUMENTS: usize = 500;

/// What a batch of calls left behind for the turn loop.
pub(super) struct Batch {
    /// An accepted handoff's target.
    pub(super) handoff_to: Option<String>,
    /// Stop landed while tools were running.
    pub(super) stopped: bool,
    /// Calls answered as cancelled.
    pub(super) cancelled: usize,
}

impl Turn<'_> {
    pub(super) async fn run_calls(&mut self, calls: &[ToolCall]) -> Batch {
        let agent = self.agent;
        let started = Instant::now();
        let batch: Arc<[ToolCall]> = calls.into();
        let mut results: Vec<Option<Message>> = vec![None; calls.len()];
        let mut handoff_to: Option<String> = None;
        let mut pending = FuturesUnordered::new();
        for (index, call) in calls.iter().enumerate() {
            if call.name == HANDOFF_TOOL {
                let decision = handoff::decide(agent, call, handoff_to.is_some());
                let kind = self.record_handoff(call, &decision).await;
                if let Decision::Accepted { to, .. } = &decision {
                    handoff_to = Some(to.clone());
                }
                results[index] = Some(Message::tool_result(
                    agent.name(),
                    &call.id,
                    kind,
                    &decision.to_model_json(),
                ));
                continue;
            }
            let checked = match agent.tool(&call.name) {
                // Markup written as text names no tool the agent has, or a
                // made-up one: what the model must hear is how to call it.
                None => Err(malformed_answer(call)
                    .filter(|_| is_written_as_text(call))
                    .unwrap_or_else(|| {
                        ToolOutcome::refused(format!(
                            "agent {} has no tool called {:?}",
                            agent.name(),
                            call.name
                        ))
                    })),
                Some(tool) => arguments(call).map(|args| (tool, args)),
            };
            match checked {
                Err(outcome) => {
                    self.record_finished(call, outcome.kind(), outcome.sources(), 0)
                        .await;
                    results[index] = Some(result_message(agent.name(), call, &outcome));
                }
                Ok((tool, args)) => {
                    self.emit(EventKind::ToolCallStarted {
                        step: self.step,
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                    })
                    .await;
                    let ctx = self.ctx.for_call(agent.name(), &call.id, &batch);
                    let limit = tool.time_limit(self.config.tool_timeout);
                    pending.push(invoke(index, tool, ctx, args, limit));
                }
            }
        }

        let mut stopped = false;
        while !pending.is_empty() {
            tokio::select! {
                biased;
                () = self.control.stopped() => {
                    stopped = true;
                    break;
                }
                Some((index, outcome, started)) = pending.next() => {
                    let call = &calls[index];
                    self.record_finished(call, outcome.kind(), outcome.sources(), millis(started)).await;
                    results[index] = Some(result_message(agent.name(), call, &outcome));
                }
            }
        }
        // Dropping the unfinished futures is what cancels the tools.
        drop(pending);

        let mut cancelled = 0;
        for (call, slot) in calls.iter().zip(results) {
            let message = match slot {
                Some(message) => message,
                None => {
                    cancelled += 1;
                    self.record_finished(call, OutcomeKind::Cancelled, Vec::new(), millis(started))
                        .await;
                    Message::cancelled_result(agent.name(), &call.id, self.control.cut_reason())
                }
            };
            self.state.push(message);
        }
        Batch {
            handoff_to,
            stopped,
            cancelled,
        }
    }

    async fn record_handoff(&self, call: &ToolCall, decision: &Decision) -> OutcomeKind {
        let step = self.step;
        let from = self.agent.name().to_owned();
        let call_id = call.id.clone();
        match decision {
            Decision::Accepted { to, reason } => {
                self.emit(EventKind::HandoffAccepted {
                    step,
                    call_id,
                    from,
                    to: to.clone(),
                    reason: reason.clone(),
                })
                .await;
                OutcomeKind::HandedOff
            }
            Decision::Refused { to, why } => {
                tracing::warn!(%from, %to, %why, "handoff refused");
                self.emit(EventKind::HandoffRefused {
                    step,
                    call_id,
                    from,
                    to: to.clone(),
                    why: why.clone(),
                })
                .await;
                OutcomeKind::Refused
            }
            Decision::Invalid { message } => {
                tracing::debug!(%message, "handoff with invalid arguments");
                self.record_finished(call, OutcomeKind::InvalidArguments, Vec::new(), 0)
                    .await;
                OutcomeKind::InvalidArguments
            }
        }
    }

    async fn record_finished(
        &self,
        call: &ToolCall,
        outcome: OutcomeKind,
        sources: Vec<String>,
        latency_ms: u64,
    ) {
        self.emit(EventKind::ToolCallFinished {
            step: self.step,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            outcome,
            sources,
            latency_ms,
        })
        .await;
    }
}

fn is_written_as_text(call: &ToolCall) -> bool {
    call.malformed_arguments
        .as_ref()
        .is_some_and(|malformed| malformed.written_as_text)
}

/// The `invalid_arguments` answer for a call whose arguments were unusable.
fn malformed_answer(call: &ToolCall) -> Option<ToolOutcome> {
    let malformed = call.malformed_arguments.as_ref()?;
    let raw: String = malformed.raw.chars().take(MAX_ECHOED_ARGUMENTS).collect();
    Some(ToolOutcome::invalid_arguments(
        if malformed.written_as_text {
            format!("{}; what you wrote: {raw}", malformed.error)
        } else {
            format!(
                "the arguments were not a JSON object ({}); received: {raw}",
                malformed.error
            )
        },
    ))
}

/// The arguments object, or the `invalid_arguments` answer for it.
fn arguments(call: &ToolCall) -> Result<Value, ToolOutcome> {
    if let Some(answer) = malformed_answer(call) {
        return Err(answer);
    }
    if !call.arguments.is_object() {
        return Err(ToolOutcome::invalid_arguments(
            "the arguments must be a JSON object",
        ));
    }
    Ok(call.arguments.clone())
}

fn result_message(agent: &str, call: &ToolCall, outcome: &ToolOutcome) -> Message {
    Message::tool_result(agent, &call.id, outcome.kind(), &outcome.to_model_json())
}

/// One tool call. A timeout is `unknown` (the tool may have finished its
/// work); a panic is `unknown` too, and must not take the turn down with it.
async fn invoke(
    index: usize,
    tool: &Arc<dyn Tool>,
    ctx: ToolContext,
    args: Value,
    timeout: Option<Duration>,
) -> (usize, ToolOutcome, Instant) {
    let started = Instant::now();
    let call = AssertUnwindSafe(tool.call(&ctx, args)).catch_unwind();
    let result = match timeout {
        None => call.await,
        Some(limit) => tokio::time::timeout(limit, call).await.unwrap_or_else(|_| {
            Ok(ToolOutcome::unknown(format!(
                "the tool did not answer within {limit:?}"
            )))
        }),
    };
    let outcome = result.unwrap_or_else(|_| {
        tracing::error!(tool = tool.name(), "tool panicked");
        ToolOutcome::unknown("the tool failed unexpectedly")
    });
    (index, outcome, started)
}
