//! Accounts: users, passwords, login throttling, API tokens.
//!
//! [`Accounts`] is the service: it holds the database, the clock and the
//! sign-in throttle, and nothing else; callers reach it as
//! `engine.accounts` (or build one on its own, as the command line does).

pub mod login;
pub mod passwords;
pub mod throttle;
pub mod tokens;
pub mod users;

pub use login::LoginError;
pub use throttle::ThrottlePolicy;
pub use tokens::{CreatedToken, TokenError, hash_secret};
pub use users::{AccountError, CreateUser};

use crate::clock::Clock;
use storage::Database;

/// Users, sign-in and API tokens.
#[derive(Debug, Clone)]
pub struct Accounts {
    db: Database,
    clock: Clock,
    throttle: ThrottlePolicy,
}

impl Accounts {
    pub fn new(db: Database, clock: Clock, throttle: ThrottlePolicy) -> Self {
        Accounts {
            db,
            clock,
            throttle,
        }
    }

    /// On wall time with the default throttle: for the command line and
    /// set-ups that run without an engine.
    pub fn with_system_clock(db: Database) -> Self {
        Accounts::new(db, Clock::system(), ThrottlePolicy::default())
    }

    /// The sign-in throttle this service applies.
    pub fn throttle(&self) -> &ThrottlePolicy {
        &self.throttle
    }
}
