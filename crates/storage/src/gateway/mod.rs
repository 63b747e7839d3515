//! The gateway's tables: the inbox (the tasks other agent groups
//! sent here, each recorded once however often it is delivered), the
//! outbox (the tasks this group sends), where peers are reached, and what
//! this group trusts (pinned keys, allowed pairs, pairs allowed without
//! signatures).

pub mod inbox;
pub mod outbox;
pub mod own_keys;
pub mod peer_secrets;
pub mod peers;
pub mod trust;
pub mod unsigned;
