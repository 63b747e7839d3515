//! Opening a conversation, reading it back, and Stop.

use super::{
    ChatError, Conversation, ConversationEvent, OpenConversationError, StopReceipt, decode_state,
    is_staff, may_read, may_stop,
};
use crate::assistant::Chat;
use crate::core::Actor;
use agents::ConversationState;
use domain::Role;
use storage::conversations::{NewConversation, StoredConversation};
use storage::ids::new_id;
use storage::proposals::ProposalFilter;

/// The most proposals listed with a conversation.
const MAX_LINKED_PROPOSALS: u64 = 200;

impl Chat {
    /// Opens a conversation. Customers open them for themselves; staff and
    /// agent accounts open them for a customer, named by user id.
    ///
    /// # Errors
    /// [`OpenConversationError`] naming the problem; nothing is stored then.
    pub async fn create_conversation(
        &self,
        actor: &Actor,
        customer_id: Option<&str>,
    ) -> Result<Conversation, OpenConversationError> {
        let for_others = is_staff(actor) || actor.roles.contains(Role::Agent);
        let customer_id = match customer_id.map(str::trim) {
            Some(id) if id.is_empty() || id.chars().count() > 64 => {
                return Err(OpenConversationError::InvalidCustomerId);
            }
            Some(id) if id == actor.user_id && actor.roles.contains(Role::Customer) => {
                id.to_owned()
            }
            Some(id) if for_others => {
                let customer = storage::users::find_by_id(self.db.conn(), id).await?;
                match customer {
                    Some(user) if user.roles.contains(Role::Customer) && !user.disabled => user.id,
                    _ => return Err(OpenConversationError::UnknownCustomer(id.to_owned())),
                }
            }
            Some(_) => return Err(OpenConversationError::NotAllowed),
            None if actor.roles.contains(Role::Customer) => actor.user_id.clone(),
            None if for_others => return Err(OpenConversationError::CustomerRequired),
            // Held by the guest account until the visitor signs in.
            None if actor.is_guest() => storage::users::GUEST_ACCOUNT_ID.to_owned(),
            None => return Err(OpenConversationError::NotAllowed),
        };
        let guest_id = actor.is_guest().then_some(actor.user_id.as_str());
        let id = new_id("cnv");
        let now = self.now();
        let state = ConversationState::new();
        let state_json = serde_json::to_string(&state).map_err(|e| {
            OpenConversationError::Storage(storage::StorageError::Corrupt(e.to_string()))
        })?;
        let tx = self.db.begin_write().await?;
        storage::conversations::insert(
            &*tx,
            NewConversation {
                id: &id,
                owner_id: guest_id.map_or(actor.user_id.as_str(), |_| &customer_id),
                customer_id: &customer_id,
                state: &state_json,
                widget_session_id: actor.widget_session.as_deref(),
                guest_id,
                now,
            },
        )
        .await?;
        tx.commit().await?;
        tracing::info!(conversation.id = %id, customer.id = %customer_id, "conversation opened");
        Ok(Conversation {
            id,
            owner_id: guest_id.map_or(actor.user_id.clone(), |_| customer_id.clone()),
            customer_id: guest_id.is_none().then_some(customer_id),
            running: false,
            waiting_for_sign_in: false,
            reading_carrier_page: false,
            background: false,
            message_being_answered: None,
            active_agent: self.assistant.workflow().root().name().to_owned(),
            turns: 0,
            created_at: now,
            updated_at: now,
            state,
            proposals: Vec::new(),
        })
    }

    /// A conversation with its transcript, for its owner, its customer or staff.
    ///
    /// # Errors
    /// [`ChatError::NotFound`] when it does not exist or the actor may not
    /// see it (the two are not distinguished), storage failures.
    pub async fn conversation(&self, actor: &Actor, id: &str) -> Result<Conversation, ChatError> {
        let stored = self.readable(actor, id).await?;
        let state = decode_state(&stored)?;
        // The proposals' own link is the truth (a proposal stored by a tool
        // call that Stop then cut short is still listed).
        let mut linked = storage::proposals::list(
            self.db.conn(),
            &ProposalFilter {
                conversation_id: Some(id.to_owned()),
                ..ProposalFilter::default()
            },
            MAX_LINKED_PROPOSALS,
            0,
        )
        .await?;
        linked.sort_by_key(|p| p.proposal.created_at);
        let mut conversation = self.conversation_of(&stored, state);
        conversation.proposals = linked
            .into_iter()
            .map(|p| (p.proposal.order_id, p.proposal.id))
            .collect();
        Ok(conversation)
    }

    /// The conversation the actor opened that was active most recently,
    /// with its transcript: where a returning customer resumes (a widget
    /// session: among those it opened).
    ///
    /// # Errors
    /// As [`Chat::conversation`].
    pub async fn latest_conversation(
        &self,
        actor: &Actor,
    ) -> Result<Option<Conversation>, ChatError> {
        let latest = if actor.is_guest() {
            storage::conversations::latest_of_guest(self.db.conn(), &actor.user_id).await?
        } else {
            storage::conversations::latest_owned_by(
                self.db.conn(),
                &actor.user_id,
                actor.widget_session.as_deref(),
            )
            .await?
        };
        match latest {
            Some(stored) => self.conversation(actor, &stored.id).await.map(Some),
            None => Ok(None),
        }
    }

