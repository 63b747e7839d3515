//! The chat use cases: open a conversation, run one turn of it, stop the
//! turn in flight, read it back.
//!
//! A conversation belongs to the user who opened it and is about one
//! customer, whose records are all its tools may read. Turns are serialized
//! per conversation by a claim on its row, on any replica; a message sent
//! while a turn runs is stored and waits for the next turn (see `queue`).
//! The transcript, the turn's events and the outcome of the messages it
//! took in are written in one transaction when the turn ends, however it
//! ends.

mod background;
mod open;
mod queue;
mod sign_in;
mod turn;

pub use queue::{Delivery, Priority, QueueEntry, QueuedMessage};

use agents::{ConversationState, Provenance, StopPoint};
use chrono::Duration;
use domain::{Role, Timestamp};
use serde::Serialize;
use storage::StorageError;
use storage::conversations::StoredConversation;

use crate::core::Actor;

/// Longest message accepted, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// A claim not renewed for this long belongs to a crashed process.
const TURN_LEASE: Duration = Duration::seconds(60);
/// How often a running turn renews its claim.
const RENEW_EVERY: std::time::Duration = std::time::Duration::from_secs(15);
/// How often a running turn looks for a Stop made on another replica.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// A conversation with its transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub id: String,
    pub owner_id: String,
    /// The customer it is about; none while a visitor who has not signed
    /// in holds it (signing in binds it to them).
    pub customer_id: Option<String>,
    /// A turn holds the conversation now.
    pub running: bool,
    /// Subagents a preempted turn started still run in the background
    /// (their findings join the transcript when they end; Stop ends them).
    pub background: bool,
    /// That turn waits for the visitor to sign in (the page asks them to;
    /// signing in in any tab resumes it, Stop ends it).
    pub waiting_for_sign_in: bool,
    /// A carrier's tracking page is being read for it (or waits for the
    /// one browser): it can take up to two and a half minutes.
    pub reading_carrier_page: bool,
    /// The message that turn is answering (shown until its reply is saved).
    pub message_being_answered: Option<String>,
    /// The agent that will read the next message.
    pub active_agent: String,
    pub turns: u64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub state: ConversationState,
    /// Proposals this conversation prepared: (order id, proposal id).
    pub proposals: Vec<(String, String)>,
}

/// One recorded agent event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationEvent {
    pub seq: i64,
    pub turn: i64,
    pub agent: String,
    pub kind: String,
    pub at: Timestamp,
    /// The whole event as the runtime recorded it.
    pub event: serde_json::Value,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TurnEnd {
    /// The agent answered.
    Answered,
    /// Stop landed; the transcript ends with a short note.
    Stopped { during: StopPoint },
    /// The step bound was reached; the reply says so.
    StepLimit { steps: u32 },
    /// A person from the team was asked for or holds the conversation: the
    /// message went to them, the agents stayed silent (no reply yet).
    ForPerson,
}

/// What one turn produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnResult {
    pub conversation_id: String,
    /// 1-based turn number.
    pub turn: u64,
    /// The agent that spoke last.
    pub agent: String,
    pub reply: String,
    #[serde(flatten)]
    pub end: TurnEnd,
    /// What the reply rests on: the cited evidence of a proposal prepared
    /// in this turn, otherwise every source read in this turn.
    pub evidence: Vec<Provenance>,
    /// The proposal prepared in this turn, if any (the last, when its
    /// subagents prepared several).
    pub proposal_id: Option<String>,
    /// Every proposal prepared in this turn, its subagents' too, in order.
    pub proposal_ids: Vec<String>,
    /// Unknowns recorded in this turn, to be answered by the customer.
    pub questions: Vec<String>,
}

/// What a Stop reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopReceipt {
    /// A running turn was asked to stop; it ends at its next await.
    pub turn_stopping: bool,
    /// The conversation's subagents stopped: what each works on, running,
    /// waiting for a place, or left running in the background by a turn a
    /// newer message preempted (known where they run in this process).
    pub subagents_stopping: Vec<String>,
    /// Subagents left running in the background on another replica (its
    /// lease is live) were told to stop; that replica stops them.
    pub background_elsewhere: bool,
    /// Messages that waited for a turn, cancelled: none of them will run.
    pub cancelled_messages: Vec<String>,
    /// The conversation's tasks at other groups that were told to stop.
    pub peer_tasks_told: usize,
}

