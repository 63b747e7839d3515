//! An answer that names the message it was given in is evidence, so it is
//! checked like evidence: an outside agent's claim that the customer said
//! something must point at that customer message in the proposal's own
//! conversation, saying exactly that. The time comes from the transcript,
//! never from the claim.
//!
//! Countersign's own assistant is trusted here: its answers are bound by
//! the conversation's ledger, and the message answering may belong to the
//! turn still running (not stored until the turn ends).

use super::authority::Proposer;
use super::submit::SubmitError;
use agents::{ConversationState, Role};
use domain::proposal::OpenQuestion;
use storage::ConnectionTrait;

/// Checks each answer's source against the stored transcript and takes
/// its time from there.
///
/// # Errors
/// [`SubmitError::AnswerSource`] naming the question whose source is not
/// the customer message it claims; storage failures.
pub(super) async fn checked(
    db: &impl ConnectionTrait,
    proposer: &Proposer<'_>,
    conversation_id: Option<&str>,
    mut questions: Vec<OpenQuestion>,
) -> Result<Vec<OpenQuestion>, SubmitError> {
    let refused = |question: &OpenQuestion, problem: String| SubmitError::AnswerSource {
        question: question.question.clone(),
        problem,
    };
    let Some(sourced) = questions.iter().find(|q| q.answered_in.is_some()) else {
        return Ok(questions);
    };
    if matches!(proposer, Proposer::Assistant { .. }) {
        return Ok(questions);
    }
    let Some(conversation_id) = conversation_id else {
        return Err(refused(
            sourced,
            "answered_in needs the proposal's conversation_id".into(),
        ));
    };
    let transcript = match storage::conversations::get(db, conversation_id).await? {
        Some(stored) => serde_json::from_str::<ConversationState>(&stored.state)
            .map_err(|e| storage::StorageError::Corrupt(e.to_string()))?,
        None => {
            return Err(SubmitError::ConversationNotFound(
                conversation_id.to_owned(),
            ));
        }
    };
    for question in &mut questions {
        let Some(source) = &mut question.answered_in else {
            continue;
        };
        if source.conversation_id != conversation_id {
            let problem = format!(
                "answered_in names conversation {}, not this proposal's conversation {conversation_id}",
                source.conversation_id
            );
            return Err(refused(question, problem));
        }
        let message = usize::try_from(source.message_index)
            .ok()
            .and_then(|index| transcript.messages().get(index))
            .filter(|message| message.role == Role::User);
        let Some(message) = message else {
            let problem = format!(
                "message {} of conversation {conversation_id} is not a customer message",
                source.message_index
            );
            return Err(refused(question, problem));
        };
        if question.answer.as_deref().map(str::trim) != Some(message.content.trim()) {
            let problem = format!(
                "the answer must quote message {} word for word",
                source.message_index
            );
            return Err(refused(question, problem));
        }
        source.at = message.at;
    }
    Ok(questions)
}
