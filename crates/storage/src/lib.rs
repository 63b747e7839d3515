//! Storage: SeaORM entities and repository functions.
//!
//! Repository functions take `&impl ConnectionTrait` and never begin or commit;
//! the use case that calls them owns the transaction ([`Database::begin_write`]).

pub mod approvals;
pub mod browser;
mod bulk;
pub mod conversation_messages;
pub mod conversations;
pub mod db;
pub mod entities;
pub mod error;
pub mod gateway;
pub mod handovers;
pub mod ids;
pub mod journal;
pub mod limits;
pub mod live;
mod many;
pub mod orders;
pub mod policies;
pub mod proposals;
pub mod receipts;
pub mod returns;
pub mod review_queue;
pub mod shop_orders;
#[cfg(feature = "testing")]
pub mod testing;
pub mod throttle;
pub mod tokens;
pub mod users;
pub mod widget;
pub mod work;
pub mod write_gate;

pub use db::{Backend, Database, WriteTx};
pub use error::StorageError;
pub use sea_orm::{ConnectionTrait, DatabaseConnection, DatabaseTransaction};
