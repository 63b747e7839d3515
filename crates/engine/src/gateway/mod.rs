//! The gateway between agent groups, the receiving side so far: a task
//! another group sends is checked against what this group trusts (pinned
//! keys, allowed pairs, the kinds it accepts) and written to the inbox once,
//! with its journal event; a refusal is journaled with its reason.

mod admin;
mod kinds;
mod own_keys;
mod receive;
mod trust;

pub use admin::{GatewayTrust, KeyToPin, TrustError};
pub use kinds::{RETURNS_INSPECTION, catalogue};
pub use own_keys::{GATEWAY_KEY_ID, OwnKeyError, OwnKeys};
pub use receive::{InboxTaskView, ReceiveError, ReceivedTask, Receiver};
