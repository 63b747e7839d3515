//! Orders, their line items and refund history.

use crate::entities::{order, order_line, order_refund};
use crate::error::StorageError;
use domain::{Currency, Money, OrderLine, OrderSnapshot, PastRefund};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
    sea_query::{Expr, OnConflict},
};

/// # Errors
/// [`StorageError::Conflict`] when the order id exists.
pub async fn insert(db: &impl ConnectionTrait, order: &OrderSnapshot) -> Result<(), StorageError> {
    order::ActiveModel {
        id: Set(order.id.clone()),
        customer_id: Set(order.customer_id.clone()),
        status: Set(order.status.clone()),
        currency: Set(order.total.currency.code().to_owned()),
        total_minor: Set(order.total.amount_minor),
        payment_reference: Set(order.payment_reference.clone()),
        placed_at: Set(order.placed_at),
        delivered_at: Set(order.delivered_at),
        version: Set(order.version),
        updated_at: Set(order.placed_at),
    }
    .insert(db)
    .await?;
    if !order.lines.is_empty() {
        order_line::Entity::insert_many(order.lines.iter().map(|line| order_line::ActiveModel {
            order_id: Set(order.id.clone()),
            sku: Set(line.sku.clone()),
            description: Set(line.description.clone()),
            quantity: Set(line.quantity),
            unit_price_minor: Set(line.unit_price_minor),
            ..Default::default()
        }))
        .exec(db)
        .await?;
    }
    for refund in &order.refunds {
        insert_refund_row(db, &order.id, refund).await?;
    }
    Ok(())
}

/// The live order with lines and refunds.
///
/// # Errors
/// Database failures or a stored currency that does not parse.
pub async fn get(
    db: &impl ConnectionTrait,
    order_id: &str,
) -> Result<Option<OrderSnapshot>, StorageError> {
    let Some(row) = order::Entity::find_by_id(order_id.to_owned())
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    Ok(Some(assemble(db, row).await?))
}

/// The order's current version, locked until the transaction ends on
/// PostgreSQL (SQLite's write transaction already excludes other writers).
/// Writers read the whole order before their transaction and take this
/// first inside it: the lock orders them (order before proposal, always)
/// and the version says whether what they read is still current. `None`
/// when the order no longer exists.
///
/// # Errors
/// Database failures.
pub async fn lock_version(
    db: &impl ConnectionTrait,
    order_id: &str,
) -> Result<Option<i64>, StorageError> {
    use sea_orm::QuerySelect;
    let mut query = order::Entity::find_by_id(order_id.to_owned())
        .select_only()
        .column(order::Column::Version);
    if db.get_database_backend() == sea_orm::DbBackend::Postgres {
        query = query.lock_exclusive();
    }
    Ok(query.into_tuple::<i64>().one(db).await?)
}

/// A customer's orders, newest first.
///
/// # Errors
/// Database failures.
pub async fn list_for_customer(
    db: &impl ConnectionTrait,
    customer_id: &str,
) -> Result<Vec<OrderSnapshot>, StorageError> {
    let rows = order::Entity::find()
        .filter(order::Column::CustomerId.eq(customer_id))
        .order_by_desc(order::Column::PlacedAt)
        .all(db)
        .await?;
    let mut orders = Vec::with_capacity(rows.len());
    for row in rows {
        orders.push(assemble(db, row).await?);
    }
    Ok(orders)
}

/// Records a refund against the order and bumps its version, so any approval
/// that saw the older version notices the change.
///
/// # Errors
/// Database failures; [`StorageError::NotFound`] for an unknown order.
pub async fn record_refund(
    db: &impl ConnectionTrait,
    order_id: &str,
    refund: &PastRefund,
) -> Result<(), StorageError> {
    bump_version(db, order_id, refund.created_at).await?;
    insert_refund_row(db, order_id, refund).await
}

/// Books the refund unless one with its id is already booked, bumping the
/// order's version only when it was not: recording the same answer twice
/// books it once. Returns whether it was booked now.
///
/// # Errors
/// Database failures; [`StorageError::NotFound`] for an unknown order.
pub async fn record_refund_once(
    db: &impl ConnectionTrait,
    order_id: &str,
    refund: &PastRefund,
) -> Result<bool, StorageError> {
    let inserted = order_refund::Entity::insert(refund_row(order_id, refund))
        .on_conflict(
            OnConflict::column(order_refund::Column::Id)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    if inserted == 0 {
        return Ok(false);
    }
    bump_version(db, order_id, refund.created_at).await?;
    Ok(true)
}

/// A booked refund changes what the order allows: any decision made on the
/// older version must notice.
async fn bump_version(
    db: &impl ConnectionTrait,
    order_id: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<(), StorageError> {
    let bumped = order::Entity::update_many()
        .col_expr(
            order::Column::Version,
            Expr::col(order::Column::Version).add(1),
        )
        .col_expr(order::Column::UpdatedAt, Expr::value(at))
        .filter(order::Column::Id.eq(order_id))
        .exec(db)
        .await?;
    if bumped.rows_affected == 0 {
        return Err(StorageError::NotFound { entity: "order" });
    }
    Ok(())
}

fn refund_row(order_id: &str, refund: &PastRefund) -> order_refund::ActiveModel {
    order_refund::ActiveModel {
        id: Set(refund.id.clone()),
        order_id: Set(order_id.to_owned()),
        amount_minor: Set(refund.amount.amount_minor),
        currency: Set(refund.amount.currency.code().to_owned()),
        channel: Set(refund.channel.clone()),
        reference: Set(refund.reference.clone()),
        created_at: Set(refund.created_at),
    }
}

async fn insert_refund_row(
    db: &impl ConnectionTrait,
    order_id: &str,
    refund: &PastRefund,
) -> Result<(), StorageError> {
    refund_row(order_id, refund).insert(db).await?;
    Ok(())
}

async fn assemble(
    db: &impl ConnectionTrait,
    row: order::Model,
) -> Result<OrderSnapshot, StorageError> {
    let currency = parse_currency(&row.currency)?;
    let lines = order_line::Entity::find()
        .filter(order_line::Column::OrderId.eq(row.id.clone()))
        .order_by_asc(order_line::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(|line| OrderLine {
            sku: line.sku,
            description: line.description,
            quantity: line.quantity,
            unit_price_minor: line.unit_price_minor,
        })
        .collect();
    let refunds = order_refund::Entity::find()
        .filter(order_refund::Column::OrderId.eq(row.id.clone()))
        .order_by_asc(order_refund::Column::CreatedAt)
        .all(db)
        .await?
        .into_iter()
        .map(|refund| {
            Ok(PastRefund {
                amount: Money::new(refund.amount_minor, parse_currency(&refund.currency)?),
                id: refund.id,
                channel: refund.channel,
                reference: refund.reference,
                created_at: refund.created_at,
            })
        })
        .collect::<Result<Vec<_>, StorageError>>()?;
    Ok(OrderSnapshot {
        id: row.id,
        customer_id: row.customer_id,
        status: row.status,
        total: Money::new(row.total_minor, currency),
        payment_reference: row.payment_reference,
        placed_at: row.placed_at,
        delivered_at: row.delivered_at,
        version: row.version,
        lines,
        refunds,
    })
}

fn parse_currency(code: &str) -> Result<Currency, StorageError> {
    Currency::parse(code).map_err(|e| StorageError::Corrupt(e.to_string()))
}
