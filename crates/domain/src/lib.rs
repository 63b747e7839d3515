//! Countersign's domain: the types every layer shares and the rules that need
//! no database, network or clock. It compiles to wasm so the browser shows the
//! same types the server checks.

pub mod digest;
pub mod money;
pub mod order;
pub mod proposal;
pub mod role;
pub mod setting;
pub mod user;

pub use money::{Currency, Money, MoneyError};
pub use order::{DeliveryEvent, DeliveryKind, OrderLine, OrderSnapshot, PastRefund};
pub use role::{Role, RoleSet};
pub use setting::{SettingChange, SettingKind};
pub use user::{UserName, UserNameError, UserSummary};

/// All times in Countersign are UTC.
pub type Timestamp = chrono::DateTime<chrono::Utc>;
