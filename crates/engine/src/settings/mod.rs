//! Settings changes: approval limits, four-eyes thresholds and the staff
//! inbox's roles here; accounts,
//! roles, policies and widget sites in their own modules. Every change is
//! journaled in the transaction that makes it, with who made it, when, and
//! the value before and after (see [`domain::setting`]).

mod inbox;
mod journal;
mod limits;

pub use inbox::{INBOX_ROLE_CHOICES, InboxRolesError};
pub use journal::ChangedBy;
pub(crate) use journal::record;
pub use limits::LimitError;

use crate::clock::Clock;
use storage::Database;

/// Changes to the team's rules (approval limits, four-eyes thresholds,
/// who sees the staff inbox), each journaled with who made it.
#[derive(Debug, Clone)]
pub struct TeamSettings {
    db: Database,
    clock: Clock,
}

impl TeamSettings {
    pub fn new(db: Database, clock: Clock) -> Self {
        TeamSettings { db, clock }
    }
}
