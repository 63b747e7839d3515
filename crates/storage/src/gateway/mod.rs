//! The gateway's tables: the inbox (the tasks other agent groups
//! sent here, each recorded once however often it is delivered) and what
//! this group trusts (pinned keys, allowed pairs).

pub mod inbox;
pub mod own_keys;
pub mod trust;
