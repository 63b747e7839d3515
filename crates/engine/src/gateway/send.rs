//! Sending a task: decide (the kind's input schema, the builder's rules,
//! this group's current key) → save the signed envelope to the outbox with
//! its journal event and the item that relays it, in one transaction. The
//! task exists before any attempt to deliver it; a crash after the commit
//! loses nothing (the relay item is still there), and every resend carries
//! the same envelope, so the peer recognises it by its task key.

use super::{Keys, OwnKeyError, work_items};
use crate::clock::Clock;
use gateway::build::{self, NewTask};
use gateway::{
    Budget, GroupName, KeyRef, KindRegistry, Refusal, SignedAnswer, SignedEnvelope, Spent, TaskKey,
    TaskKind, TaskKinds,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use storage::gateway::outbox::{self, NewOutboxTask, OutboxTask};
use storage::ids::new_id;
use storage::journal::{NewEvent, append_to_stream, task_stream};
use storage::{Database, StorageError};
use tokio::sync::Notify;

/// The subject of the tasks this group passed on for inbox task
/// `inbox_id`: what its answer waits for, and what canceling it cancels.
#[must_use]
pub fn child_subject(inbox_id: &str) -> String {
    format!("inbox:{inbox_id}")
}

/// The inbox task a child task was passed on for, from its subject.
#[must_use]
pub fn parent_of(subject: &str) -> Option<&str> {
    subject.strip_prefix("inbox:")
}

fn fresh_task_key() -> Result<TaskKey, SendError> {
    TaskKey::parse(&new_id("task"))
        .map_err(|e| SendError::Invalid(Refusal::Malformed(e.to_string())))
}

/// A task to send.
#[derive(Debug, Clone)]
pub struct OutboundTask {
    pub to: GroupName,
    pub kind: TaskKind,
    pub input: Value,
    pub budget: Budget,
    /// What the task is for here (a conversation, a proposal).
    pub subject: Option<String>,
}

/// Why a task was not sent.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// What every receiver would refuse: nothing was written.
    #[error(transparent)]
    Invalid(Refusal),
    #[error(transparent)]
    Keys(#[from] OwnKeyError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A task in the outbox, as this group sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxTaskView {
    pub id: String,
    pub to_group: String,
    pub task_key: String,
    pub kind: String,
    pub subject: Option<String>,
    pub state: String,
    /// The peer's id for the task, once it acknowledged it.
    pub remote_task_id: Option<String>,
    /// The peer's result, checked against the kind's result schema and
    /// taken only from an answer signed by a key of the peer pinned here.
    pub result: Option<Value>,
    /// The key that signed the answer (`group/key/vN`); its signature was
    /// verified before the result was recorded.
    pub answer_signer: Option<String>,
    /// What the peer signed it spent (there and in what it passed on),
    /// charged to the task's budget; None until a signed answer came.
    pub spent: Option<Spent>,
    /// A result taken without a signature (a pair an admin allowed
    /// without signatures): nothing shows it came from the peer.
    pub unsigned: bool,
    pub error: Option<String>,
    /// The signing key of the envelope (`group/key/vN`).
    pub signer: String,
    pub deadline: domain::Timestamp,
    pub created_at: domain::Timestamp,
    pub updated_at: domain::Timestamp,
}

impl OutboxTaskView {
    /// Whether nothing more will happen to the task.
    #[must_use]
    pub fn is_final(&self) -> bool {
        outbox::is_final(&self.state)
    }

    pub(super) fn read(task: OutboxTask) -> Result<Self, StorageError> {
        let corrupt = |what: &str, e: serde_json::Error| {
            StorageError::Corrupt(format!(
                "the {what} of outbox task {} is not JSON: {e}",
                task.id
            ))
        };
        let envelope: Value =
            serde_json::from_str(&task.envelope).map_err(|e| corrupt("envelope", e))?;
        let result = match &task.result {
            Some(text) => Some(serde_json::from_str(text).map_err(|e| corrupt("result", e))?),
            None => None,
        };
        let (answer_signer, spent) = match &task.signed_answer {
            Some(text) => {
                let answer = serde_json::from_str::<SignedAnswer>(text)
                    .map_err(|e| corrupt("signed answer", e))?
                    .answer;
                (Some(answer.signer.to_string()), Some(answer.spent))
            }
            None => (None, None),
        };
        Ok(OutboxTaskView {
            signer: serde_json::from_value::<KeyRef>(envelope["envelope"]["signer"].clone())
                .map_err(|e| corrupt("signer", e))?
                .to_string(),
            id: task.id,
            to_group: task.to_group,
            task_key: task.task_key,
            kind: task.kind,
            subject: task.subject,
            state: task.state,
            remote_task_id: task.remote_task_id,
            unsigned: result.is_some() && task.signed_answer.is_none(),
            result,
            answer_signer,
            spent,
            error: task.error,
            deadline: task.deadline,
            created_at: task.created_at,
            updated_at: task.updated_at,
        })
    }
}

/// This group's sending end.
#[derive(Clone)]
pub struct Sender {
    pub(super) db: Database,
    pub(super) clock: Clock,
    pub(super) keys: Keys,
    pub(super) kinds: Arc<KindRegistry>,
    pub(super) wake: runner::Wake,
    /// Signalled whenever this process records a step of an outbox task.
    pub(super) changed: Arc<Notify>,
}

impl Sender {
    pub(super) fn new(
        db: Database,
        clock: Clock,
        keys: Keys,
        kinds: Arc<KindRegistry>,
        wake: runner::Wake,
    ) -> Self {
        Self {
            db,
            clock,
            keys,
            kinds,
            wake,
            changed: Arc::new(Notify::new()),
        }
    }

    /// Signs `task` as a new root task and writes it to the outbox; the
    /// gateway lane delivers it.
    ///
    /// # Errors
    /// [`SendError::Invalid`] for a task every receiver would refuse (an
    /// unknown kind, an input its schema rejects, a task to this group);
    /// key or storage failures (nothing was written).
    pub async fn send(&self, task: OutboundTask) -> Result<OutboxTaskView, SendError> {
        self.check_input(&task)?;
        let signer = self.keys.current().await?;
        // After the key is read: a first version made just now is valid
        // from its making, and the envelope must not predate it.
        let now = self.clock.now();
        let envelope = build::root(NewTask {
            task_key: fresh_task_key()?,
            kind: task.kind.clone(),
            input: task.input.clone(),
            to: task.to.clone(),
            budget: task.budget.clone(),
            signer,
            created: now,
        })
        .map_err(SendError::Invalid)?;
        self.write(envelope, task.subject, None, now).await
    }

    /// Passes on the task this group received as `parent` (its signed
    /// envelope as it arrived, inbox task `parent_inbox_id`): a child with
    /// the route extended, one hop deeper, the parent embedded whole, and
    /// `remaining` (what is left of the parent's budget after this group's
    /// own spending) as its budget. The child is sent for subject
    /// `inbox:<parent_inbox_id>`, and the parent's stream journals the
    /// delegation in the same transaction.
    ///
    /// # Errors
    /// [`SendError::Invalid`] for what every receiver would refuse: a
    /// group already on the route (a cycle), a chain past `max_depth`, a
    /// budget beyond the parent's; key or storage failures (nothing was
    /// written).
    pub async fn delegate(
        &self,
        parent: &SignedEnvelope,
        parent_inbox_id: &str,
        to: GroupName,
        remaining: Budget,
        max_depth: u32,
    ) -> Result<OutboxTaskView, SendError> {
        let task = OutboundTask {
            to,
            kind: parent.envelope.kind.clone(),
            input: parent.envelope.input.clone(),
            budget: remaining.clone(),
            subject: Some(child_subject(parent_inbox_id)),
        };
        self.check_input(&task)?;
        let signer = self.keys.current().await?;
        let now = self.clock.now();
        let envelope = build::delegate(
            parent,
            remaining,
            NewTask {
                task_key: fresh_task_key()?,
                kind: task.kind,
                input: task.input,
                to: task.to,
                budget: task.budget,
                signer,
                created: now,
            },
            max_depth,
        )
        .map_err(SendError::Invalid)?;
        self.write(envelope, task.subject, Some(parent_inbox_id), now)
            .await
    }

    fn check_input(&self, task: &OutboundTask) -> Result<(), SendError> {
        match self.kinds.check_input(&task.kind, &task.input) {
            None => Err(SendError::Invalid(Refusal::UnknownKind(task.kind.clone()))),
            Some(Err(why)) => Err(SendError::Invalid(Refusal::InvalidInput {
                kind: task.kind.clone(),
                why,
            })),
            Some(Ok(())) => Ok(()),
        }
    }

    /// Signs `envelope` and writes it to the outbox with its journal event
    /// (and, for a child, the event in its parent's stream) and the item
    /// that relays it, in one transaction.
    async fn write(
        &self,
        envelope: gateway::TaskEnvelope,
        subject: Option<String>,
        parent_inbox_id: Option<&str>,
        now: domain::Timestamp,
    ) -> Result<OutboxTaskView, SendError> {
        let id = new_id("gto");
        let deadline = envelope.budget.deadline;
        let signed = SignedEnvelope {
            signature: self
                .keys
                .detached(gateway::jws::envelope_to_sign(&envelope))
                .await?,
            envelope,
        };
        let text = serde_json::to_string(&signed)
            .map_err(|e| StorageError::Corrupt(format!("an envelope did not serialise: {e}")))?;
        let envelope = &signed.envelope;
        let tx = self.db.begin_write().await?;
        outbox::insert(
            &*tx,
            NewOutboxTask {
                id: &id,
                to_group: envelope.to.as_str(),
                task_key: envelope.task_key.as_str(),
                root_key: envelope.root_key.as_str(),
                parent_key: envelope.parent_key.as_ref().map(TaskKey::as_str),
                kind: envelope.kind.as_str(),
                subject: subject.as_deref(),
                envelope: &text,
                deadline,
                created_at: now,
            },
        )
        .await?;
        append_to_stream(
            &*tx,
            &task_stream(&id),
            vec![NewEvent {
                proposal_id: None,
                order_id: None,
                actor: "system:gateway".to_owned(),
                kind: "gateway.task_sent".to_owned(),
                from_status: None,
                to_status: Some(outbox::QUEUED.to_owned()),
                payload: json!({
                    "task_key": envelope.task_key,
                    "kind": envelope.kind,
                    "to": envelope.to,
                    "root_key": envelope.root_key,
                    "parent_key": envelope.parent_key,
                    "route": envelope.route,
                    "depth": envelope.depth,
                    "budget": envelope.budget,
                    "signer": envelope.signer.to_string(),
                    "subject": subject,
                }),
                at: now,
            }],
        )
        .await?;
        if let Some(parent) = parent_inbox_id {
            append_to_stream(
                &*tx,
                &task_stream(parent),
                vec![NewEvent {
                    proposal_id: None,
                    order_id: None,
                    actor: "system:gateway".to_owned(),
                    kind: "gateway.task_delegated".to_owned(),
                    from_status: None,
                    to_status: None,
                    payload: json!({
                        "child_outbox_id": id,
                        "child_task_key": envelope.task_key,
                        "to": envelope.to,
                        "route": envelope.route,
                        "depth": envelope.depth,
                        "budget": envelope.budget,
                    }),
                    at: now,
                }],
            )
            .await?;
        }
        storage::work::enqueue(&*tx, &[work_items::relay(&id, now)], now).await?;
        tx.commit().await?;
        self.wake.lane(super::GATEWAY_LANE);
        // What was just written, as written: no read back.
        Ok(OutboxTaskView {
            to_group: envelope.to.to_string(),
            task_key: envelope.task_key.to_string(),
            kind: envelope.kind.to_string(),
            subject,
            state: outbox::QUEUED.to_owned(),
            remote_task_id: None,
            result: None,
            answer_signer: None,
            spent: None,
            unsigned: false,
            error: None,
            signer: envelope.signer.to_string(),
            deadline,
            created_at: now,
            updated_at: now,
            id,
        })
    }

    /// The outbox task `id`.
    ///
    /// # Errors
    /// Database failures.
    pub async fn task(&self, id: &str) -> Result<Option<OutboxTaskView>, StorageError> {
        outbox::get(self.db.conn(), id)
            .await?
            .map(OutboxTaskView::read)
            .transpose()
    }

    /// The tasks sent for `subject`, oldest first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn tasks_for(&self, subject: &str) -> Result<Vec<OutboxTaskView>, StorageError> {
        outbox::for_subject(self.db.conn(), subject)
            .await?
            .into_iter()
            .map(OutboxTaskView::read)
            .collect()
    }

    /// Cancels outbox task `id`, for `by` (a person, or `system:stop`): a
    /// task not yet ended becomes `canceling`, journaled; one the peer
    /// holds is canceled there by the gateway lane, told until it
    /// acknowledges; one never delivered is not sent. Returns false when it
    /// had ended already (nothing to cancel) or does not exist.
    ///
    /// # Errors
    /// Database failures.
    pub async fn cancel(&self, id: &str, by: &str) -> Result<bool, StorageError> {
        let Some(task) = outbox::get(self.db.conn(), id).await? else {
            return Ok(false);
        };
        if outbox::is_final(&task.state) || task.state == outbox::CANCELING {
            return Ok(false);
        }
        let now = self.clock.now();
        let tx = self.db.begin_write().await?;
        let change = outbox::Change {
            state: outbox::CANCELING,
            ..outbox::Change::default()
        };
        if !outbox::advance(&*tx, id, task.state_version, change, now).await? {
            // It moved meanwhile; ask again about what it is now.
            tx.rollback().await?;
            return Box::pin(self.cancel(id, by)).await;
        }
        append_to_stream(
            &*tx,
            &task_stream(id),
            vec![NewEvent {
                proposal_id: None,
                order_id: None,
                actor: by.to_owned(),
                kind: "gateway.cancel_requested".to_owned(),
                from_status: Some(task.state.clone()),
                to_status: Some(outbox::CANCELING.to_owned()),
                payload: json!({ "peer_task_id": task.remote_task_id }),
                at: now,
            }],
        )
        .await?;
        if task.remote_task_id.is_some() {
            storage::work::enqueue(&*tx, &[work_items::cancel(id, now)], now).await?;
        }
        tx.commit().await?;
        self.wake.lane(super::GATEWAY_LANE);
        self.changed.notify_waiters();
        Ok(true)
    }

    /// Cancels every task sent for `subject` that has not ended (Stop on a
    /// conversation); returns how many were asked to cancel.
    ///
    /// # Errors
    /// Database failures.
    pub async fn cancel_for(&self, subject: &str, by: &str) -> Result<usize, StorageError> {
        let mut canceled = 0;
        for task in outbox::open_for_subject(self.db.conn(), subject).await? {
            if self.cancel(&task.id, by).await? {
                canceled += 1;
            }
        }
        Ok(canceled)
    }

    /// Waits until task `id` is final or `wait` has passed, and returns it
    /// as it is then. Woken by this process's relay; another replica's
    /// answers are seen by a fresh read at least every second.
    ///
    /// # Errors
    /// Database failures; a task that does not exist.
    pub async fn wait_for(&self, id: &str, wait: Duration) -> Result<OutboxTaskView, StorageError> {
        let until = tokio::time::Instant::now() + wait;
        loop {
            // Registered before the read, so a change between the read and
            // the wait still wakes it.
            let changed = self.changed.notified();
            let task = self
                .task(id)
                .await?
                .ok_or_else(|| StorageError::Corrupt(format!("no outbox task {id}")))?;
            let now = tokio::time::Instant::now();
            if task.is_final() || now >= until {
                return Ok(task);
            }
            let next = until.min(now + Duration::from_secs(1));
            let _ = tokio::time::timeout_at(next, changed).await;
        }
    }
}
