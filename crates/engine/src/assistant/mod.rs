//! The customer chat: a coordinator and a refund specialist on the generic
//! agent runtime (`agents`), their tools, the offline model that is the
//! embedded default, and the use cases that run persisted conversations.
//!
//! Agents investigate and propose; they never execute. The only thing a
//! conversation can create is a proposal awaiting a person's approval,
//! through the same `submit_proposal` use case outside agents use.
//!
//! | file | concern |
//! |---|---|
//! | `team.rs` | the two agents: descriptions, prompts, tools, handoffs |
//! | `tools/` | `get_order`, `search_policy`, `record_unknown`, `prepare_refund` |
//! | `scope.rs`, `ledger.rs` | what tools get from the application; what the conversation read |
//! | `chat/` | use cases: open, read, run a turn, stop a turn |
//! | `handover/` | a person takes over: request, inbox, take over, reply, hand back |
//! | `running.rs`, `sink.rs` | turns in flight (for Stop); the turn's events |
//! | `subagents.rs` | a turn's subagents as supervised tasks the turn waits for |
//! | `offline/` | `countersign-offline-rules`, a deterministic intent and slot parser |

pub mod carrier;
pub mod chat;
mod engine_tools;
pub mod handover;
pub mod ledger;
pub mod offline;
mod running;
pub mod scope;
mod sink;
pub mod subagents;
pub mod team;
pub mod tools;

pub use agents::{
    ChatModel, ConversationState, FAILED_NOTE, Message, OpenAiCompatible, OpenAiConfig,
    OutcomeKind, OutputCapField, Provenance, Role, RunnerConfig, ScriptedModel, TurnControl,
    Workflow,
};
pub use chat::{
    ChatError, Conversation, ConversationEvent, Delivery, MAX_MESSAGE_CHARS, OpenConversationError,
    Priority, QueueEntry, QueuedMessage, StopReceipt, TurnEnd, TurnResult,
};
pub use offline::OfflineRules;
pub use running::RunningTurns;

use crate::clock::Clock;
use crate::live::LiveUpdates;
use crate::policies::PolicyLibrary;
use crate::proposals::Proposals;
use agents::Runner;
use std::sync::Arc;
use std::time::Duration;
use storage::Database;

/// The limits of one turn: enough model calls for the flagship flow twice
/// over; a tool that takes longer than this has an unknown outcome.
pub const DEFAULT_RUNNER_CONFIG: RunnerConfig = RunnerConfig {
    max_steps: 12,
    tool_timeout: Some(Duration::from_secs(20)),
};

/// The agents, the model that drives them, and the turns in flight.
#[derive(Clone)]
pub struct Assistant {
    workflow: Arc<Workflow>,
    runner: Runner,
    model_name: String,
    running: RunningTurns,
    /// Most subagents of one conversation that run at once.
    subagent_limit: usize,
}

/// Subagents of one conversation that run at once unless configured.
pub const DEFAULT_SUBAGENT_LIMIT: usize = 4;

impl std::fmt::Debug for Assistant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assistant")
            .field("model", &self.model_name)
            .field("runner", &self.runner.config())
            .field("subagent_limit", &self.subagent_limit)
            .finish_non_exhaustive()
    }
}

impl Assistant {
    /// The standard agents driven by `model`.
    ///
    /// # Errors
    /// The built-in definitions were refused (a unit test keeps them valid).
    pub fn new(model: Arc<dyn ChatModel>) -> Result<Self, team::DefinitionError> {
        Ok(Self::with_workflow(
            model,
            team::standard_workflow()?,
            DEFAULT_RUNNER_CONFIG,
        ))
    }

    /// The standard agents driven by `model`, with what `options` connects.
    ///
    /// # Errors
    /// As [`Assistant::new`].
    pub fn for_team(
        model: Arc<dyn ChatModel>,
        options: team::TeamOptions,
    ) -> Result<Self, team::DefinitionError> {
        Ok(Self::with_workflow(
            model,
            team::workflow_for(options)?,
            DEFAULT_RUNNER_CONFIG,
        ))
    }

    /// Any workflow and limits (tests use a failing order reader or a small
    /// step bound).
    pub fn with_workflow(
        model: Arc<dyn ChatModel>,
        workflow: Workflow,
        config: RunnerConfig,
    ) -> Self {
        Assistant {
            model_name: model.name().to_owned(),
            workflow: Arc::new(workflow),
            runner: Runner::new(model).with_config(config),
            running: RunningTurns::default(),
            subagent_limit: DEFAULT_SUBAGENT_LIMIT,
        }
    }

