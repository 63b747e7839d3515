//! Reading orders: customers see their own, staff see recent ones.

use crate::error::AppError;
use domain::OrderSnapshot;
use leptos::prelude::*;
use leptos::server_fn;

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

/// One order, for staff who review refunds.
#[server(prefix = "/fn", endpoint = "staff_order", input = server_fn::codec::GetUrl)]
pub async fn staff_order(order_id: String) -> Result<OrderSnapshot, AppError> {
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
    storage::orders::get(ctx.db.conn(), order_id)
        .await
        .map_err(|e| server::internal(&e))?
        .ok_or_else(|| server::fail(AppError::NotFound(format!("no order {order_id}"))))
}
