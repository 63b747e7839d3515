//! What of each conversation runs in this process: its turn, and the
//! subagents started by its turns (those of a preempted turn run on in the
//! background). Stop reaches all of it through the conversation's token; a
//! preempt (a `now` message) only the turn. (Stop from another replica goes
//! through the conversation row, which the running turn and the background
//! work both watch.)

use super::subagents::Roster;
use agents::{CancellationToken, SubagentLane, TurnControl};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

#[derive(Debug, Clone, Default)]
pub struct RunningTurns {
    conversations: Arc<Mutex<HashMap<String, Lanes>>>,
    next_holder: Arc<AtomicU64>,
}

/// One conversation's work in this process.
#[derive(Debug)]
struct Lanes {
    /// Stop: cancels the turn and every subagent of the conversation.
    stop: CancellationToken,
    /// The running turn, with the id of the registration that holds it.
    turn: Option<(u64, TurnControl)>,
    /// Every subagent running or waiting for a place, foreground or not.
    subagents: Roster,
    /// At most this many subagents run at once, across the conversation's
    /// turns.
    lane: SubagentLane,
    /// Registrations holding this entry (a turn, background work).
    holders: usize,
}

impl Lanes {
    fn new(lane_limit: usize) -> Self {
        Lanes {
            stop: CancellationToken::new(),
            turn: None,
            subagents: Roster::default(),
            lane: SubagentLane::new(lane_limit),
            holders: 0,
        }
    }
}

/// What a Stop reached in this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoppedHere {
    /// A turn was running.
    pub turn: bool,
    /// What each subagent stopped works on, running or waiting.
    pub subagents: Vec<String>,
}

/// What a turn registered with: the conversation's roster of subagents and
/// its lane.
pub(crate) struct TurnLanes {
    pub(crate) subagents: Roster,
    pub(crate) lane: SubagentLane,
    pub(crate) registration: Registration,
}

impl RunningTurns {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Lanes>> {
        self.conversations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds the conversation's entry (creating it) until the returned
    /// registration is dropped; `turn`, when given, is its running turn.
    fn hold(
        &self,
        conversation_id: &str,
        lane_limit: usize,
        turn: Option<&TurnControl>,
    ) -> (TurnLanes, CancellationToken) {
        let holder = self.next_holder.fetch_add(1, Ordering::Relaxed);
        let mut conversations = self.lock();
        let lanes = conversations
            .entry(conversation_id.to_owned())
            .or_insert_with(|| Lanes::new(lane_limit));
        // A Stop ended what ran before; what starts now starts afresh (the
        // stopped work keeps the cancelled token it holds).
        if lanes.stop.is_cancelled() {
            lanes.stop = CancellationToken::new();
        }
        lanes.holders += 1;
        if let Some(control) = turn {
            lanes.turn = Some((holder, control.clone()));
        }
        let held = TurnLanes {
            subagents: lanes.subagents.clone(),
            lane: lanes.lane.clone(),
            registration: Registration {
                turns: self.clone(),
                conversation_id: conversation_id.to_owned(),
                holder,
            },
        };
        (held, lanes.stop.clone())
    }

    /// Registers a turn of `conversation_id` until the registration is
    /// dropped. `control` ends it; the conversation's Stop stops it.
    pub(crate) fn register(
        &self,
        conversation_id: &str,
        control: &TurnControl,
        lane_limit: usize,
    ) -> TurnLanes {
        self.hold(conversation_id, lane_limit, Some(control)).0
    }

    /// Keeps the conversation's entry (its Stop, roster and lane) while
    /// background work of a preempted turn runs on; taken while that turn
    /// still holds the entry, so the work keeps the same one. Returns the
    /// token that the conversation's Stop cancels.
    pub(crate) fn hold_for_background(
        &self,
        conversation_id: &str,
        lane_limit: usize,
    ) -> (Registration, CancellationToken) {
        let (held, stop) = self.hold(conversation_id, lane_limit, None);
        (held.registration, stop)
    }

    /// Stops everything of the conversation that runs here: its turn and
    /// every subagent, running, waiting for a place or in the background.
    pub fn stop(&self, conversation_id: &str) -> Option<StoppedHere> {
        let conversations = self.lock();
        let lanes = conversations.get(conversation_id)?;
        let stopped = StoppedHere {
            turn: lanes.turn.is_some(),
            subagents: lanes.subagents.labels(),
        };
        if let Some((_, control)) = &lanes.turn {
            control.stop();
        }
        lanes.stop.cancel();
        Some(stopped)
    }

    /// Ends the conversation's turn if it runs here, for a newer message;
    /// what it started runs on. Returns whether a turn was running.
    pub fn preempt(&self, conversation_id: &str) -> bool {
        match self
            .lock()
            .get(conversation_id)
            .and_then(|lanes| lanes.turn.as_ref())
        {
            Some((_, control)) => {
                control.preempt();
                true
            }
            None => false,
        }
    }

    /// Tells the conversation's turn, if it runs here, that a message waits
    /// to steer it.
    pub fn steer(&self, conversation_id: &str) {
        if let Some((_, control)) = self
            .lock()
            .get(conversation_id)
            .and_then(|lanes| lanes.turn.as_ref())
        {
            control.steering_waiting();
        }
    }

    /// Whether a turn of the conversation runs in this process.
    pub fn is_running(&self, conversation_id: &str) -> bool {
        self.lock()
            .get(conversation_id)
            .is_some_and(|lanes| lanes.turn.is_some())
    }

    /// What each subagent of the conversation running here works on.
    pub fn subagents(&self, conversation_id: &str) -> Vec<String> {
        self.lock()
            .get(conversation_id)
            .map(|lanes| lanes.subagents.labels())
            .unwrap_or_default()
    }
}

/// Lets go of the conversation's entry when the turn or background work
/// that held it ends, however it ends; a turn's end clears only its own
/// turn (a newer turn may have registered meanwhile).
pub(crate) struct Registration {
    turns: RunningTurns,
    conversation_id: String,
    holder: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut conversations = self.turns.lock();
        let Some(lanes) = conversations.get_mut(&self.conversation_id) else {
            return;
        };
        if lanes
            .turn
            .as_ref()
            .is_some_and(|(holder, _)| *holder == self.holder)
        {
            lanes.turn = None;
        }
        lanes.holders = lanes.holders.saturating_sub(1);
        if lanes.holders == 0 {
            conversations.remove(&self.conversation_id);
        }
    }
}
