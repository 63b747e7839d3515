//! A customer message while the agents are silent: a person was asked for
//! or holds the conversation, so the message joins the transcript for them
//! and no agent turn runs.

use super::{Handover, Held};
use crate::assistant::Chat;
use crate::assistant::chat::{ChatError, TurnEnd, TurnResult};
use agents::Message;
use storage::conversations::StoredConversation;

impl Chat {
    /// Keeps `message` for the person when conversation `stored` is waiting
    /// for one or held by one; `None` when the agents answer it. A message
    /// that waited for a turn (`waited`: its id) is settled with it.
    ///
    /// # Errors
    /// [`ChatError::TurnInProgress`] while an agent turn still runs, storage
    /// failures.
    pub(crate) async fn message_for_person(
        &self,
        stored: &StoredConversation,
        message: &str,
        waited: Option<&str>,
    ) -> Result<Option<TurnResult>, ChatError> {
        // Most conversations never see a person: read before writing.
        if storage::handovers::get(self.db.conn(), &stored.id)
            .await?
            .is_none()
        {
            return Ok(None);
        }
        let now = self.now();
        let tx = self.db.begin_write().await?;
        // Read again in the transaction: the person may just have left.
        let handover = Handover::of(storage::handovers::get(&*tx, &stored.id).await?);
        let person = match &handover {
            Handover::Agents => return Ok(None),
            Handover::Waiting { .. } => String::new(),
            Handover::TakenOver { person_name, .. } => person_name.clone(),
        };
        let mut held = Held::take(&*tx, &stored.id, now).await?;
        held.state.record_outside_turn(Message::user(message));
        let turn = held.state.turns();
        held.save(&*tx, &stored.id, now).await?;
        if let Some(id) = waited {
            let number = i64::try_from(turn).unwrap_or(i64::MAX);
            storage::conversation_messages::settle_for_person(&*tx, id, number, now).await?;
        }
        tx.commit().await?;
        self.announce(stored);
        Ok(Some(TurnResult {
            conversation_id: stored.id.clone(),
            turn,
            agent: person,
            reply: String::new(),
            end: TurnEnd::ForPerson,
            evidence: Vec::new(),
            proposal_id: None,
            proposal_ids: Vec::new(),
            questions: Vec::new(),
        }))
    }
}
