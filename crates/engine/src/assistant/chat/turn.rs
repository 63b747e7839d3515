//! One turn of a conversation: claim it, run the agents, save the
//! transcript and the turn's events together, release it.
//!
//! The turn runs in its own task, so a client that disconnects mid-turn
//! neither cancels it half-way nor leaves the conversation claimed; only
//! Stop ends a turn early, and then cleanly.

use super::queue::{
    Delivery, Priority, QueuedMessage, cancel_what_a_stopped_turn_left, combined_text,
};
use super::{
    ChatError, RENEW_EVERY, STOP_POLL, TURN_LEASE, TurnEnd, TurnResult, checked_message,
    decode_state, may_write,
};
use crate::assistant::Chat;
use crate::assistant::ledger::{CustomerMessage, Ledger};
use crate::assistant::running::Registration;
use crate::assistant::scope::TurnScope;
use crate::assistant::sink::TurnEvents;
use crate::assistant::subagents::{Roster, TurnSubagents};
use crate::assistant::tools::{
    GET_ORDER, INVESTIGATE_ORDERS, Investigation, PREPARE_REFUND, PreparedProposal, RECORD_UNKNOWN,
    RecordedQuestion, SEARCH_POLICY,
};
use crate::clock::Clock;
use crate::core::Actor;
use crate::live::LiveEvent;
use agents::{
    ConversationState, Event, Principal, Provenance, Role, RunError, SubagentLane, Subagents,
    ToolContext, TurnControl, TurnOutcome, UserMessage, found_results,
};
use std::sync::{Arc, Mutex, PoisonError};
use storage::Database;
use storage::conversation_messages::{self as messages, NewMessage, StoredMessage};
use storage::conversations::{NewEvent, SavedTurn, StoredConversation, TurnRequest};
use storage::ids::new_id;
use tokio::sync::broadcast;
use tokio::time::Instant;
use tracing::Instrument;

impl Chat {
    /// Sends the actor's `message` to conversation `conversation_id`. It is
    /// stored first; if no turn runs, its own turn runs and the reply comes
    /// back ([`Delivery::Answered`]); if one runs, it waits with its
    /// `priority` ([`Delivery::Queued`]) and goes into the next turn.
    /// `control` stops the message's own turn (so does
    /// [`Chat::stop_turn`]).
    ///
    /// # Errors
    /// [`ChatError`]: an invalid message, a conversation the actor cannot
    /// see or write, a model that failed after its retries (the transcript
    /// is saved first), storage failures.
    #[tracing::instrument(skip_all, fields(conversation.id = %conversation_id))]
    pub async fn chat_turn(
        &self,
        actor: &Actor,
        conversation_id: &str,
        message: &str,
        priority: Priority,
        control: TurnControl,
    ) -> Result<Delivery, ChatError> {
        let message = checked_message(message)?.to_owned();
        let stored = self.readable(actor, conversation_id).await?;
        if !may_write(actor, &stored) {
            return Err(ChatError::ReadOnly(conversation_id.to_owned()));
        }
        // A person was asked for or holds the conversation: the message is
        // theirs and the agents stay silent (see `assistant::handover`).
        if let Some(kept) = self.message_for_person(&stored, &message, None).await? {
            return Ok(Delivery::Answered(kept));
        }
        let message_id = new_id("msg");
        let turn_id = new_id("trn");
        let now = self.now();
        // Read before writing (most conversations have nothing waiting): a
        // message that starts waiting after this read goes into the turn
        // after this one, taken by this turn's end.
        let others_waiting = messages::any_waiting(self.db.conn(), conversation_id).await?;
        let tx = self.db.begin_write().await?;
        let claimed = storage::conversations::claim_turn(
            &*tx,
            conversation_id,
            &turn_id,
            &message,
            now,
            now + TURN_LEASE,
        )
        .await?;
        let this = messages::insert(
            &*tx,
            NewMessage {
                id: &message_id,
                conversation_id,
                sender_id: &actor.user_id,
                priority: priority.as_str(),
                text: &message,
                received_at: now,
                carried_by: claimed.then_some(turn_id.as_str()),
            },
        )
        .await?;
        let carried = match (claimed, others_waiting) {
            (true, true) => {
                cancel_what_a_stopped_turn_left(&*tx, &stored, now).await?;
                messages::carry_waiting(&*tx, conversation_id, &turn_id).await?
            }
            (true, false) => vec![this],
            (false, _) => Vec::new(),
        };
        if carried.len() > 1 {
            storage::conversations::set_message_being_answered(
                &*tx,
                conversation_id,
                &turn_id,
                &combined_text(&carried),
            )
            .await?;
        }
        tx.commit().await?;
        if !claimed {
            let preempting = priority == Priority::Now && self.preempt(conversation_id).await?;
            if priority == Priority::ThisTurn {
                // At once if the turn runs here; its claim watcher sees it
                // otherwise.
                self.assistant.running().steer(conversation_id);
            }
            if priority != Priority::Later {
                // The replica running the turn reads its row at once.
                self.announce(&stored);
            }
            // The running turn may have ended between its last look at the
            // queue and this commit: a turn is started here then (nothing
            // happens while it still runs; it takes the message when it ends).
            self.drain_soon(conversation_id);
            return Ok(Delivery::Queued(QueuedMessage {
                id: message_id,
                conversation_id: conversation_id.to_owned(),
                priority,
                preempting,
            }));
        }
        self.run_claimed(actor, &stored, turn_id, carried, control, Caller::Waiting)
            .await
            .map(Delivery::Answered)
    }

