//! The turns running in this process, by conversation, so Stop can reach
//! the in-flight turn's control and say which of its subagents it stops.
//! (Stop from another replica goes through the conversation row; the
//! running turn watches it.)

use super::subagents::Roster;
use agents::TurnControl;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

#[derive(Debug, Clone, Default)]
pub struct RunningTurns {
    turns: Arc<Mutex<HashMap<String, Running>>>,
}

#[derive(Debug)]
struct Running {
    control: TurnControl,
    subagents: Roster,
}

/// What a Stop reached in this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoppedHere {
    /// What each subagent of the turn that was running works on.
    pub subagents: Vec<String>,
}

impl RunningTurns {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Running>> {
        self.turns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers the turn of `conversation_id` until the guard is dropped.
    pub(crate) fn register(
        &self,
        conversation_id: &str,
        control: TurnControl,
        subagents: Roster,
    ) -> Registration {
        self.lock()
            .insert(conversation_id.to_owned(), Running { control, subagents });
        Registration {
            turns: self.clone(),
            conversation_id: conversation_id.to_owned(),
        }
    }

    /// Stops the conversation's turn, and with it its subagents, if it
    /// runs here.
    pub fn stop(&self, conversation_id: &str) -> Option<StoppedHere> {
        let turns = self.lock();
        let running = turns.get(conversation_id)?;
        let subagents = running.subagents.labels();
        running.control.stop();
        Some(StoppedHere { subagents })
    }

    /// Tells the conversation's turn, if it runs here, that a message waits
    /// to steer it.
    pub fn steer(&self, conversation_id: &str) {
        if let Some(running) = self.lock().get(conversation_id) {
            running.control.steering_waiting();
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
