//! Accounts: users, passwords, login throttling, API tokens.

pub mod login;
pub mod passwords;
pub mod throttle;
pub mod tokens;
pub mod users;

pub use login::{LoginError, authenticate};
pub use throttle::ThrottlePolicy;
pub use users::{AccountError, create_user, disable_user, enable_user, set_user_roles};