    /// Runs the turn `turn_id`, which holds the conversation and carries
    /// `carried`, in its own task, and returns its result.
    pub(super) async fn run_claimed(
        &self,
        actor: &Actor,
        stored: &StoredConversation,
        turn_id: String,
        carried: Vec<StoredMessage>,
        control: TurnControl,
        caller: Caller,
    ) -> Result<TurnResult, ChatError> {
        let lanes = self.assistant.running().register(
            &stored.id,
            &control,
            self.assistant.subagent_limit(),
        );
        let job = TurnJob {
            chat: self.clone(),
            actor: actor.clone(),
            conversation_id: stored.id.clone(),
            turn_id,
            message: combined_text(&carried),
            carried: carried.into_iter().map(|message| message.id).collect(),
            stored: stored.clone(),
            caller,
            steered: Arc::default(),
            control,
            roster: lanes.subagents,
            lane: lanes.lane,
            _registration: lanes.registration,
        };
        let started = Instant::now();
        let stop = job.control.clone();
        // In the caller's span, so every line of the turn carries its
        // conversation.id.
        let _interactive = self.activity.enter();
        let result = match self
            .tasks
            .spawn("chat turn", job.run().in_current_span())
            .await
        {
            Ok(result) => result,
            Err(error) => {
                // The claim lapses with its lease; the transcript stays as
                // it was before this turn, the messages wait again.
                tracing::error!(%error, "a chat turn task failed");
                Err(ChatError::Interrupted)
            }
        };
        record_timing(started, &stop, &result);
        result
    }

    /// Gives a claim back without a turn, and what it carried to the queue.
    pub(super) async fn release_turn(&self, id: &str, turn_id: &str) {
        let released = async {
            let tx = self.db.begin_write().await?;
            messages::release(&*tx, id, turn_id).await?;
            storage::conversations::release_claim(&*tx, id, turn_id).await?;
            tx.commit().await
        }
        .await;
        if let Err(error) = released {
            tracing::warn!(%error, "releasing a turn's claim failed; it lapses with its lease");
        }
    }
}

/// Whether someone awaits the turn's result (the sender of its message),
/// or nobody does (a turn for messages that waited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    Waiting,
    Gone,
}

/// The turn's latency by how it ended and, if Stop was pressed, how long
/// it took from the Stop to the saved end (`/metrics`).
fn record_timing(started: Instant, stop: &TurnControl, result: &Result<TurnResult, ChatError>) {
    let end = match result {
        Ok(result) => match result.end {
            TurnEnd::Answered => "answered",
            TurnEnd::Stopped { .. } => "stopped",
            TurnEnd::StepLimit { .. } => "step_limit",
            TurnEnd::ForPerson => "for_person",
        },
        Err(_) => "failed",
    };
    metrics::histogram!("countersign_chat_turn_duration_seconds", "end" => end)
        .record(started.elapsed());
    if let Some(requested) = stop.requested_at() {
        metrics::histogram!("countersign_chat_stop_duration_seconds").record(requested.elapsed());
    }
}

struct TurnJob {
    chat: Chat,
    actor: Actor,
    conversation_id: String,
    turn_id: String,
    /// What the model reads: the carried messages together.
    message: String,
    /// The ids of the messages this turn took in.
    carried: Vec<String>,
    /// The conversation as it was claimed (whom to tell when it is saved).
    stored: StoredConversation,
    caller: Caller,
    /// The messages given to the model while the turn ran (sent "for this
    /// turn"), recorded as taken when they were given.
    steered: Arc<Mutex<Vec<String>>>,
    control: TurnControl,
    /// The conversation's subagents running now (for Stop's receipt).
    roster: Roster,
    /// The conversation's subagent lane.
    lane: SubagentLane,
    _registration: Registration,
}

