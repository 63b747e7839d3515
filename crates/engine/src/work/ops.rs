//! The operations view: each lane's work, the schedules, dead letters and
//! alerts, and what staff may do about them (retry or resolve a dead
//! letter, cancel work that is safe to drop, acknowledge an alert). Every
//! action is journaled in the ops stream with who did it.

use super::Work;
use crate::core::Actor;
use domain::{Role, Timestamp};
use serde_json::json;
use storage::StorageError;
use storage::journal::{NewEvent, OPS_STREAM};
use storage::work::alerts::Alert;
use storage::work::{Intervention, LaneSummary, WorkFilter, WorkItem};

/// Who may see and act on background work.
const OPS_ROLES: &[Role] = &[Role::Manager, Role::Admin];

#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error("only managers and admins see background work")]
    Forbidden,
    #[error("no such work item")]
    NotFound,
    #[error("{0}")]
    NotAllowed(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// One lane as the view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneView {
    pub name: String,
    pub purpose: String,
    pub concurrency: usize,
    /// `background` or `scheduled`.
    pub priority: &'static str,
    pub counts: LaneSummary,
}

/// Everything `/ops` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct OpsView {
    pub lanes: Vec<LaneView>,
    /// The schedules, with their next and last runs.
    pub schedules: Vec<WorkItem>,
    /// Running, retrying and dead items, most recently changed first.
    pub attention: Vec<WorkItem>,
    pub alerts: Vec<Alert>,
    /// The last run of the journal check: when, what it found, and whether
    /// the journal was intact.
    pub audit: Option<AuditResult>,
    pub now: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditResult {
    pub at: Timestamp,
    pub finding: String,
    pub intact: bool,
}

/// What a person may do to one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpsAction {
    Retry,
    Cancel,
    Resolve,
}

impl OpsAction {
    fn as_str(self) -> &'static str {
        match self {
            OpsAction::Retry => "work_retried",
            OpsAction::Cancel => "work_cancelled",
            OpsAction::Resolve => "work_resolved",
        }
    }
}

/// Kinds whose queued items may be dropped: the sweep asks for them again
/// while they are still due, so nothing that must happen is lost. A
/// refund's send may never be cancelled: the proposal is already claimed
/// for execution and only the provider's answer may settle it.
#[must_use]
pub fn cancellable(kind: &str) -> bool {
    kind == super::PROPOSAL_CHECK || kind == super::PERSON_NOTIFY
}

fn allowed(actor: &Actor) -> Result<(), OpsError> {
    if actor.roles.any_of(OPS_ROLES) {
        Ok(())
    } else {
        Err(OpsError::Forbidden)
    }
}

impl Work {
    /// The operations view.
    ///
    /// # Errors
    /// [`OpsError::Forbidden`] for anyone but managers and admins; storage
    /// failures.
    pub async fn ops_view(&self, actor: &Actor) -> Result<OpsView, OpsError> {
        allowed(actor)?;
        let conn = self.db.conn();
        let now = self.now();
        let counts = storage::work::lane_summary(conn, now).await?;
        let lanes = self
            .lanes()
            .into_iter()
            .map(|spec| LaneView {
                counts: counts
                    .iter()
                    .find(|c| c.lane == spec.name)
                    .cloned()
                    .unwrap_or_else(|| LaneSummary {
                        lane: spec.name.clone(),
                        ..LaneSummary::default()
                    }),
                priority: match spec.priority {
                    runner::Priority::Background => "background",
                    runner::Priority::Scheduled => "scheduled",
                },
                name: spec.name,
                purpose: spec.purpose,
                concurrency: spec.concurrency,
            })
            .collect();
        let mut schedules: Vec<WorkItem> = storage::work::list(
            conn,
            &WorkFilter {
                lane: Some(super::SCHEDULED.to_owned()),
                states: vec![
                    storage::work::QUEUED.to_owned(),
                    storage::work::RUNNING.to_owned(),
                ],
                ..WorkFilter::default()
            },
            50,
        )
        .await?
        .into_iter()
        .filter(WorkItem::is_schedule)
        .collect();
        schedules.sort_by(|a, b| a.kind.cmp(&b.kind));
        let audit = schedules
            .iter()
            .find(|s| s.kind == super::AUDIT_VERIFY)
            .and_then(|s| {
                Some(AuditResult {
                    at: s.last_run_at?,
                    intact: s.last_note.as_deref()?.starts_with("journal intact"),
                    finding: s.last_note.clone()?,
                })
            });
        let attention = storage::work::list(
            conn,
            &WorkFilter {
                states: vec![
                    storage::work::RUNNING.to_owned(),
                    storage::work::DEAD.to_owned(),
                    storage::work::QUEUED.to_owned(),
                ],
                ..WorkFilter::default()
            },
            200,
        )
        .await?
        .into_iter()
        .filter(|item| {
            !item.is_schedule() && (item.state != storage::work::QUEUED || item.attempts > 0)
        })
        .take(100)
        .collect();
        let alerts = storage::work::alerts::open(conn, 100).await?;
        Ok(OpsView {
            lanes,
            schedules,
            attention,
            alerts,
            audit,
            now,
        })
    }

