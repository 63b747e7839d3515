//! Messages written between agent turns: a person from the team who took
//! the conversation over, the customer writing to them, and notes saying who
//! joined or left. The agents read them on their next turn like any other
//! part of the transcript.

use crate::state::ConversationState;
use crate::transcript::Message;

impl ConversationState {
    /// Appends `message`, written outside any agent turn. The caller holds
    /// the conversation (no turn runs), so no tool call is left open here.
    pub fn record_outside_turn(&mut self, message: Message) {
        self.push(message);
    }
}
