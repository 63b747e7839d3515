//! Orders, their line items and refund history.

use crate::bulk;
use crate::entities::{order, order_line, order_refund};
use crate::error::StorageError;
use crate::many::one_of;
use domain::{Currency, Money, OrderLine, OrderSnapshot, PastRefund};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
    sea_query::Expr,
};
use std::collections::HashMap;

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
        // Not fed by a shop: no source version, no shipping or discount.
        ..Default::default()
    }
    .insert(db)
    .await?;
    insert_lines(db, &order.id, &order.lines).await?;
    for refund in &order.refunds {
        insert_refund_row(db, &order.id, refund).await?;
    }
    Ok(())
}

/// Stores an order's line items, in order.
pub(crate) async fn insert_lines(
    db: &impl ConnectionTrait,
    order_id: &str,
    lines: &[OrderLine],
) -> Result<(), StorageError> {
    if lines.is_empty() {
        return Ok(());
    }
    order_line::Entity::insert_many(lines.iter().map(|line| order_line::ActiveModel {
        order_id: Set(order_id.to_owned()),
        sku: Set(line.sku.clone()),
        description: Set(line.description.clone()),
        quantity: Set(line.quantity),
        unit_price_minor: Set(line.unit_price_minor),
        ..Default::default()
    }))
    .exec(db)
    .await?;
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
    Ok(get_many(db, &[order_id.to_owned()]).await?.remove(order_id))
}

/// Several live orders by id, in three queries whatever their number (a
/// batch of approvals reads all its orders at once); missing ids are absent.
///
/// # Errors
/// Database failures or a stored currency that does not parse.
pub async fn get_many(
    db: &impl ConnectionTrait,
    order_ids: &[String],
) -> Result<HashMap<String, OrderSnapshot>, StorageError> {
    fetch(db, order_ids, false).await
}

/// [`get_many`], locking the orders as [`lock_versions`] does: what is read
/// of them stays true until the transaction ends.
///
/// # Errors
/// Database failures or a stored currency that does not parse.
pub async fn lock_and_get_many(
    db: &impl ConnectionTrait,
    order_ids: &[String],
) -> Result<HashMap<String, OrderSnapshot>, StorageError> {
    fetch(db, order_ids, true).await
}

async fn fetch(
    db: &impl ConnectionTrait,
    order_ids: &[String],
    lock: bool,
) -> Result<HashMap<String, OrderSnapshot>, StorageError> {
    use sea_orm::QuerySelect;
    if order_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let mut query = order::Entity::find()
        .filter(one_of(
            db.get_database_backend(),
            order::Column::Id,
            order_ids,
        ))
        .order_by_asc(order::Column::Id);
    if lock && db.get_database_backend() == sea_orm::DbBackend::Postgres {
        query = query.lock_exclusive();
    }
    let rows = query.all(db).await?;
    Ok(assemble(db, rows)
        .await?
        .into_iter()
        .map(|order| (order.id.clone(), order))
        .collect())
}

