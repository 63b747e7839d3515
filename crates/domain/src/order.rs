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

/// What happened to an order's parcel, as the shop reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryKind {
    Shipped,
    Delivered,
    Returned,
}

impl DeliveryKind {
    pub const ALL: [DeliveryKind; 3] = [
        DeliveryKind::Shipped,
        DeliveryKind::Delivered,
        DeliveryKind::Returned,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            DeliveryKind::Shipped => "shipped",
            DeliveryKind::Delivered => "delivered",
            DeliveryKind::Returned => "returned",
        }
    }
}

/// One delivery event: what happened and when (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliveryEvent {
    pub kind: DeliveryKind,
    pub at: Timestamp,
}

/// The status of an order no delivery event has reached yet.
pub const STATUS_PLACED: &str = "placed";

/// The status and delivery time that delivery events say, so the two can
/// never disagree with the events: the status is the kind of the latest
/// event (`placed` without any), `delivered_at` the latest delivery (a
/// return keeps it: return windows count from delivery).
pub fn delivery_status(events: &[DeliveryEvent]) -> (String, Option<Timestamp>) {
    // The latest by time; of events at the same instant, the one listed last.
    let latest = events
        .iter()
        .enumerate()
        .max_by_key(|(position, event)| (event.at, *position))
        .map(|(_, event)| event.kind);
    let delivered_at = events
        .iter()
        .filter(|event| event.kind == DeliveryKind::Delivered)
        .map(|event| event.at)
        .max();
    let status = latest.map_or(STATUS_PLACED, |kind| kind.as_str());
    (status.to_owned(), delivered_at)
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

    fn event(kind: DeliveryKind, day: u32) -> DeliveryEvent {
        DeliveryEvent {
            kind,
            at: chrono::Utc
                .with_ymd_and_hms(2026, 11, day, 9, 0, 0)
                .unwrap(),
        }
    }

    #[test]
    fn status_and_delivery_time_follow_the_latest_delivery_events() {
        assert_eq!(delivery_status(&[]), (STATUS_PLACED.to_owned(), None));
        let shipped = event(DeliveryKind::Shipped, 2);
        let delivered = event(DeliveryKind::Delivered, 4);
        let returned = event(DeliveryKind::Returned, 9);
        assert_eq!(delivery_status(&[shipped]), ("shipped".to_owned(), None));
        // Listed out of order, the events still say delivered on the 4th.
        assert_eq!(
            delivery_status(&[delivered, shipped]),
            ("delivered".to_owned(), Some(delivered.at))
        );
        // A return keeps the delivery time that return windows count from.
        assert_eq!(
            delivery_status(&[shipped, delivered, returned]),
            ("returned".to_owned(), Some(delivered.at))
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
