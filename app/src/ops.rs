//! The operations view's data and server functions: the work runner's
//! lanes, schedules, items needing a person, open alerts and the last
//! journal check, for managers and admins; and what they may do about them
//! (retry, resolve or cancel an item, acknowledge an alert). The JSON API
//! and the `countersign work` command answer with the same shapes.

use crate::error::AppError;
use domain::Timestamp;
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

/// Everything `/ops` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpsOverview {
    pub lanes: Vec<LaneRow>,
    pub schedules: Vec<ScheduleRow>,
    /// Running, retrying and dead-lettered items, most recently changed first.
    pub attention: Vec<WorkRow>,
    pub alerts: Vec<AlertRow>,
    /// The last run of the daily journal check (none before its first run).
    pub audit: Option<AuditLine>,
    /// The server's clock when the view was read.
    pub now: Timestamp,
}

/// One lane of the work runner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneRow {
    pub name: String,
    /// What the lane is for.
    pub purpose: String,
    /// Items one worker runs at once in this lane.
    pub concurrency: u32,
    /// `background` or `scheduled`.
    pub priority: String,
    pub running: u64,
    /// Due now and not yet taken.
    pub queued: u64,
    /// Schedules and items whose time has not come.
    pub scheduled: u64,
    /// Failed at least once, waiting for the next try.
    pub retrying: u64,
    /// Dead-lettered: waiting for a person.
    pub dead: u64,
    /// When the longest-waiting due item fell due.
    pub oldest_due: Option<Timestamp>,
    /// The earliest of this lane's schedules and retries still to come.
    pub next_run: Option<Timestamp>,
}

/// One schedule: a kind of work that runs on a timer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleRow {
    pub id: String,
    pub kind: String,
    pub lane: String,
    pub every_seconds: i64,
    /// `queued` (waiting for its time) or `running`.
    pub state: String,
    pub next_run: Timestamp,
    pub last_run: Option<Timestamp>,
    /// What its last run found (e.g. "journal intact: 912 events").
    pub last_note: Option<String>,
    pub last_error: Option<String>,
}

/// One item needing attention.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkRow {
    pub id: String,
    pub kind: String,
    pub lane: String,
    /// What it is about (a proposal id for the refund kinds).
    pub subject: Option<String>,
    /// The proposal it is about, when it is about one (link to it).
    pub proposal_id: Option<String>,
    /// `running`, `retrying` (failed, waiting for its next try) or `dead`.
    pub state: String,
    pub attempts: u32,
    pub max_attempts: u32,
    pub last_error: Option<String>,
    /// The next try (retrying) or when it fell due.
    pub run_after: Timestamp,
    pub updated_at: Timestamp,
    /// The actions this item's state and kind allow now: any of `retry`,
    /// `resolve`, `cancel`.
    pub actions: Vec<String>,
}

/// An open alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertRow {
    pub id: String,
    pub kind: String,
    pub subject: Option<String>,
    pub message: String,
    pub raised_at: Timestamp,
    pub last_raised_at: Timestamp,
    /// Raised again this many times since it opened.
    pub repeats: u32,
}

/// The last journal check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditLine {
    pub at: Timestamp,
    pub intact: bool,
    pub finding: String,
}

/// What a person may do to one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkAction {
    Retry,
    Resolve,
    Cancel,
}

impl WorkAction {
    pub const ALL: [WorkAction; 3] = [WorkAction::Retry, WorkAction::Resolve, WorkAction::Cancel];

    pub fn as_str(self) -> &'static str {
        match self {
            WorkAction::Retry => "retry",
            WorkAction::Resolve => "resolve",
            WorkAction::Cancel => "cancel",
        }
    }

    pub fn parse(text: &str) -> Option<WorkAction> {
        WorkAction::ALL.into_iter().find(|a| a.as_str() == text)
    }

    pub fn label(self) -> &'static str {
        match self {
            WorkAction::Retry => "Retry",
            WorkAction::Resolve => "Resolve",
            WorkAction::Cancel => "Cancel",
        }
    }

    /// The sentence a person confirms before the action is taken.
    pub fn confirmation(self, row: &WorkRow) -> String {
        let what = match &row.subject {
            Some(subject) => format!("{} for {subject}", row.kind),
            None => row.kind.clone(),
        };
        match self {
            WorkAction::Retry => format!(
                "Run {what} again from its first attempt? It goes back in the {} lane now.",
                row.lane
            ),
            WorkAction::Resolve => format!(
                "Mark {what} as settled by hand? It will not run again; do this only once you have dealt with it yourself."
            ),
            WorkAction::Cancel => format!(
                "Drop {what}? It will not run; the sweeps ask for it again while it is still due."
            ),
        }
    }
}

