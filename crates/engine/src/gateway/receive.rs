//! Receiving a task: load what this group trusts → decide with the
//! gateway's checks, in order → save the task to the inbox with its journal
//! event in one transaction. A resend of the same envelope answers the task
//! it created; every refusal is journaled (in the gateway stream) with its
//! code and reason before it is answered.

use super::{trust, work_items};
use crate::clock::Clock;
use gateway::jws::envelope_digest;
use gateway::{Admission, GroupName, KindRegistry, Refusal, ReplayWindow, SignedEnvelope};
use serde_json::{Value, json};
use std::sync::Arc;
use storage::gateway::inbox::{self, Accepted, NewInboxTask};
use storage::ids::new_id;
use storage::journal::{GATEWAY_STREAM, NewEvent, append_to_stream, task_stream};
use storage::{Database, StorageError};
use tokio::sync::Notify;

/// Why a task was not canceled.
#[derive(Debug, thiserror::Error)]
pub enum CancelError {
    /// No such task for this caller (another group's task does not exist
    /// for it either).
    #[error("no task {0}")]
    NotFound(String),
    /// Already answered (or failed, or canceled): nothing left to stop.
    #[error("task {id} is {state} and can no longer be canceled")]
    NotCancelable { id: String, state: String },
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Why a task was not received.
#[derive(Debug, thiserror::Error)]
pub enum ReceiveError {
    /// Refused by a check; journaled.
    #[error(transparent)]
    Refused(Refusal),
    /// A request's bearer token was missing or did not verify.
    #[error("the peer could not be authenticated: {0}")]
    Unauthenticated(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A task this delivery put in (or found in) the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedTask {
    /// The task as it stood when this delivery was recorded.
    pub task: InboxTaskView,
    /// True when this delivery was a resend of a task received before.
    pub resent: bool,
}

/// A task in the inbox, as its sender may see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxTaskView {
    pub task_id: String,
    pub sender_group: String,
    pub task_key: String,
    pub root_key: String,
    pub kind: String,
    pub state: String,
    pub result: Option<Value>,
    /// Why the task failed, for its sender.
    pub message: Option<String>,
    /// The answer this group signed, sent with the result.
    pub signed_answer: Option<Value>,
    pub received_at: domain::Timestamp,
    pub updated_at: domain::Timestamp,
}

impl InboxTaskView {
    /// Whether the task will change no more.
    #[must_use]
    pub fn is_final(&self) -> bool {
        inbox::is_final(&self.state)
    }

    pub(super) fn read(task: inbox::InboxTask) -> Result<Self, StorageError> {
        let json = |what: &str, text: &Option<String>| -> Result<Option<Value>, StorageError> {
            text.as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| {
                    StorageError::Corrupt(format!(
                        "the {what} of task {} is not JSON: {e}",
                        task.id
                    ))
                })
        };
        let result = json("result", &task.result)?;
        let signed_answer = json("signed answer", &task.signed_answer)?;
        Ok(InboxTaskView {
            task_id: task.id,
            sender_group: task.sender_group,
            task_key: task.task_key,
            root_key: task.root_key,
            kind: task.kind,
            state: task.state,
            result,
            message: task.status_message,
            signed_answer,
            received_at: task.received_at,
            updated_at: task.updated_at,
        })
    }
}

/// This group's receiving end.
#[derive(Clone)]
pub struct Receiver {
    pub(super) db: Database,
    pub(super) clock: Clock,
    pub(super) me: GroupName,
    pub(super) kinds: Arc<KindRegistry>,
    replay: ReplayWindow,
    max_depth: u32,
    /// Wakes the gateway lane, which answers what was received.
    wake: runner::Wake,
    /// Signalled whenever this process records a step of an inbox task
    /// (the desk's answer, a cancel), for those watching one.
    pub(super) changed: Arc<Notify>,
    /// This group's own key: a chain that passed through this group
    /// embeds an envelope this group signed, verified with it so that the
    /// route check can name the cycle.
    own_keys: Option<super::Keys>,
}

impl Receiver {
    /// `wake` is the work runner's door: the gateway lane answers what is
    /// received.
    pub fn new(
        db: Database,
        clock: Clock,
        me: GroupName,
        kinds: Arc<KindRegistry>,
        wake: runner::Wake,
    ) -> Self {
        Self {
            db,
            clock,
            me,
            kinds,
            replay: ReplayWindow::default(),
            max_depth: gateway::DEFAULT_MAX_DEPTH,
            wake,
            changed: Arc::new(Notify::new()),
            own_keys: None,
        }
    }

