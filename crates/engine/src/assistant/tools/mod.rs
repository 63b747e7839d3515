//! The refund agents' tools, one per file. Each reads what it needs from the
//! [`TurnScope`] the application put in the tool context (the authenticated
//! actor, the conversation's customer, the evidence ledger) — never from the
//! model's arguments — so no prompt can widen what a tool returns or does.

pub mod check_carrier_tracking;
pub mod check_returned_parcel;
pub mod get_order;
pub mod investigate_orders;
mod port;
pub mod prepare_refund;
pub mod record_unknown;
pub mod refund_status;
pub mod request_person;
pub mod request_sign_in;
pub mod search_policy;

pub use check_carrier_tracking::CheckCarrierTracking;
pub use check_returned_parcel::{CheckReturnedParcel, ParcelInspection};
pub use get_order::{GetOrder, OrderLineView, OrderView, PastRefundView};
pub use investigate_orders::{InvestigateOrders, InvestigatedOrder, Investigation, ParcelFinding};
pub use port::ToolPort;
pub use prepare_refund::{PrepareRefund, PreparedProposal};
pub use record_unknown::{RecordUnknown, RecordedQuestion};
pub use refund_status::{RefundStatus, RefundStatusLine, RefundStatusReport};
pub use request_person::{PersonRequested, RequestPerson};
pub use request_sign_in::{RequestSignIn, SignInOutcome};
pub use search_policy::{PolicyPassage, PolicySearchResult, SearchPolicy};

use super::scope::TurnScope;
use agents::{ToolContext, ToolOutcome};
use domain::OrderSnapshot;
use storage::Database;

/// Tool names, shared by the agents, the ledger and the offline model.
pub const GET_ORDER: &str = "get_order";
pub const SEARCH_POLICY: &str = "search_policy";
pub const RECORD_UNKNOWN: &str = "record_unknown";
pub const PREPARE_REFUND: &str = "prepare_refund";
pub const REQUEST_PERSON: &str = "request_person";
pub const REFUND_STATUS: &str = "refund_status";
pub const CHECK_RETURNED_PARCEL: &str = "check_returned_parcel";
pub const CHECK_CARRIER_TRACKING: &str = "check_carrier_tracking";
pub const INVESTIGATE_ORDERS: &str = "investigate_orders";
pub const REQUEST_SIGN_IN: &str = "request_sign_in";

/// How a tool's refusal begins when the visitor has not signed in yet.
pub const NOT_SIGNED_IN: &str =
    "the customer has not signed in, so none of their orders can be read";

/// Longest order id accepted from a model.
const MAX_ORDER_ID_CHARS: usize = 64;

/// The conversation's scope, or the answer a tool gives outside one.
fn scope(ctx: &ToolContext) -> Result<&TurnScope, ToolOutcome> {
    ctx.extension::<TurnScope>().ok_or_else(|| {
        ToolOutcome::refused("this tool only runs inside a Countersign conversation")
    })
}

/// An order id as a model may send it: `4821`, `#4821` or `order 4821`.
fn normalize_order_id(raw: &str) -> Result<String, ToolOutcome> {
    let trimmed = raw.trim();
    let lower = trimmed.to_ascii_lowercase();
    let without_word = if lower.starts_with("order") {
        trimmed[5..].trim_start_matches([' ', ':'])
    } else {
        trimmed
    };
    let id = without_word.trim_start_matches('#').trim();
    if id.is_empty() || id.chars().count() > MAX_ORDER_ID_CHARS {
        return Err(ToolOutcome::invalid_arguments(format!(
            "order_id must be 1 to {MAX_ORDER_ID_CHARS} characters, e.g. \"4821\""
        )));
    }
    if let Some(bad) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(ToolOutcome::invalid_arguments(format!(
            "order_id may hold only letters, digits, '-' and '_', not {bad:?}"
        )));
    }
    Ok(id.to_owned())
}

