//! Login throttling, kept in the database so every server replica sees the
//! same counts. Three scopes, so that nobody can lock someone else out:
//!
//! - **account and address**: failures for one account from one address
//!   lock that pair only. A stranger guessing at Ada's account from their
//!   own address locks themselves out, not Ada at her desk.
//! - **address**: failures from one address across all accounts lock the
//!   address (one machine spraying many accounts).
//! - **account**: failures for one account from every address together slow
//!   it down rather than lock it: past a free allowance, each further
//!   attempt must wait a delay after the latest failure that doubles with
//!   every failure, up to a cap. An attacker rotating addresses gets at most
//!   one guess per cap; the owner waits at most the cap.

use chrono::Duration;
use domain::Timestamp;

#[derive(Debug, Clone, Copy)]
pub struct ThrottlePolicy {
    /// Failures for one account from one address within `window` after
    /// which that address may not try that account.
    pub max_failures_per_account_and_address: u64,
    /// Failures from one address within `window` after which it is locked.
    pub max_failures_per_address: u64,
    pub window: Duration,
    /// Failures for one account from all addresses within `window` before
    /// attempts on it are spaced out.
    pub account_delay_after: u64,
    /// The first spacing; it doubles with each further failure.
    pub account_delay_base: Duration,
    /// The longest spacing.
    pub account_delay_cap: Duration,
}

impl Default for ThrottlePolicy {
    fn default() -> Self {
        ThrottlePolicy {
            max_failures_per_account_and_address: 5,
            max_failures_per_address: 20,
            window: Duration::minutes(15),
            account_delay_after: 10,
            account_delay_base: Duration::seconds(1),
            account_delay_cap: Duration::seconds(30),
        }
    }
}

impl ThrottlePolicy {
    /// When the next attempt on an account may come, given its failures
    /// (from all addresses) within the window and the latest of them; none
    /// while under the allowance.
    #[must_use]
    pub fn account_next_attempt(
        &self,
        failures: u64,
        latest: Option<Timestamp>,
    ) -> Option<Timestamp> {
        let latest = latest?;
        let beyond = failures.checked_sub(self.account_delay_after)?;
        let factor = 1i32 << beyond.min(20);
        let delay = self
            .account_delay_base
            .checked_mul(factor)
            .unwrap_or(self.account_delay_cap)
            .min(self.account_delay_cap);
        Some(latest + delay)
    }
}

pub fn account_scope(name: &str) -> String {
    format!("account:{name}")
}

pub fn address_scope(address: &str) -> String {
    format!("address:{address}")
}

/// One account tried from one address.
pub fn account_address_scope(name: &str, address: &str) -> String {
    format!("account-address:{name}|{address}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_is_slowed_only_past_its_allowance_and_never_beyond_the_cap() {
        let policy = ThrottlePolicy::default();
        let latest = chrono::Utc::now();
        assert_eq!(policy.account_next_attempt(9, Some(latest)), None);
        assert_eq!(policy.account_next_attempt(12, None), None);
        assert_eq!(
            policy.account_next_attempt(10, Some(latest)),
            Some(latest + Duration::seconds(1))
        );
        assert_eq!(
            policy.account_next_attempt(13, Some(latest)),
            Some(latest + Duration::seconds(8))
        );
        for failures in [15, 40, 10_000, u64::MAX] {
            assert_eq!(
                policy.account_next_attempt(failures, Some(latest)),
                Some(latest + Duration::seconds(30)),
                "{failures}"
            );
        }
    }
}
