//! Where an in-memory sandbox provider learns of the shop's charges: from
//! the order store. A real provider knows every payment because the
//! customer paid through it; the sandbox stands for that world, and after a
//! restart it would otherwise have forgotten every charge. It learns a
//! charge once, at first sight, as the order record shows it then (its
//! total, and the refunds already booked); from then on the sandbox keeps
//! its own count, so refunds made directly at it ("another channel") are
//! its truth, not Countersign's.

use async_trait::async_trait;
use connectors::sandbox::{ChargeSeed, ChargeSource};
use storage::Database;

/// A [`ChargeSource`] reading the orders table.
#[derive(Clone)]
pub struct OrderStoreCharges {
    db: Database,
}

impl OrderStoreCharges {
    pub fn new(db: Database) -> Self {
        OrderStoreCharges { db }
    }
}

#[async_trait]
impl ChargeSource for OrderStoreCharges {
    async fn charge(&self, id: &str) -> Option<ChargeSeed> {
        let order = match storage::orders::find_by_payment_reference(self.db.conn(), id).await {
            Ok(order) => order?,
            Err(error) => {
                tracing::warn!(%error, payment_reference = id, "the sandbox could not read the order store");
                return None;
            }
        };
        let refunded = order.refunded().map(|m| m.amount_minor).unwrap_or(0);
        Some(ChargeSeed {
            amount_minor: order.total.amount_minor,
            currency: order.currency().code().to_owned(),
            amount_refunded_minor: refunded,
        })
    }
}
