//! The subagents of one turn, as the application runs them: each is a task
//! owned by the process's supervisor (shutdown waits for it) and tracked by
//! the turn, which waits for all of them before it saves, so their events
//! are saved with the turn's and none outlives it. Those running are listed
//! for Stop's receipt.

use agents::{SubagentReport, SubagentTask, Subagents, ToolContext, TurnControl};
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
    ) -> Self {
        TurnSubagents {
            runtime,
            control,
            tasks,
            tracker: TaskTracker::new(),
            roster,
        }
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

/// Stops a batch of subagents when the tool that awaits them is dropped
/// (the turn stopped, or the tool ran past its time).
pub struct StopOnDrop(pub TurnControl);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}