/// The arguments of a tool about one order: `{"order_id": "4821"}`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OneOrder {
    order_id: String,
}

/// The parameters' schema of a tool about one order.
fn one_order_parameters() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "order_id": { "type": "string", "description": "The order number, e.g. \"4821\"." }
        },
        "required": ["order_id"],
        "additionalProperties": false
    })
}

/// The conversation's scope and the order a one-order tool was called
/// about, once that order is known to be the conversation's customer's:
/// nobody else's order number leaves this tool.
async fn this_customers_order_call(
    ctx: &ToolContext,
    args: serde_json::Value,
) -> Result<(&TurnScope, String), ToolOutcome> {
    let scope = scope(ctx)?;
    let args: OneOrder = agents::parse_arguments(args)?;
    let order_id = normalize_order_id(&args.order_id)?;
    scoped_order(scope, &order_id).await?;
    Ok((scope, order_id))
}

/// The live order, if the conversation's customer may see it.
///
/// Another customer's order is answered exactly like a missing one, so a
/// customer cannot even learn that it exists. A failed read is `unknown`:
/// existence is then not known either way.
async fn scoped_order(scope: &TurnScope, order_id: &str) -> Result<OrderSnapshot, ToolOutcome> {
    customers_order(scope.tools.order(order_id).await, scope, order_id)
}

/// The order read from `db` instead of through the port (a test's own
/// store), held to the same rule.
async fn scoped_order_in(
    db: &Database,
    scope: &TurnScope,
    order_id: &str,
) -> Result<OrderSnapshot, ToolOutcome> {
    customers_order(
        storage::orders::get(db.conn(), order_id).await,
        scope,
        order_id,
    )
}

fn customers_order(
    read: Result<Option<OrderSnapshot>, storage::StorageError>,
    scope: &TurnScope,
    order_id: &str,
) -> Result<OrderSnapshot, ToolOutcome> {
    let customer_id = signed_in_customer(scope)?;
    let not_found =
        || ToolOutcome::not_found(format!("order {order_id} on this customer's account"));
    match read {
        Ok(Some(order)) if order.customer_id == customer_id => Ok(order),
        Ok(_) => Err(not_found()),
        Err(error) => {
            tracing::warn!(%error, order.id = %order_id, "order lookup failed");
            Err(ToolOutcome::unknown(format!(
                "the order records could not be read ({}); whether order {order_id} exists is unknown",
                error_kind(&error)
            )))
        }
    }
}

/// The conversation's customer, or the refusal a tool gives before the
/// visitor has signed in: no one's records are readable then.
fn signed_in_customer(scope: &TurnScope) -> Result<String, ToolOutcome> {
    scope.customer_id().ok_or_else(|| {
        ToolOutcome::refused(format!(
            "{NOT_SIGNED_IN}; call {REQUEST_SIGN_IN} to ask them to sign in, then try again"
        ))
    })
}

/// A short, non-sensitive name for a storage failure, for the model.
fn error_kind(error: &storage::StorageError) -> &'static str {
    match error {
        storage::StorageError::Unavailable(_) => "the database is unavailable",
        storage::StorageError::Corrupt(_) => "the stored record is unreadable",
        storage::StorageError::NotFound { .. }
        | storage::StorageError::Conflict { .. }
        | storage::StorageError::OutOfRange(_)
        | storage::StorageError::Other(_) => "a database error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_ids_are_normalized_from_what_models_send() {
        for raw in [
            "4821",
            " #4821 ",
            "order 4821",
            "Order: 4821",
            "ORDER #4821",
        ] {
            assert_eq!(
                normalize_order_id(raw).ok().as_deref(),
                Some("4821"),
                "{raw}"
            );
        }
        assert!(normalize_order_id("").is_err());
        assert!(normalize_order_id("48 21").is_err());
        assert!(normalize_order_id("4821; drop table").is_err());
        assert!(normalize_order_id(&"9".repeat(65)).is_err());
    }
}
