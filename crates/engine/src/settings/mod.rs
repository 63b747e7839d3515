//! Settings changes: approval limits, four-eyes thresholds and the staff
//! inbox's roles here; accounts,
//! roles, policies and widget sites in their own modules. Every change is
//! journaled in the transaction that makes it, with who made it, when, and
//! the value before and after (see [`domain::setting`]).

mod inbox;
mod journal;
mod limits;

pub use inbox::{INBOX_ROLE_CHOICES, InboxRolesError, set_inbox_roles};
pub use journal::ChangedBy;
pub(crate) use journal::record;
pub use limits::{LimitError, set_approval_limit, set_four_eyes_threshold};
