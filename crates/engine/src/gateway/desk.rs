//! Answering the tasks other groups sent: the task moves `submitted →
//! working → completed` (or `failed`), each step journaled in the task's
//! stream, and a result is recorded only if it is valid against the kind's
//! result schema. The answer is this group's own record, decided by rules
//! (no model): `returns.inspection` reads the returned parcels. A result
//! goes out signed with this group's key ([`gateway::answer`]), so the
//! asking group can show it as evidence that verifiably came from here.
//!
//! Where this group has no record of its own and an admin named a group to
//! ask for the kind (`gateway_forward`), the desk passes the task on as a
//! signed child (route extended, one hop deeper, the parent embedded, the
//! budget within the parent's) and answers with the child's result when
//! it ends; canceling the task here cancels the child there.

use super::kinds::RETURNS_INSPECTION;
use super::send::{OutboxTaskView, SendError, child_subject};
use super::{Keys, Sender, work_items};
use crate::clock::Clock;
use domain::Timestamp;
use gateway::{GroupName, KindRegistry, SignedEnvelope, Spent, TaskAnswer, TaskKey, TaskKind};
use runner::{Handler, Job, JobError, RunnerBuilder};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use storage::gateway::inbox::{self, InboxTask, Outcome};
use storage::journal::{NewEvent, append_to_stream, task_stream};
use storage::returns::parcels;
use storage::{Database, StorageError};

#[derive(Clone)]
pub(super) struct Desk {
    pub db: Database,
    pub clock: Clock,
    pub kinds: Arc<KindRegistry>,
    pub me: GroupName,
    /// Signs answers; without a master key answers go out unsigned (and a
    /// Countersign sender will not take them).
    pub keys: Option<Keys>,
    /// Passes tasks on; None without a master key.
    pub sender: Option<Sender>,
    /// The group asked, per kind, when this group has no record of its own.
    pub forwards: Arc<Forwards>,
    /// The depth past which a task is not passed on.
    pub max_depth: u32,
    /// Signalled after each step recorded, for those watching a task.
    pub changed: Arc<tokio::sync::Notify>,
}

/// The group to ask, per task kind, when this group has no record of its
/// own (`returns.inspection` → `warehouse`).
pub type Forwards = HashMap<TaskKind, GroupName>;

/// What this group's own records say.
enum Local {
    /// A recorded answer.
    Recorded(Value),
    /// No record: the answer that says so (`condition: unknown`), given
    /// unless another group is asked.
    NoRecord(Value),
    /// Why this group cannot answer at all.
    Cannot(String),
}

/// What this desk spends on a task itself: one step of rules, no model.
fn own_spending() -> Spent {
    Spent::one_step()
}

/// An answer with what it cost, this group's spending and its children's.
type Costed = Result<(Value, Spent), String>;

/// Where the answer stands.
enum Answer {
    Ready(Costed),
    /// A child task (key `task_key`) was passed on to group `to` and has
    /// not ended.
    Waiting {
        to: String,
        task_key: String,
    },
}

pub(super) fn register(desk: &Desk, builder: RunnerBuilder) -> RunnerBuilder {
    builder.handle(work_items::ANSWER, AnswerTask(desk.clone()))
}

fn retry(error: impl std::fmt::Display) -> JobError {
    JobError::Retry(error.to_string())
}

impl Desk {
    /// Moves the task from `from` to `to` with its journal event; false when
    /// it was no longer at `from`.
    async fn advance(
        &self,
        task: &InboxTask,
        from: &str,
        to: &str,
        outcome: Outcome<'_>,
        now: Timestamp,
    ) -> Result<bool, StorageError> {
        let message = outcome.message;
        let tx = self.db.begin_write().await?;
        if !inbox::advance(&*tx, &task.id, from, to, outcome, now).await? {
            tx.rollback().await?;
            return Ok(false);
        }
        append_to_stream(
            &*tx,
            &task_stream(&task.id),
            vec![NewEvent {
                proposal_id: None,
                order_id: None,
                actor: "system:gateway".to_owned(),
                kind: format!("gateway.task_{}", to.replace('-', "_")),
                from_status: Some(from.to_owned()),
                to_status: Some(to.to_owned()),
                payload: json!({ "message": message }),
                at: now,
            }],
        )
        .await?;
        tx.commit().await?;
        self.changed.notify_waiters();
        Ok(true)
    }

