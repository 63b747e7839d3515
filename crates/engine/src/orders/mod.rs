//! The order source: a shop's backend feeds its orders (an idempotent,
//! versioned upsert), records refunds it made through other channels and
//! the shipments its orders went out with;
//! the import command feeds files of orders through the same use case.
//!
//! The shop's `source_version` decides which content wins; Countersign's
//! own `orders.version` moves whenever the stored order changes (a
//! replacement or a refund booking), so approvals given on an older order
//! fail revalidation. Every write is journaled in the order's stream
//! (`order:<id>`) in the same transaction; a repeat writes nothing.

pub mod import;
mod input;
mod refunds;
mod shipment;
mod upsert;
mod validate;

pub use input::{LineInput, OrderUpsert, RecordRefund};
pub use refunds::RecordedRefund;
pub use shipment::{MAX_CARRIER_LEN, ShipmentChange, ShipmentInput, is_carrier_name};
pub use upsert::{Change, UpsertOutcome};
pub use validate::{MAX_EVENTS, MAX_EXTERNAL_ID_LEN, MAX_LINES, check_external_id};

use crate::clock::Clock;
use crate::core::Actor;
use connectors::PaymentProvider;
use domain::{Money, MoneyError, Role};
use std::sync::Arc;
use storage::Database;
use storage::StorageError;
use storage::shop_orders::SourcedOrder;

/// The order source: the shops' orders and the refunds they made
/// elsewhere.
#[derive(Clone)]
pub struct Orders {
    db: Database,
    clock: Clock,
    /// Checks that it can address each order's payment reference.
    provider: Arc<dyn PaymentProvider>,
}

impl Orders {
    pub fn new(db: Database, clock: Clock, provider: Arc<dyn PaymentProvider>) -> Self {
        Orders {
            db,
            clock,
            provider,
        }
    }
}

impl std::fmt::Debug for Orders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orders")
            .field("provider", &self.provider.name())
            .finish_non_exhaustive()
    }
}

/// Who feeds orders: a `shop` (or `admin`) account, or the operator at the
/// command line. Holding one is the permission to write orders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feeder {
    journal_name: String,
}

impl Feeder {
    /// The caller, if their roles allow feeding orders.
    ///
    /// # Errors
    /// [`OrderError::NotAllowed`] for anyone but a shop or an admin.
    pub fn from_actor(actor: &Actor) -> Result<Feeder, OrderError> {
        if !actor.roles.any_of(&[Role::Shop, Role::Admin]) {
            return Err(OrderError::NotAllowed);
        }
        Ok(Feeder {
            journal_name: actor.journal_name(),
        })
    }

    /// The operator running `countersign orders import` (who has the
    /// database credentials, like every command that opens it).
    pub fn command_line() -> Feeder {
        Feeder {
            journal_name: "cli:orders-import".to_owned(),
        }
    }

    /// How the journal names the feeder.
    pub fn journal_name(&self) -> &str {
        &self.journal_name
    }
}

/// An order as its shop sees it: what is stored, named by customer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRecord {
    pub customer_name: String,
    pub sourced: SourcedOrder,
}

impl OrderRecord {
    /// What may still be refunded.
    ///
    /// # Errors
    /// Refunds in another currency or an overflow (an inconsistent record).
    pub fn refundable(&self) -> Result<Money, MoneyError> {
        self.sourced.order.refundable()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error("only shop and admin accounts may feed orders")]
    NotAllowed,
    #[error("{0}")]
    InvalidExternalId(String),
    #[error("{0}")]
    Invalid(String),
    #[error("no customer named {0:?}")]
    UnknownCustomer(String),
    #[error("user {0:?} is not a customer")]
    NotACustomer(String),
    #[error("payment_reference: {0}")]
    PaymentReference(String),
    #[error(
        "order {order_id} is stored at source version {stored}; version {given} is older and was not applied"
    )]
    StaleVersion {
        order_id: String,
        stored: i64,
        given: i64,
    },
    #[error(
        "order {order_id} is stored at source version {stored} with different content; send a higher source_version to change it"
    )]
    ConflictingContent { order_id: String, stored: i64 },
    #[error("no order {0}")]
    OrderNotFound(String),
    #[error("{0}")]
    RefundConflict(String),
    #[error("{requested} is more than the {refundable} still refundable on order {order_id}")]
    OverRefund {
        order_id: String,
        requested: Money,
        refundable: Money,
    },
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl OrderError {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        OrderError::Invalid(message.into())
    }
}

/// The order with its customer's name, read outside any transaction. Only
/// a [`Feeder`] (a shop, an admin) may read orders this way.
///
/// # Errors
/// [`OrderError::InvalidExternalId`], [`OrderError::OrderNotFound`],
/// storage failures.
impl Orders {
    pub async fn get_order(
        &self,
        _permission: &Feeder,
        external_id: &str,
    ) -> Result<OrderRecord, OrderError> {
        let external_id = check_external_id(external_id)?;
        let sourced = storage::shop_orders::get(self.db.conn(), &external_id)
            .await?
            .ok_or_else(|| OrderError::OrderNotFound(external_id.clone()))?;
        record_of(self.db.conn(), sourced).await
    }
}

/// Names the order's customer.
async fn record_of(
    db: &impl storage::ConnectionTrait,
    sourced: SourcedOrder,
) -> Result<OrderRecord, OrderError> {
    let customer_name = storage::users::find_by_id(db, &sourced.order.customer_id)
        .await?
        .map(|user| user.name)
        .unwrap_or_default();
    Ok(OrderRecord {
        customer_name,
        sourced,
    })
}
