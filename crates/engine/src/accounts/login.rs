//! Checking a password, with throttling that does not reveal which accounts exist.

use super::Accounts;
use super::passwords::{verify_against_dummy, verify_password};
use super::throttle::{ThrottlePolicy, account_address_scope, account_scope, address_scope};
use domain::{Timestamp, UserName};
use storage::users::UserRecord;
use storage::{StorageError, throttle};

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("wrong user name or password")]
    InvalidCredentials,
    #[error(
        "too many failed sign-ins for this account from your network address; try again in {} minute(s)",
        retry_after_secs.div_ceil(60)
    )]
    AccountThrottled { retry_after_secs: u64 },
    #[error(
        "too many failed sign-ins from your network address; try again in {} minute(s)",
        retry_after_secs.div_ceil(60)
    )]
    AddressThrottled { retry_after_secs: u64 },
    #[error(
        "this account has had many failed sign-ins; wait {retry_after_secs} second(s) and try again"
    )]
    AccountSlowed { retry_after_secs: u64 },
    #[error("this account is disabled")]
    Disabled,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl Accounts {
    /// Verifies a user name and password from `client_address`.
    ///
    /// Throttles are checked before the password, so a throttled attempt learns
    /// nothing. Each failure is recorded for the account name (even a
    /// non-existent one), for the address and for the pair; success forgets the
    /// pair's failures and this attempt's. See [`super::throttle`] for why no
    /// stranger can lock someone else's account.
    ///
    /// # Errors
    /// [`LoginError`] as documented on each variant.
    pub async fn login(
        &self,
        name: &str,
        password: &str,
        client_address: &str,
    ) -> Result<UserRecord, LoginError> {
        let (db, policy, now) = (&self.db, &self.throttle, self.clock.now());
        let normalized = UserName::parse(name).map(|n| n.as_str().to_owned());
        let account_name = normalized.as_deref().unwrap_or(name.trim());
        let account = account_scope(account_name);
        let pair = account_address_scope(account_name, client_address);
        let address = address_scope(client_address);
        let since = now - policy.window;

        // The attempt is counted as a failure before the (slow) password check,
        // in the same transaction as the limit checks: parallel attempts cannot
        // all slip under a limit. A correct password takes it back.
        let tx = db.begin_write().await?;
        throttle::lock_scope(&*tx, &address).await?;
        throttle::lock_scope(&*tx, &account).await?;
        let (address_failures, oldest) = throttle::failures_since(&*tx, &address, since).await?;
        if address_failures >= policy.max_failures_per_address {
            return Err(LoginError::AddressThrottled {
                retry_after_secs: retry_after(oldest, policy, now),
            });
        }
        let (pair_failures, oldest) = throttle::failures_since(&*tx, &pair, since).await?;
        if pair_failures >= policy.max_failures_per_account_and_address {
            return Err(LoginError::AccountThrottled {
                retry_after_secs: retry_after(oldest, policy, now),
            });
        }
        let (account_failures, _) = throttle::failures_since(&*tx, &account, since).await?;
        let latest = throttle::newest_failure_since(&*tx, &account, since).await?;
        if let Some(next) = policy.account_next_attempt(account_failures, latest)
            && next > now
        {
            return Err(LoginError::AccountSlowed {
                retry_after_secs: seconds_until(next, now),
            });
        }
        let attempt = [
            throttle::record_failure(&*tx, &account, now).await?,
            throttle::record_failure(&*tx, &pair, now).await?,
            throttle::record_failure(&*tx, &address, now).await?,
        ];
        tx.commit().await?;

        let user = match &normalized {
            Ok(name) => storage::users::find_by_name(db.conn(), name).await?,
            Err(_) => None,
        };
        let verified = match &user {
            Some(user) => verify_password(password, &user.password_hash),
            None => {
                verify_against_dummy(password);
                false
            }
        };
        match user {
            Some(user) if verified => {
                let tx = db.begin_write().await?;
                throttle::clear(&*tx, &pair).await?;
                for id in attempt {
                    throttle::forget(&*tx, id).await?;
                }
                tx.commit().await?;
                if user.disabled {
                    return Err(LoginError::Disabled);
                }
                Ok(user)
            }
            // Already counted above.
            _ => Err(LoginError::InvalidCredentials),
        }
    }
}

fn retry_after(oldest: Option<Timestamp>, policy: &ThrottlePolicy, now: Timestamp) -> u64 {
    oldest
        .map(|oldest| (oldest + policy.window - now).num_seconds().max(1))
        .unwrap_or(policy.window.num_seconds())
        .unsigned_abs()
}

/// Whole seconds from `now` to `then`, at least one.
fn seconds_until(then: Timestamp, now: Timestamp) -> u64 {
    let millis = (then - now).num_milliseconds().max(1).unsigned_abs();
    millis.div_ceil(1000)
}
