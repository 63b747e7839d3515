//! The relay: delivers outbox tasks to their peers and follows each to its
//! end. Every peer answer is read as the outside world deserves: an answer
//! that says nothing certain (unreachable, timed out, malformed) is retried
//! with backoff and dead-lettered for a person after the last attempt; only
//! the peer's own decision (a refusal, a final state) is recorded as one. A
//! result is recorded only if it is valid against the kind's result schema.

use super::send::Sender;
use super::work_items;
use connectors::a2a::{A2aClient, PeerError, PeerTask};
use gateway::answer::{self, SignedAnswer};
use gateway::{EXTENSION, GroupName, KeyPins, TaskKey, TaskKind};
use runner::{Handler, Job, JobError, RunnerBuilder};
use serde_json::{Value, json};
use storage::StorageError;
use storage::gateway::outbox::{self, Change, OutboxTask};
use storage::gateway::peers;
use storage::journal::{NewEvent, append_to_stream, task_stream};
use storage::work::NewWork;

/// How long a peer token sent with `GetTask` lives.
const TOKEN_SECONDS: i64 = 120;

#[derive(Clone)]
pub(super) struct Relay {
    pub sender: Sender,
    pub client: A2aClient,
    /// This group: the answers it takes are addressed to it.
    pub me: GroupName,
}

pub(super) fn register(relay: &Relay, builder: RunnerBuilder) -> RunnerBuilder {
    builder
        .handle(work_items::RELAY, Deliver(relay.clone()))
        .handle(work_items::POLL, Follow(relay.clone()))
        .handle(work_items::CANCEL, CancelAtPeer(relay.clone()))
}

fn retry(error: impl std::fmt::Display) -> JobError {
    JobError::Retry(error.to_string())
}

/// One step of a task: the row's change, its journal event, and the next
/// look at the peer, if one is due.
struct Step {
    change: Change,
    event: &'static str,
    payload: Value,
    next: Option<NewWork>,
}

impl Relay {
    async fn load(&self, job: &Job) -> Result<OutboxTask, JobError> {
        let id = job.item.payload["outbox_id"]
            .as_str()
            .ok_or_else(|| JobError::Dead("the item names no outbox task".to_owned()))?;
        outbox::get(self.sender.db.conn(), id)
            .await
            .map_err(retry)?
            .ok_or_else(|| JobError::Dead(format!("outbox task {id} does not exist")))
    }

    /// The peer's endpoint; retried while no admin has said where it is.
    async fn endpoint(&self, group: &str) -> Result<String, JobError> {
        peers::get(self.sender.db.conn(), group)
            .await
            .map_err(retry)?
            .map(|peer| peer.url)
            .ok_or_else(|| {
                JobError::Retry(format!(
                    "no address is set for group {group}: an admin sets it with \
                     `countersign gateway peer --group {group} --url <its /a2a endpoint>`"
                ))
            })
    }

    /// Records `step` if the task is still as `task` was read; false when
    /// another worker recorded something first.
    async fn record(&self, task: &OutboxTask, step: Step) -> Result<bool, StorageError> {
        let sender = &self.sender;
        let now = sender.clock.now();
        let tx = sender.db.begin_write().await?;
        let state = step.change.state;
        if !outbox::advance(&*tx, &task.id, task.state_version, step.change, now).await? {
            tx.rollback().await?;
            return Ok(false);
        }
        append_to_stream(
            &*tx,
            &task_stream(&task.id),
            vec![NewEvent {
                proposal_id: None,
                order_id: None,
                actor: format!("group:{}", task.to_group),
                kind: step.event.to_owned(),
                from_status: Some(task.state.clone()),
                to_status: Some(state.to_owned()),
                payload: step.payload,
                at: now,
            }],
        )
        .await?;
        let mut next: Vec<NewWork> = step.next.iter().cloned().collect();
        // A child's end is what its parent's answer waits for.
        let parent = task.subject.as_deref().and_then(super::send::parent_of);
        if let (true, Some(parent)) = (outbox::is_final(state), parent) {
            next.push(work_items::answer_again(
                parent,
                &format!("child:{}", task.id),
                now,
            ));
        }
        if !next.is_empty() {
            storage::work::enqueue(&*tx, &next, now).await?;
        }
        tx.commit().await?;
        sender.changed.notify_waiters();
        if parent.is_some() {
            sender.wake.lane(super::GATEWAY_LANE);
        }
        if let Some(next) = &step.next {
            self.wake_at(next, now);
        }
        Ok(true)
    }

