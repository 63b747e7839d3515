//! A person can take over a conversation: the customer asks for one (in
//! words the agents recognise, through the `request_person` tool, or with
//! the page's button), the conversation waits in the staff inbox, a member
//! of staff takes it over and writes in it under their own name, and hands
//! it back. While a person holds it (or is being waited for) the agents stay
//! silent: the customer's messages go to the person.
//!
//! | file | use case |
//! |---|---|
//! | `request.rs` | the customer asks for a person |
//! | `person.rs` | take over, reply, hand back |
//! | `held.rs` | a customer message while the agents are silent |
//! | `inbox.rs` | the staff inbox and who sees it |
//!
//! Every change is journaled in the conversation's stream
//! (`conversation:<id>`): requested, taken over by X, handed back by X.
//! Whoever takes a conversation over is recorded as having spoken in it, and
//! may not approve a refund prepared there.

mod held;
mod inbox;
mod person;
mod request;

pub use inbox::{InboxEntry, InboxStatus};

use super::chat::{ChatError, decode_state};
use crate::assistant::Chat;
use crate::live::ConversationChanged;
use agents::ConversationState;
use domain::Timestamp;
use serde::Serialize;
use storage::conversations::{SavedTurn, StoredConversation};
use storage::handovers::{REQUESTED, StoredHandover, TAKEN};
use storage::ids::new_id;
use storage::journal::NewEvent;
use storage::{ConnectionTrait, StorageError};

/// Agent name prefix of a message a person wrote: `person:Ana Approver`.
pub const PERSON_PREFIX: &str = "person:";
/// Agent name of the notes that say who joined or left.
pub const HANDOVER_NOTE: &str = "handover";
/// What the customer is told once a person has been asked for.
pub const REQUESTED_REPLY: &str =
    "I've asked a member of our team to join this conversation; they will reply here.";

/// The journal stream of a conversation's handovers.
pub fn conversation_stream(conversation_id: &str) -> String {
    format!("conversation:{conversation_id}")
}

/// Where a conversation stands with the team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Handover {
    /// The agents answer.
    Agents,
    /// The customer asked for a person; nobody has taken it yet.
    Waiting { since: Timestamp },
    /// A person holds the conversation and writes in it.
    TakenOver {
        since: Timestamp,
        person_id: String,
        person_name: String,
        /// When the customer asked (or the person stepped in).
        requested_at: Timestamp,
    },
}

impl Handover {
    fn of(stored: Option<StoredHandover>) -> Handover {
        match stored {
            None => Handover::Agents,
            Some(h) if h.status == TAKEN => Handover::TakenOver {
                since: h.taken_at.unwrap_or(h.requested_at),
                person_id: h.person_id.unwrap_or_default(),
                person_name: h.person_name.unwrap_or_default(),
                requested_at: h.requested_at,
            },
            Some(h) => {
                debug_assert_eq!(h.status, REQUESTED);
                Handover::Waiting {
                    since: h.requested_at,
                }
            }
        }
    }

    /// Whether the agents stay silent.
    pub fn silences_agents(&self) -> bool {
        !matches!(self, Handover::Agents)
    }
}

/// Why a handover step was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum HandoverError {
    #[error(transparent)]
    Chat(#[from] ChatError),
    #[error("{0}")]
    Forbidden(String),
    #[error(
        "{person} has taken conversation {conversation} over; only they can write in it or hand it back"
    )]
    HeldByAnother {
        conversation: String,
        person: String,
    },
    #[error("you have not taken conversation {0} over; take it over first")]
    NotHeldByYou(String),
}

impl From<StorageError> for HandoverError {
    fn from(error: StorageError) -> Self {
        HandoverError::Chat(ChatError::Storage(error))
    }
}

impl Chat {
    /// Where conversation `id` stands with the team, for whoever may read it.
    ///
    /// # Errors
    /// [`ChatError::NotFound`] for a conversation the actor cannot see.
    pub async fn handover(&self, actor: &crate::Actor, id: &str) -> Result<Handover, ChatError> {
        self.readable(actor, id).await?;
        Ok(Handover::of(
            storage::handovers::get(self.db.conn(), id).await?,
        ))
    }

    /// Tells the conversation's readers that it changed.
    pub(crate) fn announce(&self, stored: &StoredConversation) {
        self.live.publish_conversation(ConversationChanged {
            conversation_id: stored.id.clone(),
            owner_id: stored.owner_id.clone(),
            customer_id: stored.customer_id.clone(),
            widget_session_id: stored.widget_session_id.clone(),
        });
    }
}

/// The transcript, held for a write between turns: the conversation is
/// claimed like a turn (so no agent turn runs meanwhile, on any replica)
/// and saved and released in the same transaction.
pub(crate) struct Held {
    turn_id: String,
    pub(crate) state: ConversationState,
    /// The conversation as read when it was claimed.
    pub(crate) stored: StoredConversation,
}

impl Held {
    /// Claims conversation `id`; [`ChatError::TurnInProgress`] while an
    /// agent turn runs.
    pub(crate) async fn take(
        db: &impl ConnectionTrait,
        id: &str,
        now: Timestamp,
    ) -> Result<Held, ChatError> {
        let turn_id = new_id("trn");
        // The claim lasts only for this transaction.
        let lease = now + chrono::Duration::seconds(60);
        if !storage::conversations::claim_turn(db, id, &turn_id, "", now, lease).await? {
            return Err(ChatError::TurnInProgress(id.to_owned()));
        }
        let stored = storage::conversations::get(db, id)
            .await?
            .ok_or_else(|| ChatError::NotFound(id.to_owned()))?;
        Ok(Held {
            turn_id,
            state: decode_state(&stored)?,
            stored,
        })
    }

    pub(crate) async fn save(
        self,
        db: &impl ConnectionTrait,
        id: &str,
        now: Timestamp,
    ) -> Result<(), ChatError> {
        let state = serde_json::to_string(&self.state)
            .map_err(|e| ChatError::Storage(StorageError::Corrupt(e.to_string())))?;
        let saved = storage::conversations::save_turn(
            db,
            id,
            &self.turn_id,
            SavedTurn {
                state: &state,
                active_agent: self.state.active_agent(),
                turns: i64::try_from(self.state.turns()).unwrap_or(i64::MAX),
                now,
            },
        )
        .await?;
        if saved {
            Ok(())
        } else {
            Err(ChatError::ClaimLost(id.to_owned()))
        }
    }
}

/// One handover event in the conversation's journal stream.
async fn journal(
    db: &impl ConnectionTrait,
    stored: &StoredConversation,
    actor: String,
    kind: &str,
    (from, to): (&str, &str),
    detail: serde_json::Value,
    at: Timestamp,
) -> Result<(), StorageError> {
    storage::journal::append_to_stream(
        db,
        &conversation_stream(&stored.id),
        vec![NewEvent {
            proposal_id: None,
            order_id: None,
            actor,
            kind: kind.to_owned(),
            from_status: Some(from.to_owned()),
            to_status: Some(to.to_owned()),
            payload: serde_json::json!({
                "conversation_id": stored.id,
                "customer_id": stored.customer_id,
                "detail": detail,
            }),
            at,
        }],
    )
    .await?;
    Ok(())
}