impl TurnJob {
    async fn run(self) -> Result<TurnResult, ChatError> {
        // Read after claiming: the previous turn may have saved meanwhile.
        let stored =
            match storage::conversations::get(self.chat.db.conn(), &self.conversation_id).await {
                Ok(Some(stored)) => stored,
                Ok(None) => return Err(ChatError::NotFound(self.conversation_id.clone())),
                Err(error) => {
                    self.release().await;
                    return Err(error.into());
                }
            };
        let mut state = match decode_state(&stored) {
            Ok(state) => state,
            Err(error) => {
                self.release().await;
                return Err(error);
            }
        };
        let mut ledger = Ledger::from_transcript(&self.conversation_id, state.messages());
        let sent_at = self.chat.now();
        ledger.customer_said(CustomerMessage {
            text: self.message.clone(),
            index: state.next_user_message_index(),
            at: Some(sent_at),
        });
        let sink = Arc::new(TurnEvents::default());
        let assistant = &self.chat.assistant;
        let subagents = TurnSubagents::new(
            Subagents::new(
                assistant.runner.clone(),
                Arc::clone(&assistant.workflow),
                self.lane.clone(),
                sink.clone(),
                state.turns() + 1,
            ),
            self.control.clone(),
            self.chat.tasks.clone(),
            self.roster.clone(),
            sink.clone(),
        );
        let scope = TurnScope::new(
            Arc::new(self.chat.clone()),
            self.actor.clone(),
            self.conversation_id.clone(),
            // As read after claiming: the visitor may have signed in since.
            stored.customer().map(str::to_owned),
            ledger,
        )
        .with_subagents(subagents.clone());
        let ctx = ToolContext::new(Principal {
            user_id: self.actor.user_id.clone(),
            roles: self
                .actor
                .roles
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect(),
            customer_id: stored.customer().map(str::to_owned),
        })
        .with_extension(scope.clone());
        let steering = QueueSteering {
            db: self.chat.db.clone(),
            conversation_id: self.conversation_id.clone(),
            turn_id: self.turn_id.clone(),
            scope: scope.clone(),
            taken: self.steered.clone(),
        };
        let control = self.control.clone().with_steering(Arc::new(steering));
        let before = state.messages().len();
        let watcher = self.chat.tasks.spawn(
            "turn claim watcher",
            watch_claim(
                self.chat.db.clone(),
                self.chat.clock.clone(),
                self.chat.live.subscribe(),
                self.conversation_id.clone(),
                self.turn_id.clone(),
                self.control.clone(),
            )
            .in_current_span(),
        );
        let outcome = assistant
            .runner
            .run_turn(
                &assistant.workflow,
                &mut state,
                UserMessage::new(self.message.as_str(), sent_at),
                &ctx,
                &control,
                sink.as_ref(),
            )
            .await;
        // Their events are the turn's: saved with it, once all have ended,
        // unless a newer message preempted the turn: then what it started
        // runs on in the background and is recorded when it ends.
        if !self.control.is_preempted() {
            subagents.wait_all().await;
        }
        watcher.abort();
        if let Err(RunError::UnknownActiveAgent { agent }) = &outcome {
            tracing::error!(%agent, "the conversation is held by an agent the workflow lacks");
            self.release().await;
            return Err(ChatError::Corrupt(self.conversation_id.clone()));
        }
        self.save(&state, &sink.take()).await?;
        let known = ctx
            .extension::<TurnScope>()
            .map(|scope| scope.ledger().evidence().to_vec())
            .unwrap_or_default();
        match outcome {
            Ok(outcome) => Ok(self.result(&state, before, &outcome, &known)),
            Err(RunError::Model {
                agent,
                step,
                source,
            }) => {
                tracing::warn!(%agent, step, error = %source, "the model failed");
                Err(ChatError::ModelFailed {
                    agent,
                    kind: source.kind().to_owned(),
                    message: source.to_string(),
                })
            }
            Err(RunError::UnknownActiveAgent { .. }) => {
                Err(ChatError::Corrupt(self.conversation_id.clone()))
            }
        }
    }

