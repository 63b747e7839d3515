//! Messages that arrive while a turn runs. Each is stored before it is
//! acknowledged and waits with its priority: **later** waits for the
//! running turn to end, **this turn** is given to the running turn's model
//! before its next call (after the results of the tools it called),
//! **now** stops the running turn at its next await. When a turn's
//! transcript is saved, whatever waits is taken into the next turn together
//! ("collected"), on whichever replica claims it; Stop cancels what waits.
//! A message ends with exactly one outcome: answered (it was its turn's
//! only message), steered into the running turn, collected into a turn,
//! kept for the person a turn asked for (`for_person`), or cancelled.

use super::turn::Caller;
use super::{ChatError, TurnResult};
use crate::assistant::Chat;
use crate::core::Actor;
use agents::TurnControl;
use domain::Timestamp;
use serde::Serialize;
use storage::conversation_messages::{self as messages, StoredMessage};
use storage::conversations::StoredConversation;
use storage::ids::new_id;
use tracing::Instrument;

/// How a message meets a turn that is already running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Stops the running turn at its next await; a new turn starts with
    /// this message (and anything else waiting).
    Now,
    /// Given to the running turn's model before its next call; if the turn
    /// ends without one, it goes into the next turn.
    ThisTurn,
    /// Waits for the running turn to end, then goes into the next turn with
    /// the other messages that waited.
    #[default]
    Later,
}

impl Priority {
    /// As stored and in the API.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Now => "now",
            Priority::ThisTurn => messages::THIS_TURN,
            Priority::Later => "later",
        }
    }

    /// From the API's word; None for anything else.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "now" => Some(Priority::Now),
            messages::THIS_TURN => Some(Priority::ThisTurn),
            "later" => Some(Priority::Later),
            _ => None,
        }
    }
}

/// What became of a sent message.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivery {
    /// No turn was running: the message's own turn ran, this is its reply.
    Answered(TurnResult),
    /// A turn was running: the message is stored and waits.
    Queued(QueuedMessage),
}

impl Delivery {
    /// The reply, when the message's own turn ran.
    #[must_use]
    pub fn answered(self) -> Option<TurnResult> {
        match self {
            Delivery::Answered(result) => Some(result),
            Delivery::Queued(_) => None,
        }
    }
}

/// A message waiting for the running turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueuedMessage {
    pub id: String,
    pub conversation_id: String,
    pub priority: Priority,
    /// A `now` message asked the running turn to stop.
    pub preempting: bool,
}

/// One message of the conversation's queue as its readers see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueEntry {
    pub id: String,
    pub priority: String,
    pub text: String,
    /// `waiting`, `running` (a turn has taken it in), or its outcome:
    /// `answered`, `steered`, `collected`, `for_person`, `cancelled`.
    pub state: String,
    /// The turn it went into.
    pub turn: Option<u64>,
    pub received_at: Timestamp,
    pub settled_at: Option<Timestamp>,
}

/// How many settled messages the queue view keeps showing.
const SETTLED_SHOWN: u64 = 20;

impl Chat {
    /// The conversation's waiting and running messages and its most recent
    /// settled ones, oldest first.
    ///
    /// # Errors
    /// [`ChatError::NotFound`] for a conversation the actor cannot read;
    /// storage failures.
    pub async fn queue(&self, actor: &Actor, id: &str) -> Result<Vec<QueueEntry>, ChatError> {
        let stored = self.readable(actor, id).await?;
        let live_turn = stored
            .is_running(self.now())
            .then_some(stored.turn_id.as_deref())
            .flatten();
        let rows = messages::recent(self.db.conn(), id, SETTLED_SHOWN).await?;
        Ok(rows.into_iter().map(|row| entry(row, live_turn)).collect())
    }

    /// Asks the running turn to give way to a `now` message: ended here if
    /// it runs in this process, flagged for the replica that runs it
    /// otherwise; what it started (subagents) runs on. Returns whether a
    /// live turn was asked.
    pub(super) async fn preempt(&self, id: &str) -> Result<bool, ChatError> {
        let here = self.assistant.running().preempt(id);
        let tx = self.db.begin_write().await?;
        let flagged = storage::conversations::request_preempt(&*tx, id, self.now()).await?;
        tx.commit().await?;
        Ok(here || flagged)
    }

    /// Takes whatever waits into a new turn, in the background, if no turn
    /// holds the conversation; a turn that holds it does this when it ends.
    pub(crate) fn drain_soon(&self, id: &str) {
        self.spawn_drain(id, false);
    }

    /// Like [`Chat::drain_soon`]; with `outlive_claim`, a claim that blocks
    /// it and does not run in this process (its process may be gone) is
    /// waited out once, to its lease's end, then the queue is tried again.
    fn spawn_drain(&self, id: &str, outlive_claim: bool) {
        let chat = self.clone();
        let span = tracing::info_span!("queue", conversation.id = %id);
        let id = id.to_owned();
        let stopping = self.tasks.stopping();
        self.tasks.spawn(
            "conversation queue",
            async move {
                let mut blocked = chat.drain(&id).await;
                if let Ok(Some(lease_until)) = blocked
                    && outlive_claim
                    && !chat.assistant.running().is_running(&id)
                {
                    let left = (lease_until - chat.now()).to_std().unwrap_or_default();
                    tokio::select! {
                        () = stopping.cancelled() => return,
                        () = tokio::time::sleep(left) => {}
                    }
                    blocked = chat.drain(&id).await;
                }
                if let Err(error) = blocked {
                    tracing::warn!(%error, "the conversation's waiting messages could not start a turn; they keep waiting");
                }
            }
            .instrument(span),
        );
    }

