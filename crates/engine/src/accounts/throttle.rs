//! Login throttling per account and per client address, kept in the database
//! so every server replica sees the same counts.

use chrono::Duration;

#[derive(Debug, Clone, Copy)]
pub struct ThrottlePolicy {
    /// Failures within `window` after which an account is locked.
    pub max_failures_per_account: u64,
    /// Failures within `window` after which an address is locked.
    pub max_failures_per_address: u64,
    pub window: Duration,
}

impl Default for ThrottlePolicy {
    fn default() -> Self {
        ThrottlePolicy {
            max_failures_per_account: 5,
            max_failures_per_address: 20,
            window: Duration::minutes(15),
        }
    }
}

pub fn account_scope(name: &str) -> String {
    format!("account:{name}")
}

pub fn address_scope(address: &str) -> String {
    format!("address:{address}")
}