    /// Writes the transcript and the events, and releases the claim, in one
    /// transaction.
    async fn save(&self, state: &ConversationState, events: &[Event]) -> Result<(), ChatError> {
        let state_json = serde_json::to_string(state)
            .map_err(|e| ChatError::Storage(storage::StorageError::Corrupt(e.to_string())))?;
        let rows: Vec<NewEvent> = events.iter().map(event_row).collect();
        let tx = self.chat.db.begin_write().await?;
        let saved = storage::conversations::save_turn(
            &*tx,
            &self.conversation_id,
            &self.turn_id,
            SavedTurn {
                state: &state_json,
                active_agent: state.active_agent(),
                turns: i64::try_from(state.turns()).unwrap_or(i64::MAX),
                now: self.chat.now(),
            },
        )
        .await?;
        if !saved {
            return Err(ChatError::ClaimLost(self.conversation_id.clone()));
        }
        storage::conversations::insert_events(&*tx, &self.conversation_id, &rows).await?;
        let outcome = if self.carried.len() == 1 {
            messages::ANSWERED
        } else {
            messages::COLLECTED
        };
        let turn = i64::try_from(state.turns()).unwrap_or(i64::MAX);
        let now = self.chat.now();
        messages::settle(&*tx, &self.carried, &self.turn_id, outcome, turn, now).await?;
        let steered = self
            .steered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        messages::settle(&*tx, &steered, &self.turn_id, messages::STEERED, turn, now).await?;
        tx.commit().await?;
        if self.caller == Caller::Gone {
            // Nobody awaits this reply: its readers learn of it here.
            self.chat.announce(&self.stored);
        }
        // What arrived while this turn ran goes into the next one.
        self.chat.drain_soon(&self.conversation_id);
        Ok(())
    }

    /// Gives the claim back without saving (the turn never started); its
    /// messages wait again.
    async fn release(&self) {
        self.chat
            .release_turn(&self.conversation_id, &self.turn_id)
            .await;
    }

    /// The turn's result. Its evidence: what a proposal prepared in it
    /// cites; otherwise what the turn read, plus earlier readings the reply
    /// names by reference (a policy read in an earlier turn and quoted now).
    fn result(
        &self,
        state: &ConversationState,
        before: usize,
        outcome: &TurnOutcome,
        known: &[Provenance],
    ) -> TurnResult {
        let new = state.messages().get(before..).unwrap_or_default();
        let mut read: Vec<Provenance> = Vec::new();
        let mut cited: Option<Vec<Provenance>> = None;
        let mut proposal_ids = Vec::new();
        let mut questions = Vec::new();
        for found in found_results(new) {
            let (tool, value, provenance) = (found.tool, found.value, found.provenance);
            match tool {
                GET_ORDER | SEARCH_POLICY => {
                    for item in provenance {
                        read.retain(|known| known.source != item.source);
                        read.push(item);
                    }
                }
                RECORD_UNKNOWN => {
                    if let Ok(recorded) = serde_json::from_value::<RecordedQuestion>(value) {
                        questions.push(recorded.question);
                    }
                }
                PREPARE_REFUND => {
                    if let Ok(prepared) = serde_json::from_value::<PreparedProposal>(value) {
                        proposal_ids.push(prepared.proposal_id);
                        cited = Some(provenance);
                    }
                }
                INVESTIGATE_ORDERS => {
                    if let Ok(investigation) = serde_json::from_value::<Investigation>(value) {
                        for order in investigation.orders {
                            questions.extend(order.question.map(|q| q.question));
                            proposal_ids.extend(order.proposal.map(|p| p.proposal_id));
                        }
                    }
                    for item in provenance {
                        read.retain(|known| known.source != item.source);
                        read.push(item);
                    }
                }
                _ => {}
            }
        }
        let reply = new
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.content.trim().is_empty())
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let end = match outcome {
            TurnOutcome::Answered { .. } => TurnEnd::Answered,
            TurnOutcome::Stopped { during, .. } => TurnEnd::Stopped { during: *during },
            TurnOutcome::StepLimit { steps, .. } => TurnEnd::StepLimit { steps: *steps },
        };
        for item in known {
            if reply.contains(&item.source) && !read.iter().any(|r| r.source == item.source) {
                read.push(item.clone());
            }
        }
        TurnResult {
            conversation_id: self.conversation_id.clone(),
            turn: state.turns(),
            agent: outcome.agent().to_owned(),
            reply,
            end,
            evidence: cited.unwrap_or(read),
            proposal_id: proposal_ids.last().cloned(),
            proposal_ids,
            questions,
        }
    }
}