    /// `result` signed as this group's answer to `task` (JSON text); None
    /// without a key to sign with.
    async fn sign(
        &self,
        task: &InboxTask,
        result: &Value,
        spent: Spent,
    ) -> Result<Option<String>, JobError> {
        let Some(keys) = &self.keys else {
            return Ok(None);
        };
        let signer = keys.current().await.map_err(retry)?;
        // After the key is read: a first version made just now is valid
        // from its making, and the answer must not predate it.
        let now = self.clock.now();
        let dead = |e: &dyn std::fmt::Display| JobError::Dead(e.to_string());
        let answer = TaskAnswer {
            v: gateway::answer::ANSWER_VERSION,
            task_key: TaskKey::parse(&task.task_key).map_err(|e| dead(&e))?,
            to: GroupName::parse(&task.sender_group).map_err(|e| dead(&e))?,
            from: self.me.clone(),
            state: inbox::COMPLETED.to_owned(),
            result: result.clone(),
            spent,
            answered_at: now,
            signer,
        };
        let signed = gateway::SignedAnswer {
            signature: keys
                .detached(gateway::answer::to_sign(&answer))
                .await
                .map_err(retry)?,
            answer,
        };
        serde_json::to_string(&signed)
            .map(Some)
            .map_err(|e| dead(&e))
    }

    /// What this group's own records say about `task`.
    async fn local(
        &self,
        task: &InboxTask,
        envelope: &SignedEnvelope,
    ) -> Result<Local, StorageError> {
        let input = &envelope.envelope.input;
        match task.kind.as_str() {
            RETURNS_INSPECTION => {
                let Some(order_id) = input["order_id"].as_str() else {
                    return Ok(Local::Cannot("the input names no order".to_owned()));
                };
                Ok(match parcels::find(self.db.conn(), order_id).await? {
                    Some(parcel) => Local::Recorded(inspection(Some(parcel), order_id)),
                    None => Local::NoRecord(inspection(None, order_id)),
                })
            }
            other => Ok(Local::Cannot(format!(
                "this group has no desk for {other} tasks"
            ))),
        }
    }

    /// This group's answer to `task`: from its own records; or, where it
    /// has none and a group is named for the kind, from the child task
    /// passed on to that group (sent now if it was not yet).
    async fn answer(&self, task: &InboxTask) -> Result<Answer, JobError> {
        let envelope = SignedEnvelope::from_stored(&task.envelope).map_err(|e| {
            JobError::Dead(format!(
                "the envelope of task {} does not read: {e}",
                task.id
            ))
        })?;
        // A desk never spends beyond what the asking group gave the task;
        // what is left after its own step is what a child may get.
        let remaining = match envelope.envelope.budget.after(&own_spending()) {
            Ok(remaining) => remaining,
            Err(excess) => {
                return Ok(Answer::Ready(Err(format!(
                    "the task's budget does not cover this group's work on it: {excess}"
                ))));
            }
        };
        // A plain peer's task is answered from this group's own records
        // only: an unsigned parent would make a child no receiver takes.
        let forward = TaskKind::parse(&task.kind)
            .ok()
            .filter(|_| !super::is_unsigned(&envelope))
            .and_then(|kind| self.forwards.get(&kind).cloned());
        let (Some(to), Some(sender)) = (forward, &self.sender) else {
            return Ok(Answer::Ready(self.own(task, &envelope).await?));
        };
        let children = sender
            .tasks_for(&child_subject(&task.id))
            .await
            .map_err(retry)?;
        if let Some(child) = children.into_iter().last() {
            return Ok(child_answer(child));
        }
        if let Local::Recorded(result) = self.local(task, &envelope).await.map_err(retry)? {
            return Ok(Answer::Ready(Ok((result, own_spending()))));
        }
        match sender
            .delegate(&envelope, &task.id, to.clone(), remaining, self.max_depth)
            .await
        {
            Ok(child) => Ok(Answer::waiting(child)),
            Err(SendError::Invalid(refusal)) => Ok(Answer::Ready(Err(format!(
                "this group has no record and could not ask {to}: {refusal}"
            )))),
            Err(other) => Err(retry(other)),
        }
    }

    /// The answer from this group's own records alone.
    async fn own(&self, task: &InboxTask, envelope: &SignedEnvelope) -> Result<Costed, JobError> {
        Ok(match self.local(task, envelope).await.map_err(retry)? {
            Local::Recorded(result) | Local::NoRecord(result) => Ok((result, own_spending())),
            Local::Cannot(why) => Err(why),
        })
    }

    /// Cancels what `task` passed on, now that it is canceled here.
    async fn cancel_children(&self, task: &InboxTask) -> Result<usize, JobError> {
        match &self.sender {
            Some(sender) => sender
                .cancel_for(
                    &child_subject(&task.id),
                    &format!("group:{}", task.sender_group),
                )
                .await
                .map_err(retry),
            None => Ok(0),
        }
    }
}

