//! `get_order`: the live order record, with provenance, for the
//! conversation's customer only.

use super::{GET_ORDER, normalize_order_id, scope, scoped_order, scoped_order_in};
use agents::{Provenance, Tool, ToolContext, ToolOutcome, parse_arguments};
use async_trait::async_trait;
use domain::{OrderSnapshot, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use storage::Database;

/// Reads orders from the engine's database, or from the one it was given.
#[derive(Debug, Clone, Default)]
pub struct GetOrder {
    /// A different order store (tests use a closed one to see a failed
    /// lookup reported as unknown).
    source: Option<Database>,
}

impl GetOrder {
    /// Reads through the engine of the conversation.
    pub fn new() -> Self {
        GetOrder { source: None }
    }

    /// Reads through `db` instead.
    pub fn with_database(db: Database) -> Self {
        GetOrder { source: Some(db) }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    order_id: String,
}

/// The order as the model reads it: plain facts, amounts in integer minor
/// units plus a display string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderView {
    pub order_id: String,
    pub status: String,
    pub placed_at: Timestamp,
    pub delivered_at: Option<Timestamp>,
    /// Whole days since delivery, when delivered.
    pub days_since_delivery: Option<i64>,
    pub currency: String,
    pub total_minor: i64,
    pub total: String,
    pub refunded_minor: i64,
    /// What may still be refunded; a refund proposal is for this amount.
    pub refundable_minor: i64,
    pub refundable: String,
    pub lines: Vec<OrderLineView>,
    pub past_refunds: Vec<PastRefundView>,
    /// The record's version; the evidence cites it.
    pub version: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderLineView {
    pub description: String,
    pub quantity: i32,
    pub unit_price_minor: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PastRefundView {
    pub amount: String,
    pub channel: String,
    pub at: Timestamp,
}

impl OrderView {
    /// `None` when the order's refund records are inconsistent (another
    /// currency, an overflow): nothing may be computed from them.
    pub fn of(order: &OrderSnapshot, now: Timestamp) -> Option<OrderView> {
        let refunded = order.refunded().ok()?;
        let refundable = order.refundable().ok()?;
        Some(OrderView {
            order_id: order.id.clone(),
            status: order.status.clone(),
            placed_at: order.placed_at,
            delivered_at: order.delivered_at,
            days_since_delivery: order.days_since_delivery(now),
            currency: order.currency().code().to_owned(),
            total_minor: order.total.amount_minor,
            total: order.total.display(),
            refunded_minor: refunded.amount_minor,
            refundable_minor: refundable.amount_minor,
            refundable: refundable.display(),
            lines: order
                .lines
                .iter()
                .map(|line| OrderLineView {
                    description: line.description.clone(),
                    quantity: line.quantity,
                    unit_price_minor: line.unit_price_minor,
                })
                .collect(),
            past_refunds: order
                .refunds
                .iter()
                .map(|refund| PastRefundView {
                    amount: refund.amount.display(),
                    channel: refund.channel.clone(),
                    at: refund.created_at,
                })
                .collect(),
            version: order.version,
        })
    }
}

/// The provenance of an order reading.
pub fn order_provenance(order: &OrderSnapshot, now: Timestamp) -> Provenance {
    Provenance {
        source: domain::proposal::Evidence::order_reference(&order.id),
        title: format!("Order {}", order.id),
        section: None,
        version: order.version.to_string(),
        quote: Some(crate::proposals::order_quote(order, now)),
    }
}

#[async_trait]
impl Tool for GetOrder {
    fn name(&self) -> &str {
        GET_ORDER
    }

    fn description(&self) -> &str {
        "Read the live record of one of this customer's orders: status, delivery date, days since delivery, amounts paid and still refundable, items and past refunds. Another customer's order is reported as not found. An `unknown` outcome means the lookup failed: whether the order exists is then unknown, so never say it does not exist."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "order_id": {
                    "type": "string",
                    "description": "The order number the customer gave, e.g. \"4821\"."
                }
            },
            "required": ["order_id"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> ToolOutcome {
        let scope = match scope(ctx) {
            Ok(scope) => scope,
            Err(outcome) => return outcome,
        };
        let order_id = match parse_arguments::<Args>(args)
            .and_then(|args| normalize_order_id(&args.order_id))
        {
            Ok(id) => id,
            Err(outcome) => return outcome,
        };
        let read = match &self.source {
            Some(db) => scoped_order_in(db, scope, &order_id).await,
            None => scoped_order(scope, &order_id).await,
        };
        let order = match read {
            Ok(order) => order,
            Err(outcome) => return outcome,
        };
        let now = scope.tools.now();
        let Some(view) = OrderView::of(&order, now) else {
            return ToolOutcome::unknown(format!(
                "order {order_id}'s refund records are inconsistent; nothing can be computed from them"
            ));
        };
        let provenance = order_provenance(&order, now);
        scope.ledger().read(std::slice::from_ref(&provenance));
        let value = serde_json::to_value(&view).unwrap_or_default();
        ToolOutcome::found(value, vec![provenance])
    }
}