impl StopReceipt {
    /// Whether the Stop reached anything at all.
    #[must_use]
    pub fn stopped_anything(&self) -> bool {
        self.turn_stopping
            || !self.subagents_stopping.is_empty()
            || self.background_elsewhere
            || !self.cancelled_messages.is_empty()
            || self.peer_tasks_told > 0
    }
}

/// Why a conversation could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenConversationError {
    #[error("customer_id is required: staff and agent accounts open conversations for a customer")]
    CustomerRequired,
    #[error("customer_id must be 1 to 64 characters")]
    InvalidCustomerId,
    #[error("there is no customer {0}")]
    UnknownCustomer(String),
    #[error("customers may only open conversations for themselves")]
    NotAllowed,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Why a turn, a stop or a read was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("the message must be 1 to {MAX_MESSAGE_CHARS} characters of text, got {0}")]
    InvalidMessage(String),
    #[error("no conversation {0}")]
    NotFound(String),
    #[error("only the person who opened conversation {0} may write to it")]
    ReadOnly(String),
    #[error("a turn of conversation {0} is still running; wait for its reply or stop it")]
    TurnInProgress(String),
    #[error("nothing of conversation {0} is running or waiting: no turn, no queued message")]
    NoTurnRunning(String),
    #[error(
        "the turn lost its claim on conversation {0} (it ran past its lease); its reply was not saved"
    )]
    ClaimLost(String),
    #[error(
        "the model could not answer ({kind}); the message was kept, nothing else was done: {message}"
    )]
    ModelFailed {
        agent: String,
        kind: String,
        message: String,
    },
    #[error("conversation {0} is stored in a form this version cannot read")]
    Corrupt(String),
    #[error("the turn could not run to completion")]
    Interrupted,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

fn is_staff(actor: &Actor) -> bool {
    actor
        .roles
        .any_of(&[Role::Approver, Role::Manager, Role::Admin])
}

/// A widget session reaches only the conversations it opened itself: not
/// the customer's web-app conversations, nor another widget session's. Any
/// other credential is not limited here.
fn within_widget_lane(actor: &Actor, stored: &StoredConversation) -> bool {
    match &actor.widget_session {
        Some(session) => stored.widget_session_id.as_deref() == Some(session.as_str()),
        None => true,
    }
}

/// Its owner, its customer and staff may read a conversation.
fn may_read(actor: &Actor, stored: &StoredConversation) -> bool {
    within_widget_lane(actor, stored)
        && (holds(actor, stored)
            || opened_as_visitor(actor, stored)
            || stored.customer_id == actor.user_id
            || is_staff(actor))
}

/// Only the person who opened it writes to it.
pub(crate) fn may_write(actor: &Actor, stored: &StoredConversation) -> bool {
    within_widget_lane(actor, stored) && holds(actor, stored)
}

/// Its owner and staff may stop a turn.
fn may_stop(actor: &Actor, stored: &StoredConversation) -> bool {
    within_widget_lane(actor, stored) && (holds(actor, stored) || is_staff(actor))
}

/// Whether the actor opened it: its owner, or the visitor who opened it
/// while it is not bound to an account (once they sign in, it is theirs as
/// the person they signed in as).
fn holds(actor: &Actor, stored: &StoredConversation) -> bool {
    stored.owner_id == actor.user_id
        || (opened_as_visitor(actor, stored) && stored.customer().is_none())
}

/// Whether the actor is the visitor who opened it. Once it is bound they
/// may still read it (a visitor's id lives only in their server-side
/// session, which signing in replaces: only requests sent before the
/// sign-in still carry it, such as the one whose turn waited for it), but
/// they no longer write to it.
fn opened_as_visitor(actor: &Actor, stored: &StoredConversation) -> bool {
    actor.is_guest() && stored.guest_id.as_deref() == Some(actor.user_id.as_str())
}

/// The message, trimmed, if it is usable.
pub(crate) fn checked_message(text: &str) -> Result<&str, ChatError> {
    let trimmed = text.trim();
    let chars = trimmed.chars().count();
    if chars == 0 {
        return Err(ChatError::InvalidMessage("an empty message".into()));
    }
    if chars > MAX_MESSAGE_CHARS {
        return Err(ChatError::InvalidMessage(format!("{chars} characters")));
    }
    if trimmed
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
    {
        return Err(ChatError::InvalidMessage(
            "text with control characters".into(),
        ));
    }
    Ok(trimmed)
}