pub(super) fn event_row(event: &Event) -> NewEvent {
    let payload = serde_json::to_value(event).unwrap_or_default();
    let kind = payload
        .get("type")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    NewEvent {
        turn: i64::try_from(event.turn).unwrap_or(i64::MAX),
        agent: event.agent.clone(),
        kind,
        payload: payload.to_string(),
        at: event.at,
    }
}

/// Keeps the claim alive while the turn runs and lands a Stop made on
/// another replica, and the messages sent there for this turn: they set
/// the conversation's row and announce the change, which this reads at
/// once (on PostgreSQL the announcement crosses replicas by NOTIFY); the
/// row is also read every [`STOP_POLL`] in case an announcement is lost.
async fn watch_claim(
    db: Database,
    clock: Clock,
    mut changes: broadcast::Receiver<LiveEvent>,
    id: String,
    turn_id: String,
    control: TurnControl,
) {
    let mut renewed = Instant::now();
    loop {
        tokio::select! {
            () = tokio::time::sleep(STOP_POLL) => {}
            () = announced(&mut changes, &id) => {}
        }
        let seen = if renewed.elapsed() >= RENEW_EVERY {
            renewed = Instant::now();
            renew(&db, &clock, &id, &turn_id).await
        } else {
            storage::conversations::turn_request(db.conn(), &id, &turn_id).await
        };
        if matches!(seen, Ok(Some(TurnRequest::Continue)))
            && let Ok(true) = storage::conversation_messages::steering_waiting(db.conn(), &id).await
        {
            control.steering_waiting();
        }
        match seen {
            Ok(Some(TurnRequest::Continue)) => {}
            Ok(Some(TurnRequest::Preempt)) => control.preempt(),
            Ok(Some(TurnRequest::Stop)) => {
                control.stop();
                return;
            }
            Ok(None) => {
                tracing::warn!(conversation.id = %id, "the turn lost its claim; stopping it");
                control.stop();
                return;
            }
            Err(error) => {
                tracing::warn!(%error, conversation.id = %id, "checking the turn's claim failed")
            }
        }
    }
}

/// Resolves when a change of conversation `id` is announced (or changes
/// may have been missed); never when the announcements have ended.
pub(super) async fn announced(changes: &mut broadcast::Receiver<LiveEvent>, id: &str) {
    loop {
        match changes.recv().await {
            Ok(LiveEvent::Conversation(change)) if change.conversation_id == id => return,
            Ok(LiveEvent::Resync) | Err(broadcast::error::RecvError::Lagged(_)) => return,
            Ok(_) => {}
            Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
        }
    }
}

async fn renew(
    db: &Database,
    clock: &Clock,
    id: &str,
    turn_id: &str,
) -> Result<Option<TurnRequest>, storage::StorageError> {
    let tx = db.begin_write().await?;
    let seen =
        storage::conversations::renew_claim(&*tx, id, turn_id, clock.now() + TURN_LEASE).await?;
    tx.commit().await?;
    Ok(seen)
}

/// Takes the messages sent "for this turn" into the running turn, right
/// before its model reads them: marked as carried by it in the database
/// first (so Stop, which cancels only what no turn carries, and the turn's
/// transcript agree), then told to the turn's ledger as the customer's
/// words at their place in the transcript.
struct QueueSteering {
    db: Database,
    conversation_id: String,
    turn_id: String,
    scope: TurnScope,
    taken: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl agents::Steering for QueueSteering {
    async fn take(&self, first_index: usize) -> Vec<UserMessage> {
        let taken = async {
            let tx = self.db.begin_write().await?;
            let rows = messages::take_steering(&*tx, &self.conversation_id, &self.turn_id).await?;
            tx.commit().await?;
            Ok::<_, storage::StorageError>(rows)
        }
        .await;
        let rows = match taken {
            Ok(rows) => rows,
            Err(error) => {
                // They keep waiting: the claim watcher signals them again.
                tracing::warn!(%error, "messages for the running turn could not be taken");
                return Vec::new();
            }
        };
        let mut ledger = self.scope.ledger();
        let mut ids = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        rows.into_iter()
            .enumerate()
            .map(|(offset, row)| {
                ledger.customer_said(CustomerMessage {
                    text: row.text.clone(),
                    index: first_index + offset,
                    at: Some(row.received_at),
                });
                ids.push(row.id);
                UserMessage::new(row.text, row.received_at)
            })
            .collect()
    }
}
