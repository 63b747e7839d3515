//! What the application hands every tool of a turn, through the tool
//! context: who is acting, for which customer, in which conversation, and the
//! ledger of what this conversation has actually read. The model sees none
//! of it and can change none of it.

use super::ledger::Ledger;
use super::subagents::TurnSubagents;
use super::tools::ToolPort;
use crate::core::Actor;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

/// The scope of one turn.
#[derive(Clone)]
pub struct TurnScope {
    /// Everything the tools may ask of the application.
    pub tools: Arc<dyn ToolPort>,
    pub conversation_id: String,
    /// Who sends the messages and whose records the tools may read: fixed
    /// for the turn, except that a visitor who signs in while the turn
    /// waits for it becomes that customer (shared with its subagents).
    identity: Arc<RwLock<Identity>>,
    ledger: Arc<Mutex<Ledger>>,
    /// Where the turn's tools start subagents; none inside a subagent.
    subagents: Option<TurnSubagents>,
}

#[derive(Debug, Clone)]
struct Identity {
    actor: Actor,
    customer_id: Option<String>,
}

impl TurnScope {
    /// `customer_id` is none while a visitor who has not signed in holds
    /// the conversation: no customer's records are readable then.
    pub fn new(
        tools: Arc<dyn ToolPort>,
        actor: Actor,
        conversation_id: String,
        customer_id: Option<String>,
        ledger: Ledger,
    ) -> Self {
        TurnScope {
            tools,
            conversation_id,
            identity: Arc::new(RwLock::new(Identity { actor, customer_id })),
            ledger: Arc::new(Mutex::new(ledger)),
            subagents: None,
        }
    }

    /// The authenticated user sending the message; proposals are submitted
    /// as them.
    pub fn actor(&self) -> Actor {
        self.identity().actor.clone()
    }

    /// The only customer whose records the tools may return; none before
    /// the visitor signs in.
    pub fn customer_id(&self) -> Option<String> {
        self.identity().customer_id.clone()
    }

    /// The visitor signed in as `customer` while the turn waited: from now
    /// on the turn acts as them and reads their records.
    pub fn signed_in(&self, customer: Actor) {
        let mut identity = self
            .identity
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        identity.customer_id = Some(customer.user_id.clone());
        identity.actor = customer;
    }

    fn identity(&self) -> std::sync::RwLockReadGuard<'_, Identity> {
        // Nothing can be left half-written by a panic: both fields are
        // replaced together under the lock.
        self.identity.read().unwrap_or_else(PoisonError::into_inner)
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
            conversation_id: self.conversation_id.clone(),
            identity: Arc::clone(&self.identity),
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
            .field("actor", &self.actor().user_id)
            .field("conversation_id", &self.conversation_id)
            .field("customer_id", &self.customer_id())
            .finish_non_exhaustive()
    }
}
