//! Orders as agents read them and the executor revalidates them.

use crate::Timestamp;
use crate::money::{Currency, Money, MoneyError};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderLine {
    pub sku: String,
    pub description: String,
    pub quantity: i32,
    pub unit_price_minor: i64,
}

/// A refund already made against an order, through any channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PastRefund {
    pub id: String,
    pub amount: Money,
    pub channel: String,
    pub reference: String,
    pub created_at: Timestamp,
}

/// The live order record at one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderSnapshot {
    pub id: String,
    pub customer_id: String,
    pub status: String,
    pub total: Money,
    pub payment_reference: String,
    pub placed_at: Timestamp,
    pub delivered_at: Option<Timestamp>,
    pub version: i64,
    pub lines: Vec<OrderLine>,
    pub refunds: Vec<PastRefund>,
}

impl OrderSnapshot {
    pub fn currency(&self) -> Currency {
        self.total.currency
    }

    /// Sum of refunds already made, in the order's currency.
    ///
    /// # Errors
    /// A past refund in another currency or an overflow: the record is
    /// inconsistent and nothing should be refunded automatically.
    pub fn refunded(&self) -> Result<Money, MoneyError> {
        let mut total = Money::new(0, self.currency());
        for refund in &self.refunds {
            if refund.amount.currency != self.currency() {
                return Err(MoneyError::CurrencyMismatch(
                    self.currency(),
                    refund.amount.currency,
                ));
            }
            total.amount_minor = total
                .amount_minor
                .checked_add(refund.amount.amount_minor)
                .ok_or(MoneyError::Overflow)?;
        }
        Ok(total)
    }

    /// What may still be refunded.
    ///
    /// # Errors
    /// As [`OrderSnapshot::refunded`].
    pub fn refundable(&self) -> Result<Money, MoneyError> {
        self.total.checked_sub(self.refunded()?)
    }

    /// Whole days between delivery and `now`, if delivered.
    pub fn days_since_delivery(&self, now: Timestamp) -> Option<i64> {
        self.delivered_at.map(|at| (now - at).num_days())
    }

    /// A stable digest of everything a refund decision depends on; an
    /// approval snapshot records it, and any change to the order changes it.
    pub fn content_hash(&self) -> String {
        crate::digest::sha256_json(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn order(refunds: Vec<i64>) -> OrderSnapshot {
        let at = chrono::Utc
            .with_ymd_and_hms(2026, 11, 18, 10, 0, 0)
            .unwrap();
        OrderSnapshot {
            id: "4821".into(),
            customer_id: "usr_1".into(),
            status: "delivered".into(),
            total: Money::new(7900, Currency::EUR),
            payment_reference: "pay_4821".into(),
            placed_at: at,
            delivered_at: Some(at),
            version: 1,
            lines: vec![],
            refunds: refunds
                .into_iter()
                .enumerate()
                .map(|(i, amount)| PastRefund {
                    id: format!("r{i}"),
                    amount: Money::new(amount, Currency::EUR),
                    channel: "support_desk".into(),
                    reference: "x".into(),
                    created_at: at,
                })
                .collect(),
        }
    }

    #[test]
    fn refundable_amount_subtracts_every_past_refund() {
        assert_eq!(order(vec![]).refundable().unwrap().amount_minor, 7900);
        assert_eq!(
            order(vec![1000, 900]).refundable().unwrap().amount_minor,
            6000
        );
    }

    #[test]
    fn content_hash_changes_when_a_refund_is_recorded() {
        assert_ne!(
            order(vec![]).content_hash(),
            order(vec![100]).content_hash()
        );
        assert_eq!(order(vec![]).content_hash(), order(vec![]).content_hash());
    }
}
