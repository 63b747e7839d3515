//! Answering the tasks other groups sent: the task moves `submitted →
//! working → completed` (or `failed`), each step journaled in the task's
//! stream, and a result is recorded only if it is valid against the kind's
//! result schema. The answer is this group's own record, decided by rules
//! (no model): `returns.inspection` reads the returned parcels. A result
//! goes out signed with this group's key ([`gateway::answer`]), so the
//! asking group can show it as evidence that verifiably came from here.

use super::OwnKeys;
use super::kinds::RETURNS_INSPECTION;
use super::work_items;
use crate::clock::Clock;
use domain::Timestamp;
use gateway::{GroupName, KindRegistry, TaskAnswer, TaskKey, TaskKind};
use runner::{Handler, Job, JobError, RunnerBuilder};
use serde_json::{Value, json};
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
    pub keys: Option<OwnKeys>,
}

pub(super) fn register(desk: &Desk, builder: RunnerBuilder) -> RunnerBuilder {
    builder.handle(work_items::ANSWER, Answer(desk.clone()))
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
        Ok(true)
    }

    /// `result` signed as this group's answer to `task` (JSON text); None
    /// without a key to sign with.
    async fn sign(&self, task: &InboxTask, result: &Value) -> Result<Option<String>, JobError> {
        let Some(keys) = &self.keys else {
            return Ok(None);
        };
        let signer = keys.signer().await.map_err(retry)?;
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
            answered_at: now,
            signer: signer.key_ref().clone(),
        };
        let signed = gateway::answer::sign(answer, &signer).map_err(|e| dead(&e))?;
        serde_json::to_string(&signed)
            .map(Some)
            .map_err(|e| dead(&e))
    }

    /// This group's answer to `task`: Ok(result) or Err(why it cannot).
    async fn answer(&self, task: &InboxTask) -> Result<Result<Value, String>, StorageError> {
        let envelope: Value = serde_json::from_str(&task.envelope).map_err(|e| {
            StorageError::Corrupt(format!("the envelope of task {} is not JSON: {e}", task.id))
        })?;
        let input = &envelope["envelope"]["input"];
        match task.kind.as_str() {
            RETURNS_INSPECTION => {
                let Some(order_id) = input["order_id"].as_str() else {
                    return Ok(Err("the input names no order".to_owned()));
                };
                Ok(Ok(inspection(
                    parcels::find(self.db.conn(), order_id).await?,
                    order_id,
                )))
            }
            other => Ok(Err(format!("this group has no desk for {other} tasks"))),
        }
    }
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
/// answer is a read of this group's records).
struct Answer(Desk);

#[async_trait::async_trait]
impl Handler for Answer {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let desk = &self.0;
        let id = job.item.payload["inbox_id"]
            .as_str()
            .ok_or_else(|| JobError::Dead("the item names no inbox task".to_owned()))?;
        let mut task = inbox::get(desk.db.conn(), id)
            .await
            .map_err(retry)?
            .ok_or_else(|| JobError::Dead(format!("inbox task {id} does not exist")))?;
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
        let answer = desk.answer(&task).await.map_err(retry)?;
        let checked = answer.and_then(|result| {
            let kind = TaskKind::parse(&task.kind).map_err(|e| e.to_string())?;
            match desk.kinds.check_result(&kind, &result) {
                Some(Ok(())) => Ok(result),
                Some(Err(why)) => Err(format!(
                    "this group's answer broke the result schema: {why}"
                )),
                None => Err(format!("{kind} has no result schema here")),
            }
        });
        let now = desk.clock.now();
        let (to, result, signed, message) = match checked {
            Ok(result) => {
                let signed = desk.sign(&task, &result).await?;
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
        desk.advance(&task, inbox::WORKING, to, outcome, now)
            .await
            .map_err(retry)?;
        Ok(Some(to.to_owned()))
    }
}