    /// Wakes this process's gateway lane when `next` falls due.
    fn wake_at(&self, next: &NewWork, now: domain::Timestamp) {
        let wait = (next.run_after - now).to_std().unwrap_or_default();
        self.sender.wake.lane_after(super::GATEWAY_LANE, wait);
    }

    /// Records the task canceled (`why`).
    async fn canceled(&self, task: &OutboxTask, why: &str) -> Result<Option<String>, JobError> {
        let step = Step {
            change: Change {
                state: outbox::CANCELED,
                error: Some(why.to_owned()),
                ..Change::default()
            },
            event: "gateway.task_canceled",
            payload: json!({ "reason": why, "peer_task_id": task.remote_task_id }),
            next: None,
        };
        self.record(task, step).await.map_err(retry)?;
        Ok(Some(why.to_owned()))
    }

    /// A cancel asked for while the task was on its way: the peer holds it
    /// now (as `peer_task_id`), so record that and tell the peer to cancel.
    async fn cancel_if_asked_meanwhile(
        &self,
        id: &str,
        peer_task_id: &str,
    ) -> Result<(), JobError> {
        let sender = &self.sender;
        let task = outbox::get(sender.db.conn(), id)
            .await
            .map_err(retry)?
            .ok_or_else(|| JobError::Dead(format!("outbox task {id} vanished")))?;
        if task.state != outbox::CANCELING || task.remote_task_id.is_some() {
            return Ok(());
        }
        let now = sender.clock.now();
        let tx = sender.db.begin_write().await.map_err(retry)?;
        let change = Change {
            state: outbox::CANCELING,
            remote_task_id: Some(peer_task_id.to_owned()),
            ..Change::default()
        };
        if outbox::advance(&*tx, id, task.state_version, change, now)
            .await
            .map_err(retry)?
        {
            storage::work::enqueue(&*tx, &[work_items::cancel(id, now)], now)
                .await
                .map_err(retry)?;
        }
        tx.commit().await.map_err(retry)?;
        sender.wake.lane(super::GATEWAY_LANE);
        Ok(())
    }

    /// A peer token for `group`, signed with this group's current key.
    async fn token_for(&self, group: &str) -> Result<String, JobError> {
        let keys = &self.sender.keys;
        let key = keys.current().await.map_err(retry)?;
        let to = GroupName::parse(group).map_err(|e| JobError::Dead(e.to_string()))?;
        let to_sign =
            gateway::peer_token::to_issue(&key, &to, self.sender.clock.now(), TOKEN_SECONDS);
        keys.compact(to_sign).await.map_err(retry)
    }

    /// Records the deadline passing without a final answer.
    async fn expire(&self, task: &OutboxTask) -> Result<Option<String>, JobError> {
        let why = "no final answer came before the task's deadline";
        self.record(
            task,
            Step {
                change: Change {
                    state: outbox::EXPIRED,
                    error: Some(why.to_owned()),
                    ..Change::default()
                },
                event: "gateway.task_expired",
                payload: json!({ "reason": why, "last_state": task.state }),
                next: None,
            },
        )
        .await
        .map_err(retry)?;
        Ok(Some(why.to_owned()))
    }

    /// Records what the peer reports of the task; `look` is the look that
    /// follows if the task is not final.
    async fn follow(
        &self,
        task: &OutboxTask,
        peer: &PeerTask,
        look: u32,
    ) -> Result<Option<String>, JobError> {
        let now = self.sender.clock.now();
        let step = match peer.state.as_str() {
            "completed" => self.completed(task, peer).await?,
            "failed" | "rejected" | "canceled" => Step {
                change: Change {
                    state: if peer.state == "canceled" {
                        outbox::CANCELED
                    } else {
                        outbox::FAILED
                    },
                    error: Some(
                        peer.message
                            .clone()
                            .unwrap_or_else(|| "the peer gave no reason".to_owned()),
                    ),
                    remote_task_id: Some(peer.id.clone()),
                    ..Change::default()
                },
                event: "gateway.task_ended",
                payload: json!({ "peer_state": peer.state, "message": peer.message }),
                next: None,
            },
            // Cancel asked for: the cancel item tells the peer; no more
            // looks until it answers.
            other if task.state == outbox::CANCELING => {
                return Ok(Some(format!(
                    "the peer reports {other}; a cancel is on its way"
                )));
            }
            // Submitted, working, or a state this group does not act on
            // (input-required, auth-required): look again later.
            other => {
                // Never backwards: a peer that says `submitted` after
                // `working` leaves the task working here.
                let state = if other == "submitted" && task.state != outbox::WORKING {
                    outbox::DELIVERED
                } else {
                    outbox::WORKING
                };
                if task.state == state && task.remote_task_id.as_deref() == Some(peer.id.as_str()) {
                    // Nothing new: only the next look is written.
                    let next = work_items::poll(&task.id, look, now);
                    let tx = self.sender.db.begin_write().await.map_err(retry)?;
                    storage::work::enqueue(&*tx, std::slice::from_ref(&next), now)
                        .await
                        .map_err(retry)?;
                    tx.commit().await.map_err(retry)?;
                    self.wake_at(&next, now);
                    return Ok(Some(format!("the peer reports {other}")));
                }
                Step {
                    change: Change {
                        state,
                        remote_task_id: Some(peer.id.clone()),
                        ..Change::default()
                    },
                    event: if task.state == outbox::QUEUED {
                        "gateway.task_delivered"
                    } else {
                        "gateway.task_working"
                    },
                    payload: json!({ "peer_task_id": peer.id, "peer_state": other }),
                    next: Some(work_items::poll(&task.id, look, now)),
                }
            }
        };
        let note = format!("{} → {}", task.state, step.change.state);
        self.record(task, step).await.map_err(retry)?;
        Ok(Some(note))
    }

