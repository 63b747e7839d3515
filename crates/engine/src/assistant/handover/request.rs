//! The customer asks for a person: by the page's button (this use case
//! writes the note the customer reads), or in words during a turn (the
//! `request_person` tool; the agent then says so itself).

use super::{HANDOVER_NOTE, Handover, HandoverError, Held, REQUESTED_REPLY, journal};
use crate::assistant::Chat;
use crate::assistant::chat::{ChatError, may_write};
use crate::core::Actor;
use agents::Message;
use storage::StorageError;

impl Chat {
    /// The customer who opened conversation `id` asks for a person. The
    /// transcript says a member of the team was asked to join; the
    /// conversation waits in the staff inbox and the agents stay silent
    /// until a person hands it back. Asking again while waiting (or while a
    /// person holds it) changes nothing.
    ///
    /// # Errors
    /// [`ChatError::NotFound`] for a conversation the actor cannot see,
    /// [`ChatError::ReadOnly`] for one they did not open,
    /// [`ChatError::TurnInProgress`] while an agent turn runs.
    #[tracing::instrument(skip_all, err, fields(conversation.id = %id))]
    pub async fn request_person(&self, actor: &Actor, id: &str) -> Result<Handover, HandoverError> {
        let stored = self.readable(actor, id).await?;
        if !may_write(actor, &stored) {
            return Err(ChatError::ReadOnly(id.to_owned()).into());
        }
        let now = self.now();
        let tx = self.db.begin_write().await?;
        if let Some(current) = storage::handovers::get(&*tx, id).await? {
            return Ok(Handover::of(Some(current)));
        }
        let mut held = Held::take(&*tx, id, now).await?;
        held.state.record_outside_turn(Message::assistant(
            HANDOVER_NOTE,
            REQUESTED_REPLY,
            Vec::new(),
        ));
        storage::handovers::request(&*tx, id, now).await?;
        journal(
            &*tx,
            &stored,
            actor.journal_name(),
            "handover_requested",
            ("agents", "waiting"),
            serde_json::json!({ "via": "button" }),
            now,
        )
        .await?;
        held.save(&*tx, id, now).await?;
        tx.commit().await?;
        tracing::info!("a person was asked for");
        self.announce(&stored);
        Ok(Handover::Waiting { since: now })
    }

    /// The customer asked for a person in the turn now running (the
    /// `request_person` tool): the conversation waits in the staff inbox;
    /// the agent's reply tells the customer. The turn holds the transcript,
    /// so only the handover is written here.
    ///
    /// # Errors
    /// Storage failures.
    pub(crate) async fn request_person_in_turn(
        &self,
        actor: &Actor,
        id: &str,
    ) -> Result<Handover, StorageError> {
        let now = self.now();
        let tx = self.db.begin_write().await?;
        let stored = storage::conversations::get(&*tx, id)
            .await?
            .ok_or_else(|| StorageError::Corrupt(format!("conversation {id} vanished mid-turn")))?;
        if storage::handovers::request(&*tx, id, now).await? {
            journal(
                &*tx,
                &stored,
                actor.journal_name(),
                "handover_requested",
                ("agents", "waiting"),
                serde_json::json!({ "via": "chat" }),
                now,
            )
            .await?;
        }
        let current = Handover::of(storage::handovers::get(&*tx, id).await?);
        tx.commit().await?;
        self.announce(&stored);
        Ok(current)
    }
}