#[cfg(feature = "ssr")]
pub mod backend {
    //! From the engine's view to the page's and the API's shapes; the
    //! engine's refusals as the one error shape; the live hints.

    use super::*;
    use engine::work::ops::{OpsError, OpsView, cancellable};
    use storage::work::{DEAD, QUEUED, WorkItem};

    /// The state a person reads: a queued item that already failed is
    /// `retrying`.
    fn shown_state(item: &WorkItem) -> String {
        if item.state == QUEUED && item.attempts > 0 {
            "retrying".to_owned()
        } else {
            item.state.clone()
        }
    }

    /// The actions the engine would accept for this item now (as storage
    /// applies them: retry and resolve a dead letter, cancel a cancellable
    /// kind that has not started or is dead).
    fn actions(item: &WorkItem) -> Vec<String> {
        let mut actions = Vec::new();
        if item.state == DEAD {
            actions.push(WorkAction::Retry.as_str().to_owned());
            actions.push(WorkAction::Resolve.as_str().to_owned());
        }
        if cancellable(&item.kind)
            && !item.is_schedule()
            && (item.state == DEAD || item.state == QUEUED)
        {
            actions.push(WorkAction::Cancel.as_str().to_owned());
        }
        actions
    }

    pub fn work_row(item: WorkItem) -> WorkRow {
        let proposal_id = item
            .payload
            .get("proposal_id")
            .and_then(serde_json::Value::as_str)
            .filter(|id| item.subject.as_deref() == Some(*id))
            .map(str::to_owned);
        WorkRow {
            state: shown_state(&item),
            actions: actions(&item),
            proposal_id,
            id: item.id,
            kind: item.kind,
            lane: item.lane,
            subject: item.subject,
            attempts: item.attempts,
            max_attempts: item.max_attempts,
            last_error: item.last_error,
            run_after: item.run_after,
            updated_at: item.updated_at,
        }
    }

    fn schedule_row(item: WorkItem) -> ScheduleRow {
        ScheduleRow {
            every_seconds: item.every.map(|e| e.num_seconds()).unwrap_or_default(),
            id: item.id,
            kind: item.kind,
            lane: item.lane,
            state: item.state,
            next_run: item.run_after,
            last_run: item.last_run_at,
            last_note: item.last_note,
            last_error: item.last_error,
        }
    }

    pub fn page(view: OpsView) -> OpsOverview {
        let now = view.now;
        let next_run = |lane: &str| {
            let schedules = view
                .schedules
                .iter()
                .filter(|s| s.lane == lane && s.state == QUEUED)
                .map(|s| s.run_after);
            let retries = view
                .attention
                .iter()
                .filter(|i| i.lane == lane && i.state == QUEUED && i.run_after > now)
                .map(|i| i.run_after);
            schedules.chain(retries).min()
        };
        let lanes = view
            .lanes
            .iter()
            .map(|lane| LaneRow {
                name: lane.name.clone(),
                purpose: lane.purpose.clone(),
                concurrency: u32::try_from(lane.concurrency).unwrap_or(u32::MAX),
                priority: lane.priority.to_owned(),
                running: lane.counts.running,
                queued: lane.counts.queued,
                scheduled: lane.counts.scheduled,
                retrying: lane.counts.retrying,
                dead: lane.counts.dead,
                oldest_due: lane.counts.oldest_due,
                next_run: next_run(&lane.name),
            })
            .collect();
        OpsOverview {
            lanes,
            schedules: view.schedules.into_iter().map(schedule_row).collect(),
            attention: view.attention.into_iter().map(work_row).collect(),
            alerts: view
                .alerts
                .into_iter()
                .map(|a| AlertRow {
                    id: a.id,
                    kind: a.kind,
                    subject: a.subject,
                    message: a.message,
                    raised_at: a.raised_at,
                    last_raised_at: a.last_raised_at,
                    repeats: a.repeats,
                })
                .collect(),
            audit: view.audit.map(|a| AuditLine {
                at: a.at,
                intact: a.intact,
                finding: a.finding,
            }),
            now,
        }
    }

    /// The engine's refusal in the one error shape: 403 for other roles,
    /// 404 for an unknown id, 409 (conflict) with the engine's reason when
    /// the item's state or kind does not allow the action.
    pub fn ops_error(error: OpsError) -> AppError {
        match error {
            OpsError::Forbidden => AppError::Forbidden(error.to_string()),
            OpsError::NotFound => AppError::NotFound(error.to_string()),
            OpsError::NotAllowed(reason) => AppError::Conflict(reason),
            OpsError::Storage(storage) => crate::server::internal(&storage),
        }
    }