    /// A completed task: its result if the answer is signed by a pinned
    /// key of the peer and the result is valid against the kind's result
    /// schema; else a failure that says why (the peer's claim is kept in
    /// the journal event, not as a result). An answer signed by a key not
    /// pinned here (yet) is asked for again, so an admin can pin it.
    async fn completed(&self, task: &OutboxTask, peer: &PeerTask) -> Result<Step, JobError> {
        let step = match self.check_answer(task, peer).await? {
            Ok(Taken::Unsigned(result)) => Step {
                change: Change {
                    state: outbox::COMPLETED,
                    remote_task_id: Some(peer.id.clone()),
                    result: Some(result.to_string()),
                    signed_answer: None,
                    error: None,
                },
                event: "gateway.task_completed",
                payload: json!({
                    "peer_task_id": peer.id,
                    "result": result,
                    "signature_verified": false,
                    "unsigned": "the pair is allowed without signatures: nothing shows this came from the peer",
                }),
                next: None,
            },
            Ok(Taken::Signed(answer)) => Step {
                change: Change {
                    state: outbox::COMPLETED,
                    remote_task_id: Some(peer.id.clone()),
                    result: Some(answer.answer.result.to_string()),
                    signed_answer: Some(serde_json::to_string(&answer).map_err(retry)?),
                    error: None,
                },
                event: "gateway.task_completed",
                payload: json!({
                    "peer_task_id": peer.id,
                    "result": answer.answer.result,
                    "spent": answer.answer.spent,
                    "signed_by": answer.answer.signer.to_string(),
                    "signature_verified": true,
                }),
                next: None,
            },
            Err(NotTaken { event, why }) => Step {
                change: Change {
                    state: outbox::FAILED,
                    remote_task_id: Some(peer.id.clone()),
                    error: Some(why.clone()),
                    ..Change::default()
                },
                event,
                payload: json!({
                    "peer_task_id": peer.id,
                    "reason": why,
                    "claimed_result": peer.result,
                }),
                next: None,
            },
        };
        Ok(step)
    }