    /// This group's own key, to verify its own links in a chain that came
    /// back (a cycle, refused as one).
    #[must_use]
    pub fn with_own_keys(mut self, keys: Option<super::Keys>) -> Self {
        self.own_keys = keys;
        self
    }

    /// The depth limit (default [`gateway::DEFAULT_MAX_DEPTH`]).
    pub fn with_max_depth(mut self, max_depth: u32) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The peer group that signed `token` (a bearer token from
    /// `gateway::peer_token`) for this group, or, for a plain A2A peer, the
    /// group an admin issued the secret `token` to.
    ///
    /// # Errors
    /// [`ReceiveError::Storage`], or [`ReceiveError::Unauthenticated`] with
    /// why the token is not accepted.
    pub async fn authenticate(&self, token: &str) -> Result<GroupName, ReceiveError> {
        if token.starts_with(super::PEER_SECRET_PREFIX) {
            return super::peer_secrets::group_of(self.db.conn(), token)
                .await?
                .ok_or_else(|| {
                    ReceiveError::Unauthenticated(
                        "this peer secret is not known here, or it was revoked".to_owned(),
                    )
                });
        }
        let trust = trust::load(self.db.conn()).await?;
        gateway::peer_token::verify(token, &self.me, &trust.pins, self.clock.now())
            .map_err(ReceiveError::Unauthenticated)
    }

    /// The inbox task `task_id` as `caller` may see it: only the group that
    /// sent a task reads it; to anyone else it does not exist.
    ///
    /// # Errors
    /// Database failures.
    pub async fn task_for(
        &self,
        caller: &GroupName,
        task_id: &str,
    ) -> Result<Option<InboxTaskView>, StorageError> {
        Ok(self
            .task(task_id)
            .await?
            .filter(|task| task.sender_group == caller.as_str()))
    }

    /// Cancels task `task_id` for `caller`, the group that sent it: a task
    /// not yet answered is canceled (journaled; the answer lane leaves it
    /// alone, and an answer being computed is not recorded); one already
    /// answered is not cancelable. Canceling twice answers the same.
    ///
    /// # Errors
    /// [`CancelError`].
    pub async fn cancel(
        &self,
        caller: &GroupName,
        task_id: &str,
    ) -> Result<InboxTaskView, CancelError> {
        let not_found = || CancelError::NotFound(task_id.to_owned());
        let task = self
            .task_for(caller, task_id)
            .await?
            .ok_or_else(not_found)?;
        if task.state == inbox::CANCELED {
            return Ok(task);
        }
        if task.state != inbox::SUBMITTED && task.state != inbox::WORKING {
            return Err(CancelError::NotCancelable {
                id: task.task_id,
                state: task.state,
            });
        }
        let now = self.clock.now();
        let tx = self.db.begin_write().await?;
        let moved = inbox::advance(
            &*tx,
            task_id,
            &task.state,
            inbox::CANCELED,
            inbox::Outcome {
                message: Some("canceled by the group that sent it"),
                ..inbox::Outcome::default()
            },
            now,
        )
        .await?;
        if moved {
            append_to_stream(
                &*tx,
                &task_stream(task_id),
                vec![NewEvent {
                    proposal_id: None,
                    order_id: None,
                    actor: format!("group:{caller}"),
                    kind: "gateway.task_canceled".to_owned(),
                    from_status: Some(task.state.clone()),
                    to_status: Some(inbox::CANCELED.to_owned()),
                    payload: json!({ "task_key": task.task_key }),
                    at: now,
                }],
            )
            .await?;
            // The desk passes the cancel on to whatever this task delegated.
            storage::work::enqueue(
                &*tx,
                &[work_items::answer_again(task_id, "canceled", now)],
                now,
            )
            .await?;
            tx.commit().await?;
            self.wake.lane(super::GATEWAY_LANE);
            self.changed.notify_waiters();
        } else {
            // It moved meanwhile (answered, or canceled by a racing call):
            // what it is now is the answer.
            tx.rollback().await?;
            let now_is = self
                .task_for(caller, task_id)
                .await?
                .ok_or_else(not_found)?;
            if now_is.state != inbox::CANCELED {
                return Err(CancelError::NotCancelable {
                    id: now_is.task_id,
                    state: now_is.state,
                });
            }
            return Ok(now_is);
        }
        self.task_for(caller, task_id).await?.ok_or_else(not_found)
    }

    /// The inbox task `task_id`, if there is one.
    ///
    /// # Errors
    /// Database failures.
    pub async fn task(&self, task_id: &str) -> Result<Option<InboxTaskView>, StorageError> {
        inbox::get(self.db.conn(), task_id)
            .await?
            .map(InboxTaskView::read)
            .transpose()
    }

    /// Receives the signed envelope `raw`, as it arrived.
    ///
    /// # Errors
    /// [`ReceiveError::Refused`] with the first check that failed (and the
    /// inbox's own: a task key reused for another envelope, a nonce used
    /// before), or a storage failure (nothing was accepted).
    pub async fn receive(&self, raw: &Value) -> Result<ReceivedTask, ReceiveError> {
        let now = self.clock.now();
        let mut trust = trust::load(self.db.conn()).await?;
        // A route that claims this group was passed embeds a link this
        // group signed: its own keys verify it, and the route check then
        // refuses the cycle by name (rather than as an unknown key). Read
        // only then: with a remote broker, publishing is a network call.
        let claims_me = raw["envelope"]["route"]
            .as_array()
            .is_some_and(|route| route.iter().any(|g| g.as_str() == Some(self.me.as_str())));
        if claims_me && let Some(keys) = &self.own_keys {
            match keys.published().await {
                Ok(published) => {
                    for (key, pinned) in published {
                        trust.pins.pin(key, pinned);
                    }
                }
                // Unverifiable then: refused for the unknown key, as before.
                Err(error) => {
                    tracing::warn!(%error, "own keys unreadable for a chain naming this group")
                }
            }
        }
        let admission = Admission {
            me: &self.me,
            allowlist: &trust.allowlist,
            pins: &trust.pins,
            kinds: self.kinds.as_ref(),
            replay: self.replay,
            max_depth: self.max_depth,
        };
        match admission.admit(raw, now) {
            Ok(signed) => self.save(raw, &signed, now).await,
            Err(refusal) => Err(self.refuse(raw, refusal).await),
        }
    }

    pub(super) async fn save(
        &self,
        raw: &Value,
        signed: &SignedEnvelope,
        now: domain::Timestamp,
    ) -> Result<ReceivedTask, ReceiveError> {
        let envelope = &signed.envelope;
        let unsigned = super::receive_plain::is_unsigned(signed);
        let (id, digest) = (new_id("gtk"), envelope_digest(raw));
        let stored = raw.to_string();
        let tx = self.db.begin_write().await?;
        let accepted = inbox::accept(
            &*tx,
            NewInboxTask {
                id: &id,
                sender_group: envelope.from.as_str(),
                task_key: envelope.task_key.as_str(),
                nonce: &envelope.nonce,
                root_key: envelope.root_key.as_str(),
                parent_key: envelope.parent_key.as_ref().map(|key| key.as_str()),
                kind: envelope.kind.as_str(),
                envelope: &stored,
                envelope_digest: &digest,
                created_at: envelope.created,
                received_at: now,
            },
        )
        .await?;
        let task = match accepted {
            Accepted::New(task) => task,
            Accepted::Resent(task) => {
                tx.rollback().await?;
                return Ok(ReceivedTask {
                    task: InboxTaskView::read(task)?,
                    resent: true,
                });
            }
            Accepted::KeyReused(earlier)
                if unsigned && super::receive_plain::same_plain_task(&earlier, signed) =>
            {
                // A plain message delivered again (or twice at once): the
                // task it made. Its envelope is rebuilt per delivery, so
                // the inbox sees another digest; kind and input decide.
                tx.rollback().await?;
                return Ok(ReceivedTask {
                    task: InboxTaskView::read(earlier)?,
                    resent: true,
                });
            }
            Accepted::KeyReused(_) => {
                tx.rollback().await?;
                let refusal = Refusal::KeyReused {
                    task_key: envelope.task_key.clone(),
                };
                return Err(self.refuse(raw, refusal).await);
            }
            Accepted::NonceReused { .. } => {
                tx.rollback().await?;
                return Err(self
                    .refuse(raw, Refusal::Replayed(envelope.nonce.clone()))
                    .await);
            }
        };
        append_to_stream(
            &*tx,
            &task_stream(&task.id),
            vec![NewEvent {
                proposal_id: None,
                order_id: None,
                actor: format!("group:{}", envelope.from),
                kind: "gateway.task_received".to_owned(),
                from_status: None,
                to_status: Some(task.state.clone()),
                payload: json!({
                    "task_key": envelope.task_key,
                    "kind": envelope.kind,
                    "from": envelope.from,
                    "root_key": envelope.root_key,
                    "parent_key": envelope.parent_key,
                    "route": envelope.route,
                    "depth": envelope.depth,
                    "budget": envelope.budget,
                    // A plain peer's task: no key signed it.
                    "signer": (!unsigned).then(|| envelope.signer.to_string()),
                    "signature_verified": !unsigned,
                    "envelope_digest": digest,
                }),
                at: now,
            }],
        )
        .await?;
        storage::work::enqueue(&*tx, &[work_items::answer(&task.id, now)], now).await?;
        tx.commit().await?;
        self.wake.lane(super::GATEWAY_LANE);
        Ok(ReceivedTask {
            task: InboxTaskView::read(task)?,
            resent: false,
        })
    }

    /// Journals `refusal` with what the envelope claimed (it may be a
    /// forgery: the claims are recorded as claims) and returns it as the
    /// answer. A refusal that cannot be journaled is answered as a storage
    /// failure, so the sender retries rather than taking a refusal nobody
    /// recorded as final.
    pub(super) async fn refuse(&self, raw: &Value, refusal: Refusal) -> ReceiveError {
        // At most a short string per claim: a hostile sender does not get
        // to write megabytes into the journal.
        let claimed = |field: &str| match raw["envelope"][field].as_str() {
            Some(text) => Value::String(text.chars().take(128).collect()),
            None => Value::Null,
        };
        let event = NewEvent {
            proposal_id: None,
            order_id: None,
            actor: "system:gateway".to_owned(),
            kind: "gateway.task_refused".to_owned(),
            from_status: None,
            to_status: None,
            payload: json!({
                "code": refusal.code(),
                "reason": refusal.to_string(),
                "claimed_from": claimed("from"),
                "claimed_task_key": claimed("task_key"),
                "claimed_kind": claimed("kind"),
            }),
            at: self.clock.now(),
        };
        let journaled = async {
            let tx = self.db.begin_write().await?;
            append_to_stream(&*tx, GATEWAY_STREAM, vec![event]).await?;
            tx.commit().await
        };
        match journaled.await {
            Ok(()) => ReceiveError::Refused(refusal),
            Err(error) => ReceiveError::Storage(error),
        }
    }
}