    /// Claims the next turn for the waiting messages and runs it. Nothing
    /// is written when nothing waits or another turn holds the conversation;
    /// then the end of that turn's lease is returned (it takes the messages
    /// in when it ends, unless its process is gone).
    async fn drain(&self, id: &str) -> Result<Option<Timestamp>, ChatError> {
        let conn = self.db.conn();
        let mut waiting = messages::unsettled(conn, id).await?;
        if waiting.is_empty() {
            return Ok(None);
        }
        let Some(stored) = storage::conversations::get(conn, id).await? else {
            return Ok(None);
        };
        if stored.is_running(self.now()) {
            return Ok(stored.turn_lease_until);
        }
        // The turn that ended may have asked for a person: what waited is
        // theirs then, and no agent turn runs for it.
        while let Some(first) = waiting.first() {
            let kept = self
                .message_for_person(&stored, &first.text, Some(&first.id))
                .await?;
            if kept.is_none() {
                break;
            }
            waiting.remove(0);
        }
        if waiting.is_empty() {
            return Ok(None);
        }
        let turn_id = new_id("trn");
        let now = self.now();
        let tx = self.db.begin_write().await?;
        // Claimed with what was read as waiting; corrected below when a
        // message arrived meanwhile.
        let claimed = storage::conversations::claim_turn(
            &*tx,
            id,
            &turn_id,
            &combined_text(&waiting),
            now,
            now + super::TURN_LEASE,
        )
        .await?;
        if !claimed {
            return Ok(None);
        }
        cancel_what_a_stopped_turn_left(&*tx, &stored, now).await?;
        let carried = messages::carry_waiting(&*tx, id, &turn_id).await?;
        if carried.is_empty() {
            storage::conversations::release_claim(&*tx, id, &turn_id).await?;
            tx.commit().await?;
            return Ok(None);
        }
        let ids = |messages: &[StoredMessage]| -> Vec<String> {
            messages.iter().map(|message| message.id.clone()).collect()
        };
        if ids(&carried) != ids(&waiting) {
            storage::conversations::set_message_being_answered(
                &*tx,
                id,
                &turn_id,
                &combined_text(&carried),
            )
            .await?;
        }
        tx.commit().await?;
        // Only the owner writes to a conversation, so the waiting messages
        // are theirs; a widget conversation stays in its widget session.
        let owner = storage::users::find_by_id(conn, &stored.owner_id).await?;
        let Some(owner) = owner else {
            tracing::error!(owner = %stored.owner_id, "the conversation's owner is gone; its waiting messages are left");
            self.release_turn(id, &turn_id).await;
            return Ok(None);
        };
        let actor = Actor {
            widget_session: stored.widget_session_id.clone(),
            ..Actor::from(owner)
        };
        let control = TurnControl::new();
        self.run_claimed(&actor, &stored, turn_id, carried, control, Caller::Gone)
            .await?;
        Ok(None)
    }

    /// Starts turns for conversations whose messages wait with no turn
    /// running (a process stopped while they waited); at start-up. Returns
    /// how many it looked at.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn resume_waiting(&self) -> Result<usize, ChatError> {
        let ids = messages::conversations_waiting(self.db.conn(), 1000).await?;
        for id in &ids {
            self.spawn_drain(id, true);
        }
        Ok(ids.len())
    }
}

/// A turn asked to stop whose process died before it saved leaves its
/// messages carried, and its Stop stays recorded on the conversation's row:
/// they are cancelled (the Stop is honoured), not replayed by the next turn.
/// Called in the transaction that claims the next turn, with the row as it
/// was read before the claim.
pub(super) async fn cancel_what_a_stopped_turn_left(
    db: &impl storage::ConnectionTrait,
    before_claim: &StoredConversation,
    now: Timestamp,
) -> Result<(), ChatError> {
    let stopped = before_claim.stop_requested && !before_claim.preempt_only;
    if let (true, Some(dead)) = (stopped, &before_claim.turn_id) {
        let cancelled = messages::cancel_carried(db, &before_claim.id, dead, now).await?;
        if cancelled > 0 {
            tracing::info!(cancelled, turn.id = %dead, "a stopped turn's process died: its messages are cancelled, not replayed");
        }
    }
    Ok(())
}

/// What the model reads for the carried messages: each as it was sent,
/// in the order received.
pub(super) fn combined_text(carried: &[StoredMessage]) -> String {
    carried
        .iter()
        .map(|message| message.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn entry(row: StoredMessage, live_turn: Option<&str>) -> QueueEntry {
    let state = match (&row.outcome, &row.carried_by) {
        (Some(outcome), _) => outcome.clone(),
        (None, Some(turn)) if Some(turn.as_str()) == live_turn => "running".to_owned(),
        (None, _) => "waiting".to_owned(),
    };
    QueueEntry {
        id: row.id,
        priority: row.priority,
        text: row.text,
        state,
        turn: row.turn.and_then(|turn| u64::try_from(turn).ok()),
        received_at: row.received_at,
        settled_at: row.settled_at,
    }
}