    async fn check_answer(
        &self,
        task: &OutboxTask,
        peer: &PeerTask,
    ) -> Result<Result<Taken, NotTaken>, JobError> {
        let dead = |e: gateway::NameError| JobError::Dead(e.to_string());
        let kind = TaskKind::parse(&task.kind).map_err(dead)?;
        let Some(raw) = peer
            .result_metadata
            .as_ref()
            .and_then(|metadata| metadata.get(EXTENSION))
        else {
            return self.unsigned(task, peer, &kind).await;
        };
        let task_key = TaskKey::parse(&task.task_key).map_err(dead)?;
        let peer_group = GroupName::parse(&task.to_group).map_err(dead)?;
        let trust = super::trust::load(self.sender.db.conn())
            .await
            .map_err(retry)?;
        let signer = raw["answer"]["signer"].clone();
        if let Ok(signer) = serde_json::from_value::<gateway::KeyRef>(signer)
            && signer.group == peer_group
            && trust.pins.pinned(&signer).is_none()
        {
            return Err(JobError::Retry(format!(
                "the answer is signed with {signer}, which is not pinned here: pin it \
                 (countersign gateway pin-key) and the answer is taken"
            )));
        }
        let expected = answer::Expected {
            task_key: &task_key,
            from: &peer_group,
            to: &self.me,
        };
        let now = self.sender.clock.now();
        let signed = match answer::verify(raw, expected, &trust.pins, now) {
            Ok(signed) => signed,
            Err(why) => {
                return Ok(Err(NotTaken::result(format!(
                    "the answer's signature is not accepted: {why}"
                ))));
            }
        };
        if signed.answer.state != outbox::COMPLETED {
            return Ok(Err(NotTaken::result(format!(
                "the peer reports the task completed but signed it {}",
                signed.answer.state
            ))));
        }
        // The peer's own signed account of what it spent, charged to the
        // budget this group gave the task.
        let envelope = gateway::SignedEnvelope::from_stored(&task.envelope).map_err(|e| {
            JobError::Dead(format!("the envelope of {} does not read: {e}", task.id))
        })?;
        if let Err(excess) = envelope.envelope.budget.after(&signed.answer.spent) {
            return Ok(Err(NotTaken {
                event: "gateway.task_overspent",
                why: format!(
                    "{} spent more than the task's budget: {excess}",
                    task.to_group
                ),
            }));
        }
        Ok(self
            .check_result(&kind, &signed.answer.result)
            .map(|()| Taken::Signed(Box::new(signed))))
    }

    /// An answer without a signature: taken only where an admin allowed
    /// this pair without signatures, and then marked unsigned.
    async fn unsigned(
        &self,
        task: &OutboxTask,
        peer: &PeerTask,
        kind: &TaskKind,
    ) -> Result<Result<Taken, NotTaken>, JobError> {
        let allowed = storage::gateway::unsigned::allows(
            self.sender.db.conn(),
            self.me.as_str(),
            &task.to_group,
            kind.as_str(),
        )
        .await
        .map_err(retry)?;
        if !allowed {
            return Ok(Err(NotTaken::result(format!(
                "the peer's answer is not signed: nothing shows it came from the peer (an \
                 admin may allow {} → {}: {kind} without signatures, for a plain A2A peer)",
                self.me, task.to_group
            ))));
        }
        let Some(result) = &peer.result else {
            return Ok(Err(NotTaken::result(
                "the peer reports the task completed without a result".to_owned(),
            )));
        };
        Ok(self
            .check_result(kind, result)
            .map(|()| Taken::Unsigned(result.clone())))
    }

    fn check_result(&self, kind: &TaskKind, result: &Value) -> Result<(), NotTaken> {
        match self.sender.kinds.check_result(kind, result) {
            Some(Ok(())) => Ok(()),
            Some(Err(why)) => Err(NotTaken::result(format!(
                "the result does not match {kind}'s schema: {why}"
            ))),
            None => Err(NotTaken::result(format!(
                "{kind} is not a kind this group knows"
            ))),
        }
    }
}

/// A peer's answer as taken: signed and verified, or unsigned on a pair an
/// admin allowed without signatures.
enum Taken {
    Signed(Box<SignedAnswer>),
    Unsigned(Value),
}

/// Why a peer's "completed" is not taken as a result, and the journal
/// event that records it.
struct NotTaken {
    event: &'static str,
    why: String,
}

impl NotTaken {
    /// The answer itself is not acceptable (unsigned, changed, off-schema).
    fn result(why: String) -> Self {
        NotTaken {
            event: "gateway.task_result_refused",
            why,
        }
    }
}

/// Delivers a queued task (`SendMessage`); the same envelope on every try.
struct Deliver(Relay);

#[async_trait::async_trait]
impl Handler for Deliver {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let relay = &self.0;
        let task = relay.load(job).await?;
        if task.state == outbox::CANCELING && task.remote_task_id.is_none() {
            return relay
                .canceled(&task, "canceled before it was delivered")
                .await;
        }
        if task.state != outbox::QUEUED {
            return Ok(Some(format!("already {}", task.state)));
        }
        if relay.sender.clock.now() > task.deadline {
            return relay.expire(&task).await;
        }
        let endpoint = relay.endpoint(&task.to_group).await?;
        let envelope: Value = serde_json::from_str(&task.envelope)
            .map_err(|e| JobError::Dead(format!("the stored envelope is not JSON: {e}")))?;
        let answer = relay
            .client
            .send_message(
                &endpoint,
                &task.id,
                &envelope["envelope"]["input"],
                &[EXTENSION],
                json!({ EXTENSION: envelope }),
            )
            .await;
        match answer {
            Ok(peer) => {
                let note = relay.follow(&task, &peer, 1).await?;
                relay.cancel_if_asked_meanwhile(&task.id, &peer.id).await?;
                Ok(note)
            }
            Err(PeerError::Refused {
                code,
                reason,
                message,
            }) => {
                let error = format!("{}: {message}", reason.as_deref().unwrap_or("refused"));
                let step = Step {
                    change: Change {
                        state: outbox::REFUSED,
                        error: Some(error.clone()),
                        ..Change::default()
                    },
                    event: "gateway.task_refused_by_peer",
                    payload: json!({ "code": code, "reason": reason, "message": message }),
                    next: None,
                };
                relay.record(&task, step).await.map_err(retry)?;
                Ok(Some(error))
            }
            Err(other) => Err(retry(other)),
        }
    }
}

