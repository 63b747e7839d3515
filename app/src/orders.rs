//! Reading orders: customers see their own, staff see recent ones.

use crate::error::AppError;
use domain::OrderSnapshot;
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

/// The signed-in customer's orders, newest first.
#[server(prefix = "/fn", endpoint = "my_orders", input = server_fn::codec::GetUrl)]
pub async fn my_orders() -> Result<Vec<OrderSnapshot>, AppError> {
    use crate::server;
    let me = server::require_role(&[domain::Role::Customer])?;
    let ctx = server::context()?;
    storage::orders::list_for_customer(ctx.db.conn(), &me.user_id)
        .await
        .map_err(|e| server::internal(&e))
}

/// One order as staff look it up: the order, and every refund proposed for
/// it (newest first) to open from there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LookedUpOrder {
    #[serde(flatten)]
    pub order: OrderSnapshot,
    pub proposals: Vec<OrderProposal>,
}

/// A refund proposed for an order, as the order lookup lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderProposal {
    pub id: String,
    pub amount: domain::Money,
    pub status: domain::proposal::ProposalStatus,
    pub created_at: domain::Timestamp,
}

/// How many of an order's proposals the lookup lists.
pub const ORDER_PROPOSALS_SHOWN: u64 = 50;

/// One order, for staff who review refunds, with its proposals.
#[server(prefix = "/fn", endpoint = "staff_order", input = server_fn::codec::GetUrl)]
pub async fn staff_order(order_id: String) -> Result<LookedUpOrder, AppError> {
    use crate::server;
    use domain::Role;
    server::require_role(&[Role::Approver, Role::Manager, Role::Admin])?;
    let order_id = order_id.trim();
    if order_id.is_empty() || order_id.len() > 64 {
        return Err(server::fail(AppError::Invalid(
            "order id must be 1 to 64 characters".to_owned(),
        )));
    }
    let ctx = server::context()?;
    let order = storage::orders::get(ctx.db.conn(), order_id)
        .await
        .map_err(|e| server::internal(&e))?
        .ok_or_else(|| server::fail(AppError::NotFound(format!("no order {order_id}"))))?;
    let filter = storage::proposals::ProposalFilter {
        order_id: Some(order_id.to_owned()),
        ..Default::default()
    };
    let proposals = storage::proposals::list(ctx.db.conn(), &filter, ORDER_PROPOSALS_SHOWN, 0)
        .await
        .map_err(|e| server::internal(&e))?
        .into_iter()
        .map(|stored| OrderProposal {
            status: stored.status(),
            id: stored.proposal.id,
            amount: stored.proposal.amount,
            created_at: stored.proposal.created_at,
        })
        .collect();
    Ok(LookedUpOrder { order, proposals })
}