    /// The same agents with at most `limit` subagents of one conversation
    /// running at once (at least one).
    #[must_use]
    pub fn with_subagent_limit(mut self, limit: usize) -> Self {
        self.subagent_limit = limit.max(1);
        self
    }

    /// Most subagents of one conversation that run at once.
    pub fn subagent_limit(&self) -> usize {
        self.subagent_limit
    }

    /// The embedded default: the standard agents on the offline rules model,
    /// which needs no network and no key.
    #[expect(
        clippy::expect_used,
        reason = "the built-in agent definitions are constants; a unit test builds them"
    )]
    pub fn offline() -> Self {
        Self::new(Arc::new(OfflineRules::new())).expect("the built-in agent definitions are valid")
    }

    /// The model's name, as events record it.
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// The turns running in this process.
    pub fn running(&self) -> &RunningTurns {
        &self.running
    }
}

/// Conversations with the agents and the handover to a person: opening and
/// reading them, running and stopping turns, the staff inbox. Holds only
/// what those use; the turn's tools reach the application through the
/// narrow [`tools::ToolPort`] this service answers, never the whole engine.
#[derive(Clone)]
pub struct Chat {
    db: Database,
    clock: Clock,
    live: LiveUpdates,
    /// The agents, their model and the turns in flight.
    assistant: Assistant,
    /// Where a prepared refund is submitted.
    proposals: Proposals,
    /// What `search_policy` searches.
    policies: PolicyLibrary,
    /// Owns each turn's task and its claim watcher, so shutdown waits for them.
    tasks: runner::Supervisor,
    /// A turn is interactive work: background lanes give way to it.
    activity: runner::Activity,
    /// The returns desk the specialist asks about returned parcels, when
    /// the gateway connects one.
    returns_desk: Option<ReturnsDesk>,
    /// The carrier whose tracking pages the specialist reads in the
    /// browser lane, when one is connected.
    carrier: Option<carrier::CarrierDesk>,
}

/// Another agent group that answers `returns.inspection` tasks, and how
/// long a turn waits for its answer before asking the customer instead.
#[derive(Clone)]
pub struct ReturnsDesk {
    pub sender: crate::gateway::Sender,
    pub group: gateway::GroupName,
    pub wait: std::time::Duration,
}

impl Chat {
    pub fn new(
        db: Database,
        clock: Clock,
        live: LiveUpdates,
        assistant: Assistant,
        proposals: Proposals,
        policies: PolicyLibrary,
    ) -> Self {
        Chat {
            db,
            clock,
            live,
            assistant,
            proposals,
            policies,
            tasks: runner::Supervisor::new(),
            activity: runner::Activity::default(),
            returns_desk: None,
            carrier: None,
        }
    }

    /// The browser lane the carrier's pages are read in, when a carrier is
    /// connected (tests and operations watch who waits for it).
    pub fn browser_lane(&self) -> Option<&crate::exclusive_lane::ExclusiveLane> {
        self.carrier.as_ref().map(|carrier| &carrier.lane)
    }

    /// The same service, its specialist reading `carrier`'s tracking pages.
    #[must_use]
    pub fn tracking_with(mut self, carrier: Option<carrier::CarrierDesk>) -> Self {
        self.carrier = carrier;
        self
    }

    /// The same service, its specialist asking `desk` about returned
    /// parcels.
    #[must_use]
    pub fn asking(mut self, desk: Option<ReturnsDesk>) -> Self {
        self.returns_desk = desk;
        self
    }

    /// The same service running its turns under the process's supervisor
    /// and counting them as interactive work.
    #[must_use]
    pub fn running_on(mut self, tasks: runner::Supervisor, activity: runner::Activity) -> Self {
        self.tasks = tasks;
        self.activity = activity;
        self
    }

    /// The current time on this service's clock.
    pub fn now(&self) -> domain::Timestamp {
        self.clock.now()
    }

    /// The agents, their model and the turns in flight.
    pub fn assistant(&self) -> &Assistant {
        &self.assistant
    }
}

impl std::fmt::Debug for Chat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chat")
            .field("assistant", &self.assistant)
            .finish_non_exhaustive()
    }
}
