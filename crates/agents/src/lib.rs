//! A generic agent runtime. It knows nothing about refunds: the concrete
//! agents and tools live in `engine`.
//!
//! The rule this crate enforces is *the model decides what should happen; the
//! application decides what is allowed to happen*:
//!
//! - An [`Agent`] has a one-sentence accountable description, a bounded tool
//!   set and an explicit list of agents it may hand off to. A [`Workflow`]
//!   checks the whole graph when it is built.
//! - A handoff is a tool call the runtime checks **in code** against that
//!   list; an unlisted handoff is refused, recorded and shown to the model.
//! - A [`Tool`] answers with a typed [`ToolOutcome`]: found (with
//!   provenance), not found, unknown (the lookup failed — *not* "doesn't
//!   exist") or invalid arguments. The model, the transcript and the event
//!   log all see which one it was.
//! - Tools receive a [`ToolContext`] carrying the caller's [`Principal`];
//!   the model cannot change it, so tools scope what they return by it.
//! - [`Runner::run_turn`] loops model → tool calls → results with a bound on
//!   steps, checks for Stop at every step and while awaiting the model or a
//!   tool, and keeps the transcript consistent: every tool call the model
//!   issued gets exactly one result, even when the turn is stopped.
//! - Model backends sit behind [`ChatModel`]: an OpenAI-compatible client
//!   ([`OpenAiCompatible`]) and a [`ScriptedModel`] for tests.
//!
//! - A tool may start subagents ([`Subagents`]): child agents with their
//!   own transcript, step budget and events, bounded per conversation by a
//!   [`SubagentLane`] and stopped with the turn that started them.
//!
//! Persistence is not here: [`ConversationState`] is plain serde data the
//! engine stores and hands back for the next turn.

mod agent;
mod context;
mod control;
mod events;
mod handoff;
pub mod model;
mod outcome;
mod outside_turn;
mod runner;
mod state;
mod subagent;
mod tool;
mod transcript;
mod workflow;

pub use agent::{Agent, AgentBuilder, AgentError};
pub use context::{Extensions, Principal, ToolContext};
pub use control::{Steering, StopPoint, TurnControl};
pub use events::{Event, EventKind, EventSink, MemorySink, NoopSink};
pub use handoff::HANDOFF_TOOL;
pub use model::{
    Backoff, ChatModel, FinishReason, ModelError, ModelRequest, ModelResponse, OpenAiCompatible,
    OpenAiConfig, OpenAiConfigError, OutputCapField, ScriptedModel, Usage,
};
pub use outcome::{OutcomeKind, Provenance, ToolOutcome};
pub use runner::{FAILED_NOTE, RunError, Runner, RunnerConfig, TurnOutcome};
pub use state::{ConversationState, TranscriptError};
pub use subagent::{
    SubagentEnd, SubagentLane, SubagentReport, SubagentStopPoint, SubagentTask, Subagents,
};
pub use tool::{Tool, ToolSpec, parse_arguments};
pub use transcript::{
    FoundResult, MalformedArguments, Message, Role, ToolCall, UserMessage, found_results,
};
pub use workflow::{Workflow, WorkflowError};

/// The token behind [`TurnControl::child_of`], re-exported so callers need
/// not depend on `tokio-util` themselves.
pub use tokio_util::sync::CancellationToken;