/// The orders' current versions, locked until the transaction ends on
/// PostgreSQL (SQLite's write transaction already excludes other writers).
/// Writers take the locks of the orders they touch before writing any
/// proposal (orders before proposals, always; several orders in id order, so
/// two batches that share orders cannot deadlock). A missing order is absent.
///
/// # Errors
/// Database failures.
pub async fn lock_versions(
    db: &impl ConnectionTrait,
    order_ids: &[String],
) -> Result<HashMap<String, i64>, StorageError> {
    use sea_orm::QuerySelect;
    if order_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let mut query = order::Entity::find()
        .select_only()
        .column(order::Column::Id)
        .column(order::Column::Version)
        .filter(one_of(
            db.get_database_backend(),
            order::Column::Id,
            order_ids,
        ))
        .order_by_asc(order::Column::Id);
    if db.get_database_backend() == sea_orm::DbBackend::Postgres {
        query = query.lock_exclusive();
    }
    Ok(query
        .into_tuple::<(String, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect())
}

/// The currencies orders are in, alphabetically: the admin page states
/// currency-less defaults (approval limit, four-eyes threshold) in them.
///
/// # Errors
/// Database failures.
pub async fn currencies(db: &impl ConnectionTrait) -> Result<Vec<String>, StorageError> {
    use sea_orm::{QueryOrder, QuerySelect};
    Ok(order::Entity::find()
        .select_only()
        .column(order::Column::Currency)
        .distinct()
        .order_by_asc(order::Column::Currency)
        .into_tuple()
        .all(db)
        .await?)
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
    assemble(db, rows).await
}

/// The order paid by `payment_reference` (the oldest, should a reference
/// repeat), with lines and refunds.
///
/// # Errors
/// Database failures.
pub async fn find_by_payment_reference(
    db: &impl ConnectionTrait,
    payment_reference: &str,
) -> Result<Option<OrderSnapshot>, StorageError> {
    let rows = order::Entity::find()
        .filter(order::Column::PaymentReference.eq(payment_reference))
        .order_by_asc(order::Column::PlacedAt)
        .all(db)
        .await?;
    Ok(assemble(db, rows).await?.into_iter().next())
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

/// Books each refund unless one with its id is already booked, and bumps
/// the version of each order that got a booking now: recording the same
/// answer twice books it once. Returns the ids booked now.
///
/// # Errors
/// Database failures; [`StorageError::NotFound`] for an unknown order.
pub async fn record_refunds_once(
    db: &impl ConnectionTrait,
    bookings: &[(String, PastRefund)],
) -> Result<Vec<String>, StorageError> {
    if bookings.is_empty() {
        return Ok(Vec::new());
    }
    let rows = bookings
        .iter()
        .map(|(order_id, refund)| refund_row(order_id, refund))
        .collect();
    let booked = bulk::insert_new(db, rows).await?;
    let mut bumped: Vec<String> = bookings
        .iter()
        .filter(|(_, refund)| booked.contains(&refund.id))
        .map(|(order_id, _)| order_id.clone())
        .collect();
    bumped.sort();
    bumped.dedup();
    if let Some((_, first)) = bookings.first()
        && !bumped.is_empty()
    {
        bump_versions(db, &bumped, first.created_at).await?;
    }
    Ok(booked)
}

async fn bump_version(
    db: &impl ConnectionTrait,
    order_id: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<(), StorageError> {
    bump_versions(db, &[order_id.to_owned()], at).await
}

/// Bumps the version of each order (distinct ids) once, in one statement.
async fn bump_versions(
    db: &impl ConnectionTrait,
    order_ids: &[String],
    at: chrono::DateTime<chrono::Utc>,
) -> Result<(), StorageError> {
    let bumped = order::Entity::update_many()
        .col_expr(
            order::Column::Version,
            Expr::col(order::Column::Version).add(1),
        )
        .col_expr(order::Column::UpdatedAt, Expr::value(at))
        .filter(one_of(
            db.get_database_backend(),
            order::Column::Id,
            order_ids,
        ))
        .exec(db)
        .await?;
    if bumped.rows_affected < order_ids.len() as u64 {
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

/// Orders with their lines and refunds: two more queries for all of them.
async fn assemble(
    db: &impl ConnectionTrait,
    rows: Vec<order::Model>,
) -> Result<Vec<OrderSnapshot>, StorageError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = rows.iter().map(|row| row.id.clone()).collect();
    let backend = db.get_database_backend();
    let mut lines: HashMap<String, Vec<OrderLine>> = HashMap::new();
    for line in order_line::Entity::find()
        .filter(one_of(backend, order_line::Column::OrderId, &ids))
        .order_by_asc(order_line::Column::Id)
        .all(db)
        .await?
    {
        lines.entry(line.order_id).or_default().push(OrderLine {
            sku: line.sku,
            description: line.description,
            quantity: line.quantity,
            unit_price_minor: line.unit_price_minor,
        });
    }
    let mut refunds: HashMap<String, Vec<PastRefund>> = HashMap::new();
    for refund in order_refund::Entity::find()
        .filter(one_of(backend, order_refund::Column::OrderId, &ids))
        .order_by_asc(order_refund::Column::CreatedAt)
        .order_by_asc(order_refund::Column::Id)
        .all(db)
        .await?
    {
        refunds
            .entry(refund.order_id)
            .or_default()
            .push(PastRefund {
                amount: Money::new(refund.amount_minor, parse_currency(&refund.currency)?),
                id: refund.id,
                channel: refund.channel,
                reference: refund.reference,
                created_at: refund.created_at,
            });
    }
    rows.into_iter()
        .map(|row| {
            Ok(OrderSnapshot {
                total: Money::new(row.total_minor, parse_currency(&row.currency)?),
                lines: lines.remove(&row.id).unwrap_or_default(),
                refunds: refunds.remove(&row.id).unwrap_or_default(),
                id: row.id,
                customer_id: row.customer_id,
                status: row.status,
                payment_reference: row.payment_reference,
                placed_at: row.placed_at,
                delivered_at: row.delivered_at,
                version: row.version,
            })
        })
        .collect()
}

pub(crate) fn parse_currency(code: &str) -> Result<Currency, StorageError> {
    Currency::parse(code).map_err(|e| StorageError::Corrupt(e.to_string()))
}