    impl From<WorkAction> for engine::work::ops::OpsAction {
        fn from(action: WorkAction) -> Self {
            match action {
                WorkAction::Retry => engine::work::ops::OpsAction::Retry,
                WorkAction::Resolve => engine::work::ops::OpsAction::Resolve,
                WorkAction::Cancel => engine::work::ops::OpsAction::Cancel,
            }
        }
    }

    /// The PostgreSQL channel ops hints travel on between replicas.
    pub const CHANNEL: &str = "countersign_ops";

    /// "What `/ops` shows may have changed": work finished, a person acted,
    /// or (`Resync`) hints may have been missed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum OpsHint {
        Changed,
        Resync,
    }

    impl storage::live::Announcement for OpsHint {
        fn decode(_channel: &str, _payload: &str) -> Vec<Self> {
            vec![OpsHint::Changed]
        }

        fn resync() -> Self {
            OpsHint::Resync
        }
    }

    /// Hints that the operations view changed, to every replica's `/ops`
    /// pages (by NOTIFY on PostgreSQL, in-process on SQLite). A hint says
    /// nothing but "read the view again", so it carries no data and a lost
    /// one costs only freshness until the next.
    #[derive(Clone)]
    pub struct OpsHints {
        announcer: storage::live::Announcer<OpsHint>,
    }

    impl std::fmt::Debug for OpsHints {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("OpsHints").finish_non_exhaustive()
        }
    }

    impl OpsHints {
        /// Hints for the database's backend; on PostgreSQL their relay runs
        /// under the engine's supervisor until shutdown.
        pub fn for_database(db: &storage::Database, engine: &engine::Engine) -> Self {
            let (announcer, relay) = storage::live::Announcer::for_database(db, &[CHANNEL]);
            if let Some(relay) = relay {
                let stopping = engine.tasks.stopping();
                engine.tasks.spawn("ops hint relay", async move {
                    relay.run(stopping.cancelled()).await;
                });
            }
            OpsHints { announcer }
        }

        /// Says the view changed; nobody listening is fine.
        pub fn changed(&self) {
            self.announcer
                .announce(CHANNEL, vec![OpsHint::Changed], |_| vec!["{}".to_owned()]);
        }

        /// The transport, for the live stream to subscribe to.
        pub fn announcer(&self) -> &storage::live::Announcer<OpsHint> {
            &self.announcer
        }

        /// Returns once hints reach this process (see
        /// `storage::live::Announcer::listening`).
        pub async fn listening(&self) {
            self.announcer.listening().await;
        }
    }
}

/// The operations view.
#[server(prefix = "/fn", endpoint = "ops_view", input = server_fn::codec::GetUrl)]
pub async fn ops_view() -> Result<OpsOverview, AppError> {
    use crate::server;
    let me = server::require_role(crate::access::OPS_ROLES)?;
    let ctx = server::context()?;
    let view = ctx
        .engine
        .work
        .ops_view(&me.actor())
        .await
        .map_err(|e| server::fail(backend::ops_error(e)))?;
    Ok(backend::page(view))
}

/// Retries, resolves or cancels one item; answers the item afterwards.
#[server(prefix = "/fn", endpoint = "ops_act")]
pub async fn ops_act(csrf_token: String, id: String, action: String) -> Result<WorkRow, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_role(crate::access::OPS_ROLES)?;
    let action = WorkAction::parse(action.trim()).ok_or_else(|| {
        server::fail(AppError::Invalid(
            "action must be retry, resolve or cancel".to_owned(),
        ))
    })?;
    let ctx = server::context()?;
    let after = ctx
        .engine
        .work
        .act_on_work(&me.actor(), id.trim(), action.into())
        .await
        .map_err(|e| server::fail(backend::ops_error(e)))?;
    ctx.ops_hints.changed();
    Ok(backend::work_row(after))
}

/// Acknowledges one open alert.
#[server(prefix = "/fn", endpoint = "ops_acknowledge")]
pub async fn ops_acknowledge(csrf_token: String, id: String) -> Result<(), AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_role(crate::access::OPS_ROLES)?;
    let ctx = server::context()?;
    ctx.engine
        .work
        .acknowledge_alert(&me.actor(), id.trim())
        .await
        .map_err(|e| server::fail(backend::ops_error(e)))?;
    ctx.ops_hints.changed();
    Ok(())
}