    /// The agent events of a conversation, oldest first.
    ///
    /// # Errors
    /// As [`Chat::conversation`].
    pub async fn conversation_events(
        &self,
        actor: &Actor,
        id: &str,
    ) -> Result<Vec<ConversationEvent>, ChatError> {
        self.readable(actor, id).await?;
        let events = storage::conversations::events(self.db.conn(), id).await?;
        Ok(events
            .into_iter()
            .map(|event| ConversationEvent {
                seq: event.seq,
                turn: event.turn,
                agent: event.agent,
                kind: event.kind,
                at: event.at,
                event: serde_json::from_str(&event.payload).unwrap_or_default(),
            })
            .collect())
    }

    /// Stops everything of the conversation: the turn in flight, wherever
    /// it runs (directly when it runs in this process, through the
    /// conversation row otherwise; it then ends cleanly and its transcript
    /// is saved), the messages waiting for a turn (cancelled, never run),
    /// and its tasks at other groups.
    ///
    /// # Errors
    /// [`ChatError::NoTurnRunning`] when nothing runs or waits,
    /// [`ChatError::NotFound`] for a conversation the actor cannot see,
    /// [`ChatError::ReadOnly`] for one they may only read.
    pub async fn stop_turn(&self, actor: &Actor, id: &str) -> Result<StopReceipt, ChatError> {
        let stored = self.readable(actor, id).await?;
        if !may_stop(actor, &stored) {
            return Err(ChatError::ReadOnly(id.to_owned()));
        }
        // The database first, with the conversation's row locked: what
        // waits is cancelled before the running turn is told (which then
        // saves and looks for waiting messages), and no turn can claim the
        // conversation between the read of its claim and the cancelling.
        let now = self.now();
        let tx = self.db.begin_write().await?;
        let row = storage::conversations::get_locked(&*tx, id).await?;
        let live_turn = row
            .as_ref()
            .filter(|row| row.is_running(now))
            .and_then(|row| row.turn_id.clone());
        let background = row
            .as_ref()
            .and_then(|row| row.background_until)
            .is_some_and(|until| until > now);
        let flagged = storage::conversations::request_stop(&*tx, id, now).await?;
        // The turn that holds the conversation keeps what it took in (it is
        // being stopped); the rest is cancelled.
        let cancelled =
            storage::conversation_messages::cancel_waiting(&*tx, id, live_turn.as_deref(), now)
                .await?;
        tx.commit().await?;
        let here = self.assistant.running().stop(id);
        // The replica running the turn reads its flag at once.
        self.announce(&stored);
        // Tasks the turn sent other groups stop too (told until each peer
        // acknowledges); Stop lands here whatever they answer.
        let mut peers_told = 0;
        if let Some(desk) = &self.returns_desk {
            match desk.sender.cancel_for(id, &actor.journal_name()).await {
                Ok(count) => peers_told = count,
                Err(error) => tracing::warn!(%error, conversation.id = %id,
                    "the conversation's tasks at other groups could not be canceled"),
            }
        }
        let local = here.as_ref().is_some_and(|here| here.turn);
        let receipt = StopReceipt {
            turn_stopping: local || flagged,
            background_elsewhere: background
                && here.as_ref().is_none_or(|here| here.subagents.is_empty()),
            subagents_stopping: here.map(|here| here.subagents).unwrap_or_default(),
            cancelled_messages: cancelled.into_iter().map(|message| message.id).collect(),
            peer_tasks_told: peers_told,
        };
        if receipt.stopped_anything() {
            tracing::info!(conversation.id = %id, local, peers_told,
                subagents = receipt.subagents_stopping.len(),
                cancelled = receipt.cancelled_messages.len(), "stop requested");
            Ok(receipt)
        } else {
            Err(ChatError::NoTurnRunning(id.to_owned()))
        }
    }

    pub(crate) async fn readable(
        &self,
        actor: &Actor,
        id: &str,
    ) -> Result<StoredConversation, ChatError> {
        let not_found = || ChatError::NotFound(id.to_owned());
        if id.is_empty() || id.len() > 64 {
            return Err(not_found());
        }
        let stored = storage::conversations::get(self.db.conn(), id)
            .await?
            .ok_or_else(not_found)?;
        if may_read(actor, &stored) {
            Ok(stored)
        } else {
            Err(not_found())
        }
    }

    fn conversation_of(
        &self,
        stored: &StoredConversation,
        state: ConversationState,
    ) -> Conversation {
        let now = self.now();
        Conversation {
            id: stored.id.clone(),
            owner_id: stored.owner_id.clone(),
            customer_id: stored.customer().map(str::to_owned),
            running: stored.is_running(now),
            waiting_for_sign_in: stored.waits_for_sign_in(now),
            reading_carrier_page: stored.reads_carrier_page(now),
            background: stored.background_until.is_some_and(|until| until > now),
            message_being_answered: stored.message_being_answered(now).map(str::to_owned),
            active_agent: state
                .active_agent()
                .unwrap_or(self.assistant.workflow().root().name())
                .to_owned(),
            turns: state.turns(),
            created_at: stored.created_at,
            updated_at: stored.updated_at,
            state,
            proposals: Vec::new(),
        }
    }
}