/// Asks the peer how a delivered task stands (`GetTask`, with a bearer
/// token signed by this group's key).
struct Follow(Relay);

#[async_trait::async_trait]
impl Handler for Follow {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let relay = &self.0;
        let task = relay.load(job).await?;
        if outbox::is_final(&task.state) {
            return Ok(Some(format!("already {}", task.state)));
        }
        let now = relay.sender.clock.now();
        if now > task.deadline {
            return relay.expire(&task).await;
        }
        let Some(remote) = task.remote_task_id.as_deref() else {
            return Err(JobError::Dead(
                "the task was never acknowledged: nothing to ask about".to_owned(),
            ));
        };
        let look = job.item.payload["look"].as_u64().unwrap_or(1);
        let look = u32::try_from(look).unwrap_or(u32::MAX);
        let endpoint = relay.endpoint(&task.to_group).await?;
        let token = relay.token_for(&task.to_group).await?;
        match relay.client.get_task(&endpoint, remote, &token).await {
            Ok(peer) if peer.id == remote => relay.follow(&task, &peer, look + 1).await,
            Ok(peer) => Err(retry(format!(
                "asked for task {remote}, the peer answered about {}",
                peer.id
            ))),
            Err(PeerError::Refused { code: -32001, .. }) => {
                let why = "the peer no longer knows the task";
                let step = Step {
                    change: Change {
                        state: outbox::FAILED,
                        error: Some(why.to_owned()),
                        ..Change::default()
                    },
                    event: "gateway.task_lost_by_peer",
                    payload: json!({ "peer_task_id": remote }),
                    next: None,
                };
                relay.record(&task, step).await.map_err(retry)?;
                Ok(Some(why.to_owned()))
            }
            Err(other) => Err(retry(other)),
        }
    }
}

/// Tells the peer to cancel a task it holds (`CancelTask`), until it
/// acknowledges. A task that ended there first keeps its end: it is asked
/// for and recorded as the peer reports it.
struct CancelAtPeer(Relay);

#[async_trait::async_trait]
impl Handler for CancelAtPeer {
    async fn run(&self, job: &Job) -> Result<Option<String>, JobError> {
        let relay = &self.0;
        let task = relay.load(job).await?;
        if task.state != outbox::CANCELING {
            return Ok(Some(format!("already {}", task.state)));
        }
        let Some(remote) = task.remote_task_id.clone() else {
            return Err(JobError::Dead(
                "the peer never acknowledged the task: nothing to cancel there".to_owned(),
            ));
        };
        let endpoint = relay.endpoint(&task.to_group).await?;
        let token = relay.token_for(&task.to_group).await?;
        match relay.client.cancel_task(&endpoint, &remote, &token).await {
            Ok(peer) if peer.state == "canceled" => {
                relay
                    .canceled(&task, "canceled; the peer acknowledged")
                    .await
            }
            Ok(peer) => Err(retry(format!(
                "the peer answered the cancel with {} (not canceled)",
                peer.state
            ))),
            Err(PeerError::Refused { code: -32002, .. }) => {
                // It ended at the peer before the cancel arrived: its end
                // is what happened.
                let peer = relay
                    .client
                    .get_task(&endpoint, &remote, &token)
                    .await
                    .map_err(retry)?;
                if !matches!(
                    peer.state.as_str(),
                    "completed" | "failed" | "rejected" | "canceled"
                ) {
                    return Err(retry(format!(
                        "the peer says the task cannot be canceled yet reports it {}",
                        peer.state
                    )));
                }
                relay.follow(&task, &peer, 1).await
            }
            Err(PeerError::Refused { code: -32001, .. }) => {
                relay
                    .canceled(&task, "the peer no longer knows the task")
                    .await
            }
            Err(other) => Err(retry(other)),
        }
    }
}
