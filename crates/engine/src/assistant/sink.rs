//! Collects a turn's agent events; they are written with the transcript, in
//! the same transaction, once the turn ends.

use agents::{Event, EventSink};
use async_trait::async_trait;
use std::sync::{Mutex, PoisonError};

#[derive(Debug, Default)]
pub(crate) struct TurnEvents {
    events: Mutex<Vec<Event>>,
}

impl TurnEvents {
    pub(crate) fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[async_trait]
impl EventSink for TurnEvents {
    async fn record(&self, event: Event) {
        tracing::debug!(turn = event.turn, agent = %event.agent, event = ?event.kind, "agent event");
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }
}