impl Answer {
    fn waiting(child: OutboxTaskView) -> Self {
        Answer::Waiting {
            to: child.to_group,
            task_key: child.task_key,
        }
    }
}

/// The parent's answer from its child: the child's result once it
/// completed, costing this desk's spending and the child's; its reason
/// once it ended otherwise.
fn child_answer(child: OutboxTaskView) -> Answer {
    if !child.is_final() {
        return Answer::waiting(child);
    }
    Answer::Ready(match (child.state.as_str(), child.result, child.spent) {
        (storage::gateway::outbox::COMPLETED, Some(result), Some(spent)) => own_spending()
            .plus(&spent)
            .map(|total| (result, total))
            .map_err(|excess| {
                format!(
                    "{} reported spending that adds to no budget: {excess}",
                    child.to_group
                )
            }),
        (state, _, _) => Err(format!(
            "this group has no record, and {} did not answer ({state}{})",
            child.to_group,
            child.error.map(|e| format!(": {e}")).unwrap_or_default()
        )),
    })
}

/// What the returns desk recorded, or `unknown` when no parcel came back.
fn inspection(parcel: Option<parcels::Parcel>, order_id: &str) -> Value {
    match parcel {
        Some(parcel) => json!({
            "received_at": parcel.received_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "condition": parcel.condition,
            "note": parcel.note,
        }),
        None => json!({
            "received_at": null,
            "condition": "unknown",
            "note": format!("No returned parcel is recorded for order {order_id}."),
        }),
    }
}

/// Answers one inbox task. Idempotent: a task already answered is left
/// alone; one left `working` by a worker that died is answered again (the
/// answer is a read of this group's records, or of the child task already
/// passed on); a canceled one has its children canceled.
struct AnswerTask(Desk);

#[async_trait::async_trait]
impl Handler for AnswerTask {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let desk = &self.0;
        let id = job.item.payload["inbox_id"]
            .as_str()
            .ok_or_else(|| JobError::Dead("the item names no inbox task".to_owned()))?;
        let mut task = inbox::get(desk.db.conn(), id)
            .await
            .map_err(retry)?
            .ok_or_else(|| JobError::Dead(format!("inbox task {id} does not exist")))?;
        if task.state == inbox::CANCELED {
            let asked = desk.cancel_children(&task).await?;
            return Ok(Some(format!(
                "canceled; {asked} task(s) it passed on asked to cancel"
            )));
        }
        if task.state == inbox::SUBMITTED {
            let now = desk.clock.now();
            desk.advance(
                &task,
                inbox::SUBMITTED,
                inbox::WORKING,
                Outcome::default(),
                now,
            )
            .await
            .map_err(retry)?;
            task.state = inbox::WORKING.to_owned();
        }
        if task.state != inbox::WORKING {
            return Ok(Some(format!("already {}", task.state)));
        }
        let answer = match desk.answer(&task).await? {
            Answer::Ready(answer) => answer,
            // The child's end queues this answer again.
            Answer::Waiting { to, task_key } => {
                return Ok(Some(format!("waiting for {to} (task {task_key})")));
            }
        };
        let checked = answer.and_then(|(result, spent)| {
            let kind = TaskKind::parse(&task.kind).map_err(|e| e.to_string())?;
            match desk.kinds.check_result(&kind, &result) {
                Some(Ok(())) => Ok((result, spent)),
                Some(Err(why)) => Err(format!(
                    "this group's answer broke the result schema: {why}"
                )),
                None => Err(format!("{kind} has no result schema here")),
            }
        });
        let now = desk.clock.now();
        let (to, result, signed, message) = match checked {
            Ok((result, spent)) => {
                let signed = desk.sign(&task, &result, spent).await?;
                (inbox::COMPLETED, Some(result.to_string()), signed, None)
            }
            Err(why) => {
                tracing::warn!(task.id = %task.id, reason = %why, "a received task failed");
                (inbox::FAILED, None, None, Some(why))
            }
        };
        let outcome = Outcome {
            result: result.as_deref(),
            signed_answer: signed.as_deref(),
            message: message.as_deref(),
        };
        let moved = desk
            .advance(&task, inbox::WORKING, to, outcome, now)
            .await
            .map_err(retry)?;
        if !moved {
            // Canceled meanwhile: what it passed on is canceled too.
            desk.cancel_children(&task).await?;
        }
        Ok(Some(to.to_owned()))
    }
}
