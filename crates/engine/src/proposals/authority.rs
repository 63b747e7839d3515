//! Who may propose a refund, under which agent name, and how often.
//!
//! A proposal's agent name is bound to the credential that submits it,
//! never a field the caller picks: an agent service account proposes as
//! `external:<its user name>`, a staff member as `staff:<user name>`, and
//! only Countersign's own assistant uses its internal names
//! (`refund_specialist`). Customers and shops never propose through the
//! API; a customer's refund is prepared by the assistant in their
//! conversation. Every submitter is held to a number of submissions per
//! rolling window, so one credential cannot flood the review queue.

use crate::core::Actor;
use chrono::Duration;
use domain::proposal::Submitter;
use domain::{Role, Timestamp};
use storage::{ConnectionTrait, StorageError};

/// Staff who may propose (for a customer, as support desks do): someone
/// else must still approve it, the approval rules see to that.
pub const STAFF_PROPOSERS: &[Role] = &[Role::Approver, Role::Manager, Role::Admin];

/// Who submits a proposal, as the engine knows it.
#[derive(Debug, Clone, Copy)]
pub enum Proposer<'a> {
    /// A signed-in account (bearer token or session): an agent service
    /// account or a staff member.
    Account(&'a Actor),
    /// Countersign's own assistant under one of the runtime's agent names,
    /// in a conversation with `customer_id` whose message `sender` sent.
    Assistant {
        agent: &'a str,
        sender: &'a Actor,
        customer_id: &'a str,
    },
}

/// The most proposals one submitter may submit within a rolling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubmissionLimit {
    pub max_per_window: u64,
    pub window: Duration,
}

impl Default for SubmissionLimit {
    /// 30 an hour: far above what a conversation or a careful agent
    /// submits, far below a flood of the queue.
    fn default() -> Self {
        SubmissionLimit {
            max_per_window: 30,
            window: Duration::hours(1),
        }
    }
}

/// Why this proposer may not propose as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not an agent service account or staff.
    NotAllowed,
    /// The body named another agent than the credential's own.
    AgentNotYours { given: String, bound: String },
}

impl Proposer<'_> {
    /// The account whose credential submits: held to the limit and shown
    /// on the card.
    pub fn submitter(&self) -> Submitter {
        let actor = match self {
            Proposer::Account(actor) => actor,
            Proposer::Assistant { sender, .. } => sender,
        };
        Submitter {
            user_id: actor.user_id.clone(),
            name: actor.name.clone(),
        }
    }

    /// The user the proposal is requested by (the approval rules keep them
    /// from approving it).
    pub fn requested_by(&self) -> &str {
        match self {
            Proposer::Account(actor) => &actor.user_id,
            Proposer::Assistant { sender, .. } => &sender.user_id,
        }
    }

    /// How the journal names whoever submitted (the agent is in the
    /// proposal's provenance).
    pub fn journal_name(&self) -> String {
        match self {
            Proposer::Account(actor) | Proposer::Assistant { sender: actor, .. } => {
                actor.journal_name()
            }
        }
    }

    /// The customer whose own orders alone this proposer may propose for
    /// (the assistant in a customer's conversation); None: any order.
    pub fn only_orders_of(&self) -> Option<&str> {
        match self {
            Proposer::Account(_) => None,
            Proposer::Assistant { customer_id, .. } => Some(customer_id),
        }
    }

    /// The agent name proposals from this proposer carry, after checking
    /// the proposer may propose and that a name given in the body (kept
    /// for older clients) is that very name.
    ///
    /// # Errors
    /// [`Refusal`] naming what is wrong.
    pub fn agent_name(&self, given: Option<&str>) -> Result<String, Refusal> {
        let bound = match self {
            Proposer::Assistant { agent, .. } => (*agent).to_owned(),
            Proposer::Account(actor) if actor.roles.contains(Role::Agent) => {
                format!("external:{}", actor.name)
            }
            Proposer::Account(actor) if actor.roles.any_of(STAFF_PROPOSERS) => {
                format!("staff:{}", actor.name)
            }
            Proposer::Account(_) => return Err(Refusal::NotAllowed),
        };
        match given.map(str::trim) {
            Some(given) if given != bound => Err(Refusal::AgentNotYours {
                given: given.to_owned(),
                bound,
            }),
            _ => Ok(bound),
        }
    }
}

/// Checks the submitter's budget inside the submission's write transaction
/// (PostgreSQL: an advisory lock per submitter, so parallel submissions
/// cannot all slip under the limit; SQLite writers already run one at a
/// time). Returns the seconds until a slot frees when the budget is spent.
///
/// # Errors
/// Database failures.
pub async fn seconds_until_allowed(
    db: &impl ConnectionTrait,
    limit: SubmissionLimit,
    submitter: &str,
    now: Timestamp,
) -> Result<Option<u64>, StorageError> {
    storage::throttle::lock_scope(db, &format!("proposals:{submitter}")).await?;
    let (count, oldest) =
        storage::proposals::submitted_since(db, submitter, now - limit.window).await?;
    if count < limit.max_per_window {
        return Ok(None);
    }
    let frees_at = oldest.unwrap_or(now) + limit.window;
    // Whole seconds, rounded up: a client that waits that long finds a slot.
    let millis = u64::try_from((frees_at - now).num_milliseconds()).unwrap_or(0);
    Ok(Some(millis.div_ceil(1000).max(1)))
}
