//! What the application hands every tool of a turn, through the tool
//! context: who is acting, for which customer, in which conversation, and the
//! ledger of what this conversation has actually read. The model sees none
//! of it and can change none of it.

use super::ledger::Ledger;
use super::subagents::TurnSubagents;
use super::tools::ToolPort;
use crate::core::Actor;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The scope of one turn.
#[derive(Clone)]
pub struct TurnScope {
    /// Everything the tools may ask of the application.
    pub tools: Arc<dyn ToolPort>,
    /// The authenticated user sending the message; proposals are submitted as them.
    pub actor: Actor,
    pub conversation_id: String,
    /// The only customer whose records the tools may return.
    pub customer_id: String,
    ledger: Arc<Mutex<Ledger>>,
    /// Where the turn's tools start subagents; none inside a subagent.
    subagents: Option<TurnSubagents>,
}

impl TurnScope {
    pub fn new(
        tools: Arc<dyn ToolPort>,
        actor: Actor,
        conversation_id: String,
        customer_id: String,
        ledger: Ledger,
    ) -> Self {
        TurnScope {
            tools,
            actor,
            conversation_id,
            customer_id,
            ledger: Arc::new(Mutex::new(ledger)),
            subagents: None,
        }
    }

    /// The same scope, its tools able to start subagents.
    #[must_use]
    pub fn with_subagents(mut self, subagents: TurnSubagents) -> Self {
        self.subagents = Some(subagents);
        self
    }

    /// Where the turn's tools start subagents (none inside a subagent).
    pub fn subagents(&self) -> Option<&TurnSubagents> {
        self.subagents.as_ref()
    }

    /// A subagent's scope: the same actor, conversation and customer, and
    /// a copy of what the conversation has established so far (its own
    /// from here on; what it finds comes back through its result). It
    /// starts no subagents of its own.
    pub fn for_subagent(&self) -> TurnScope {
        TurnScope {
            tools: Arc::clone(&self.tools),
            actor: self.actor.clone(),
            conversation_id: self.conversation_id.clone(),
            customer_id: self.customer_id.clone(),
            ledger: Arc::new(Mutex::new(self.ledger().clone())),
            subagents: None,
        }
    }

    /// The ledger, shared by the turn's tools. A panic in one tool must not
    /// lock the others out, so poisoning is ignored (the ledger has no
    /// invariant a half-finished update could break).
    pub fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for TurnScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnScope")
            .field("actor", &self.actor.user_id)
            .field("conversation_id", &self.conversation_id)
            .field("customer_id", &self.customer_id)
            .finish_non_exhaustive()
    }
}
