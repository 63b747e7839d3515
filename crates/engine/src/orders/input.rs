//! What a shop sends, as it sends it. Unknown fields are refused, so a
//! misspelt `shiping_minor` is an error rather than a silent zero.

use domain::{DeliveryEvent, Timestamp};
use serde::{Deserialize, Serialize};

/// The body of `PUT /api/v1/orders/{external_id}`, and one order of an
/// import file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderUpsert {
    /// The shop's order id. The API takes it from the path (a body that
    /// also gives it must agree); an import line must give it.
    #[serde(default)]
    pub external_id: Option<String>,
    /// The shop's version of this order, at least 1: a higher one replaces
    /// the stored order, the same one must carry the same content.
    pub source_version: i64,
    /// The Countersign user name of the customer.
    pub customer: String,
    pub placed_at: Timestamp,
    /// ISO 4217, e.g. `EUR`.
    pub currency: String,
    pub lines: Vec<LineInput>,
    #[serde(default)]
    pub shipping_minor: i64,
    #[serde(default)]
    pub discount_minor: i64,
    /// Must equal the lines + shipping − discount.
    pub total_minor: i64,
    /// The charge at the payment provider (Stripe: `pi_…`, `ch_…`, `py_…`).
    pub payment_reference: String,
    /// `shipped`, `delivered`, `returned` with their UTC times; the
    /// order's status and delivery time derive from them.
    #[serde(default)]
    pub events: Vec<DeliveryEvent>,
}

/// One line of an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineInput {
    pub sku: String,
    pub description: String,
    pub quantity: i64,
    pub unit_price_minor: i64,
}

/// The body of `POST /api/v1/orders/{external_id}/refunds`: a refund the
/// shop made through another channel (its support desk, the provider's
/// dashboard), to be booked on the order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordRefund {
    /// The shop's id for the refund; recording it again is a no-op.
    pub refund_id: String,
    pub amount_minor: i64,
    /// Must be the order's currency.
    pub currency: String,
    /// Where it was made, e.g. `support_desk`, `stripe_dashboard`.
    pub channel: String,
    /// The shop's reference (ticket, provider refund id).
    pub reference: String,
    pub created_at: Timestamp,
}
