//! A member of staff takes a conversation over, writes in it under their
//! own name, and hands it back to the agents.

use super::{HANDOVER_NOTE, Handover, HandoverError, Held, PERSON_PREFIX, journal};
use crate::assistant::Chat;
use crate::assistant::chat::checked_message;
use crate::core::Actor;
use agents::Message;
use storage::handovers::{StoredHandover, TAKEN};

impl Chat {
    /// `actor` (a role that sees the staff inbox) takes conversation `id`
    /// over, whether or not the customer asked for a person. The customer
    /// reads that they joined; from now on the agents stay silent and the
    /// customer's messages go to them. Taking over a conversation one
    /// already holds changes nothing.
    ///
    /// # Errors
    /// [`HandoverError::Forbidden`] without inbox access,
    /// [`HandoverError::HeldByAnother`] when someone else holds it,
    /// [`crate::assistant::ChatError::NotFound`], [`crate::assistant::ChatError::TurnInProgress`] while an agent
    /// turn runs.
    #[tracing::instrument(skip_all, err, fields(conversation.id = %id))]
    pub async fn take_over(&self, actor: &Actor, id: &str) -> Result<Handover, HandoverError> {
        self.require_inbox(actor).await?;
        let stored = self.readable(actor, id).await?;
        let name = self.display_name(actor).await?;
        let now = self.now();
        let tx = self.db.begin_write().await?;
        let before = storage::handovers::get(&*tx, id).await?;
        let (current, took) =
            storage::handovers::take(&*tx, id, &actor.user_id, &name, now).await?;
        if !took {
            return match current.person_id.as_deref() {
                Some(person) if person == actor.user_id => Ok(Handover::of(Some(current))),
                _ => Err(held_by_another(id, &current)),
            };
        }
        let mut held = Held::take(&*tx, id, now).await?;
        held.state.record_outside_turn(Message::assistant(
            HANDOVER_NOTE,
            format!("{name} from our team joined the conversation."),
            Vec::new(),
        ));
        // Whoever speaks for the team here may not approve its refunds.
        storage::handovers::record_speaker(&*tx, id, &actor.user_id, now).await?;
        let from = if before.is_some() {
            "waiting"
        } else {
            "agents"
        };
        journal(
            &*tx,
            &stored,
            actor.journal_name(),
            "handover_taken",
            (from, "person"),
            serde_json::json!({ "person_id": actor.user_id, "person_name": name }),
            now,
        )
        .await?;
        held.save(&*tx, id, now).await?;
        tx.commit().await?;
        tracing::info!(person = %actor.name, "a person took the conversation over");
        self.announce(&stored);
        Ok(Handover::of(Some(current)))
    }

    /// The person holding conversation `id` writes `text` in it; the
    /// customer reads it under the person's display name.
    ///
    /// # Errors
    /// [`HandoverError::NotHeldByYou`] unless `actor` holds it,
    /// [`HandoverError::HeldByAnother`], [`crate::assistant::ChatError::InvalidMessage`],
    /// [`crate::assistant::ChatError::NotFound`], [`HandoverError::Forbidden`].
    #[tracing::instrument(skip_all, err, fields(conversation.id = %id))]
    pub async fn person_reply(
        &self,
        actor: &Actor,
        id: &str,
        text: &str,
    ) -> Result<Handover, HandoverError> {
        let text = checked_message(text)?;
        self.require_inbox(actor).await?;
        let stored = self.readable(actor, id).await?;
        let now = self.now();
        let tx = self.db.begin_write().await?;
        let current = held_by(actor, id, storage::handovers::get(&*tx, id).await?)?;
        let name = current.person_name.clone().unwrap_or_default();
        let mut held = Held::take(&*tx, id, now).await?;
        held.state.record_outside_turn(Message::assistant(
            format!("{PERSON_PREFIX}{name}"),
            text,
            Vec::new(),
        ));
        storage::handovers::record_speaker(&*tx, id, &actor.user_id, now).await?;
        held.save(&*tx, id, now).await?;
        tx.commit().await?;
        self.announce(&stored);
        Ok(Handover::of(Some(current)))
    }

    /// The person holding conversation `id` hands it back: the customer
    /// reads that they left, and the agents answer the next message.
    ///
    /// # Errors
    /// As [`Chat::person_reply`], without the message.
    #[tracing::instrument(skip_all, err, fields(conversation.id = %id))]
    pub async fn hand_back(&self, actor: &Actor, id: &str) -> Result<Handover, HandoverError> {
        self.require_inbox(actor).await?;
        let stored = self.readable(actor, id).await?;
        let now = self.now();
        let tx = self.db.begin_write().await?;
        let current = held_by(actor, id, storage::handovers::get(&*tx, id).await?)?;
        let name = current.person_name.clone().unwrap_or_default();
        let mut held = Held::take(&*tx, id, now).await?;
        if !storage::handovers::hand_back(&*tx, id, &actor.user_id).await? {
            return Err(HandoverError::NotHeldByYou(id.to_owned()));
        }
        held.state.record_outside_turn(Message::assistant(
            HANDOVER_NOTE,
            format!("{name} handed the conversation back to our assistant."),
            Vec::new(),
        ));
        journal(
            &*tx,
            &stored,
            actor.journal_name(),
            "handover_returned",
            ("person", "agents"),
            serde_json::json!({ "person_id": actor.user_id, "person_name": name }),
            now,
        )
        .await?;
        held.save(&*tx, id, now).await?;
        tx.commit().await?;
        tracing::info!(person = %actor.name, "a person handed the conversation back");
        self.announce(&stored);
        Ok(Handover::Agents)
    }

    /// The name the customer reads on the person's messages.
    async fn display_name(&self, actor: &Actor) -> Result<String, HandoverError> {
        let user = storage::users::find_by_id(self.db.conn(), &actor.user_id).await?;
        Ok(user
            .map(|user| user.display_name)
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| actor.name.clone()))
    }
}

/// The handover, if `actor` holds it.
fn held_by(
    actor: &Actor,
    id: &str,
    current: Option<StoredHandover>,
) -> Result<StoredHandover, HandoverError> {
    match current {
        Some(current)
            if current.status == TAKEN && current.person_id.as_deref() == Some(&actor.user_id) =>
        {
            Ok(current)
        }
        Some(current) if current.status == TAKEN => Err(held_by_another(id, &current)),
        _ => Err(HandoverError::NotHeldByYou(id.to_owned())),
    }
}

fn held_by_another(id: &str, current: &StoredHandover) -> HandoverError {
    HandoverError::HeldByAnother {
        conversation: id.to_owned(),
        person: current
            .person_name
            .clone()
            .unwrap_or_else(|| "another member of staff".to_owned()),
    }
}
