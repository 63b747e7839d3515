//! The subagents of one turn, as the application runs them: each is a task
//! owned by the process's supervisor (shutdown waits for it) and tracked by
//! the turn, which waits for all of them before it saves, so their events
//! are saved with the turn's. A turn preempted by a newer message does not
//! wait: its subagents run on in the background and what they find is
//! recorded in the conversation when they end (`chat/background.rs`); a
//! Stop ends them wherever they are. Those running are listed for Stop's
//! receipt.

use super::sink::TurnEvents;
use super::tools::Investigation;
use agents::{SubagentReport, SubagentTask, Subagents, ToolCall, ToolContext, TurnControl};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::task::JoinHandle;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

/// The subagents of a conversation running now: id → what each works on.
#[derive(Debug, Clone, Default)]
pub struct Roster {
    running: Arc<Mutex<BTreeMap<String, String>>>,
}

impl Roster {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, String>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What each running subagent works on, by id.
    pub fn labels(&self) -> Vec<String> {
        self.lock().values().cloned().collect()
    }
}

/// What a turn's tools use to start subagents.
#[derive(Clone)]
pub struct TurnSubagents {
    runtime: Subagents,
    /// The turn's control: every subagent's is a child of it.
    control: TurnControl,
    tasks: runner::Supervisor,
    tracker: TaskTracker,
    roster: Roster,
    /// The turn's events: what subagents record after a preempted turn
    /// saved is taken from here when their work is recorded.
    events: Arc<TurnEvents>,
}

impl std::fmt::Debug for TurnSubagents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnSubagents")
            .field("runtime", &self.runtime)
            .field("running", &self.roster.labels())
            .finish_non_exhaustive()
    }
}

impl TurnSubagents {
    pub(crate) fn new(
        runtime: Subagents,
        control: TurnControl,
        tasks: runner::Supervisor,
        roster: Roster,
        events: Arc<TurnEvents>,
    ) -> Self {
        TurnSubagents {
            runtime,
            control,
            tasks,
            tracker: TaskTracker::new(),
            roster,
            events,
        }
    }

    /// Runs `work` (what gathers the subagents' reports) as a task of its
    /// own, so it can outlive the tool call that waits for it.
    pub fn gather<F>(&self, work: F) -> JoinHandle<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tasks.spawn(
            "subagent reports",
            self.tracker.track_future(work).in_current_span(),
        )
    }

    /// The turn was preempted by a newer message (not stopped): what it
    /// started runs on in the background.
    pub fn turn_preempted(&self) -> bool {
        self.control.is_preempted()
    }

    /// A control for a batch of subagents: stopped with the turn, or on
    /// its own when the tool that started them gives up on them.
    pub fn batch_control(&self) -> TurnControl {
        self.control.child()
    }

    /// Starts `task` with `ctx` under `control` (from
    /// [`TurnSubagents::batch_control`]); it waits for a place in the
    /// conversation's lane.
    pub fn start(
        &self,
        task: SubagentTask,
        ctx: ToolContext,
        control: TurnControl,
    ) -> JoinHandle<SubagentReport> {
        let runtime = self.runtime.clone();
        let roster = self.roster.clone();
        roster.lock().insert(task.id.clone(), task.label.clone());
        let span =
            tracing::info_span!("subagent", subagent.id = %task.id, subagent.label = %task.label);
        let work = self.tracker.track_future(async move {
            let id = task.id.clone();
            let report = runtime.run(task, &ctx, &control).await;
            roster.lock().remove(&id);
            report
        });
        self.tasks.spawn("subagent", work.instrument(span))
    }

    /// Waits until every subagent this turn started has ended. The turn's
    /// tools await theirs, and a Stop or a tool given up on stops them, so
    /// this is prompt.
    pub(crate) async fn wait_all(&self) {
        self.tracker.close();
        self.tracker.wait().await;
    }
}

/// Subagents of a preempted turn that run on: what gathers their reports,
/// their control, and what their findings continue.
pub struct BackgroundWork {
    pub(crate) conversation_id: String,
    /// The agent whose call started them, and the call.
    pub(crate) agent: String,
    pub(crate) call: ToolCall,
    pub(crate) findings: JoinHandle<Investigation>,
    /// Stops them.
    pub(crate) control: TurnControl,
    /// The turn's events, where they record theirs.
    pub(crate) events: Arc<TurnEvents>,
}

/// What a tool that waits for subagents leaves behind when it is dropped
/// before they end: stopped subagents if its turn was stopped or the call
/// ran past its time; background work if a newer message preempted its
/// turn (handed to `continue_in_background`).
pub struct UntilTheyEnd<F: FnOnce(BackgroundWork)> {
    subagents: TurnSubagents,
    control: TurnControl,
    work: Option<(JoinHandle<Investigation>, String, String, ToolCall)>,
    continue_in_background: Option<F>,
}

impl<F: FnOnce(BackgroundWork)> UntilTheyEnd<F> {
    pub fn new(
        subagents: &TurnSubagents,
        control: TurnControl,
        findings: JoinHandle<Investigation>,
        (conversation_id, agent, call): (String, String, ToolCall),
        continue_in_background: F,
    ) -> Self {
        UntilTheyEnd {
            subagents: subagents.clone(),
            control,
            work: Some((findings, conversation_id, agent, call)),
            continue_in_background: Some(continue_in_background),
        }
    }

    /// The findings, once every subagent has ended (`None` if gathering
    /// them failed).
    pub async fn findings(&mut self) -> Option<Investigation> {
        let (handle, ..) = self.work.as_mut()?;
        let findings = handle.await;
        self.work = None;
        match findings {
            Ok(findings) => Some(findings),
            Err(error) => {
                tracing::error!(%error, "gathering the subagents' reports failed");
                None
            }
        }
    }
}

impl<F: FnOnce(BackgroundWork)> Drop for UntilTheyEnd<F> {
    fn drop(&mut self) {
        let Some((findings, conversation_id, agent, call)) = self.work.take() else {
            return;
        };
        match self.continue_in_background.take() {
            Some(continue_in_background) if self.subagents.turn_preempted() => {
                continue_in_background(BackgroundWork {
                    conversation_id,
                    agent,
                    call,
                    findings,
                    control: self.control.clone(),
                    events: Arc::clone(&self.subagents.events),
                });
            }
            _ => self.control.stop(),
        }
    }
}
