//! The turns running in this process, by conversation, so Stop can reach
//! the in-flight turn's control. (Stop from another replica goes through the
//! conversation row; the running turn polls it.)

use agents::TurnControl;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

#[derive(Debug, Clone, Default)]
pub struct RunningTurns {
    turns: Arc<Mutex<HashMap<String, TurnControl>>>,
}

impl RunningTurns {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, TurnControl>> {
        self.turns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers the turn of `conversation_id` until the guard is dropped.
    pub(crate) fn register(&self, conversation_id: &str, control: TurnControl) -> Registration {
        self.lock().insert(conversation_id.to_owned(), control);
        Registration {
            turns: self.clone(),
            conversation_id: conversation_id.to_owned(),
        }
    }

    /// Stops the conversation's turn if it runs here; returns whether it did.
    pub fn stop(&self, conversation_id: &str) -> bool {
        match self.lock().get(conversation_id) {
            Some(control) => {
                control.stop();
                true
            }
            None => false,
        }
    }

    /// Tells the conversation's turn, if it runs here, that a message waits
    /// to steer it.
    pub fn steer(&self, conversation_id: &str) {
        if let Some(control) = self.lock().get(conversation_id) {
            control.steering_waiting();
        }
    }

    /// Whether a turn of the conversation runs in this process.
    pub fn is_running(&self, conversation_id: &str) -> bool {
        self.lock().contains_key(conversation_id)
    }
}

/// Removes the registration when the turn ends, however it ends.
pub(crate) struct Registration {
    turns: RunningTurns,
    conversation_id: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.turns.lock().remove(&self.conversation_id);
    }
}