pub(crate) fn decode_state(stored: &StoredConversation) -> Result<ConversationState, ChatError> {
    serde_json::from_str(&stored.state).map_err(|error| {
        tracing::error!(%error, conversation.id = %stored.id, "stored conversation state does not parse");
        ChatError::Corrupt(stored.id.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(owner: &str, widget_session: Option<&str>) -> StoredConversation {
        let now = chrono::Utc::now();
        StoredConversation {
            id: "cnv_1".into(),
            owner_id: owner.into(),
            customer_id: owner.into(),
            status: storage::conversations::IDLE.into(),
            active_agent: None,
            state: "{}".into(),
            turns: 0,
            turn_id: None,
            turn_lease_until: None,
            stop_requested: false,
            preempt_only: false,
            stopped_at: None,
            background_until: None,
            pending_message: None,
            widget_session_id: widget_session.map(str::to_owned),
            guest_id: None,
            sign_in_wait_until: None,
            carrier_read_until: None,
            created_at: now,
            updated_at: now,
        }
    }

    fn customer(widget_session: Option<&str>) -> Actor {
        Actor {
            user_id: "usr_cora".into(),
            name: "cora".into(),
            roles: domain::RoleSet::new([Role::Customer]),
            widget_session: widget_session.map(str::to_owned),
        }
    }

    #[test]
    fn a_widget_session_reaches_only_the_conversations_it_opened() {
        let web_app = stored("usr_cora", None);
        let its_own = stored("usr_cora", Some("wss_1"));
        let another_widgets = stored("usr_cora", Some("wss_2"));
        let widget = customer(Some("wss_1"));
        for (conversation, reachable) in [
            (&web_app, false),
            (&its_own, true),
            (&another_widgets, false),
        ] {
            assert_eq!(may_read(&widget, conversation), reachable);
            assert_eq!(may_write(&widget, conversation), reachable);
            assert_eq!(may_stop(&widget, conversation), reachable);
        }
        // Signed in to the web app, the customer reaches all of their own.
        let browser = customer(None);
        for conversation in [&web_app, &its_own, &another_widgets] {
            assert!(may_read(&browser, conversation) && may_write(&browser, conversation));
        }
    }

    #[test]
    fn a_visitor_reaches_only_the_conversation_it_opened_and_only_until_it_is_bound() {
        let guest_account = storage::users::GUEST_ACCOUNT_ID;
        let mut theirs = stored(guest_account, None);
        theirs.guest_id = Some("gst_1".into());
        let mut another_visitors = stored(guest_account, None);
        another_visitors.guest_id = Some("gst_2".into());
        let visitor = Actor::guest("gst_1");
        assert!(visitor.is_guest());
        assert!(may_read(&visitor, &theirs) && may_write(&visitor, &theirs));
        assert!(may_stop(&visitor, &theirs));
        assert!(!may_read(&visitor, &another_visitors));
        assert!(!may_stop(&visitor, &another_visitors));
        // Signed in as Cora, the conversation is hers: the visitor's id
        // (held only by requests sent before the sign-in) still reads it,
        // so the reply the turn waited for reaches the tab that asked, but
        // writes and stops nothing.
        theirs.owner_id = "usr_cora".into();
        theirs.customer_id = "usr_cora".into();
        assert!(may_read(&visitor, &theirs));
        assert!(!may_write(&visitor, &theirs) && !may_stop(&visitor, &theirs));
        assert!(may_write(&customer(None), &theirs));
        // A user id that merely begins like a visitor's is not a visitor.
        let pretender = Actor {
            user_id: "gst_1".into(),
            ..customer(None)
        };
        assert!(!pretender.is_guest());
    }

    #[test]
    fn messages_must_be_short_plain_text() {
        assert_eq!(
            checked_message("  check order 4821 ").ok(),
            Some("check order 4821")
        );
        assert!(checked_message("   ").is_err());
        assert!(checked_message(&"a".repeat(MAX_MESSAGE_CHARS)).is_ok());
        assert!(checked_message(&"a".repeat(MAX_MESSAGE_CHARS + 1)).is_err());
        assert!(checked_message("line one\nline two").is_ok());
        assert!(checked_message("bell\u{7}").is_err());
    }
}