    /// Retries or resolves a dead letter, or cancels work that is safe to
    /// drop, and journals it.
    ///
    /// # Errors
    /// [`OpsError::Forbidden`], [`OpsError::NotFound`], or
    /// [`OpsError::NotAllowed`] when the item's state or kind does not allow
    /// the action (with the reason).
    pub async fn act_on_work(
        &self,
        actor: &Actor,
        id: &str,
        action: OpsAction,
    ) -> Result<WorkItem, OpsError> {
        allowed(actor)?;
        let now = self.now();
        let tx = self.db.begin_write().await?;
        let Some(item) = storage::work::get(&*tx, id).await? else {
            return Err(OpsError::NotFound);
        };
        if action == OpsAction::Cancel && !cancellable(&item.kind) {
            return Err(OpsError::NotAllowed(format!(
                "{} work cannot be cancelled: a refund already claimed for execution is settled only by the provider's answer; resolve it instead once it is dead-lettered",
                item.kind
            )));
        }
        let intervention = match action {
            OpsAction::Retry => Intervention::Retry,
            OpsAction::Cancel => Intervention::Cancel,
            OpsAction::Resolve => Intervention::Resolve,
        };
        let note = format!("{} by {}", action.as_str(), actor.name);
        let Some(after) = storage::work::intervene(&*tx, id, intervention, &note, now).await?
        else {
            return Err(OpsError::NotAllowed(format!(
                "the item is {}; {}",
                item.state,
                match action {
                    OpsAction::Retry | OpsAction::Resolve =>
                        "only dead-lettered work can be retried or resolved",
                    OpsAction::Cancel =>
                        "only work that has not started (or is dead-lettered) can be cancelled",
                }
            )));
        };
        storage::journal::append_to_stream(
            &*tx,
            OPS_STREAM,
            vec![NewEvent {
                proposal_id: None,
                order_id: None,
                actor: actor.journal_name(),
                kind: action.as_str().to_owned(),
                from_status: Some(item.state.clone()),
                to_status: Some(after.state.clone()),
                payload: json!({
                    "item": id,
                    "kind": item.kind,
                    "subject": item.subject,
                    "last_error": item.last_error,
                }),
                at: now,
            }],
        )
        .await?;
        tx.commit().await?;
        self.wake.lane(&after.lane);
        Ok(after)
    }

    /// Marks an alert as seen by this person, journaled.
    ///
    /// # Errors
    /// [`OpsError::Forbidden`], [`OpsError::NotFound`] when no such open
    /// alert exists.
    pub async fn acknowledge_alert(&self, actor: &Actor, id: &str) -> Result<(), OpsError> {
        allowed(actor)?;
        let now = self.now();
        let tx = self.db.begin_write().await?;
        if !storage::work::alerts::acknowledge(&*tx, id, &actor.journal_name(), now).await? {
            return Err(OpsError::NotFound);
        }
        storage::journal::append_to_stream(
            &*tx,
            OPS_STREAM,
            vec![NewEvent {
                proposal_id: None,
                order_id: None,
                actor: actor.journal_name(),
                kind: "alert_acknowledged".to_owned(),
                from_status: None,
                to_status: None,
                payload: json!({ "alert": id }),
                at: now,
            }],
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
