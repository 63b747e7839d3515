//! Orders as a shop's backend feeds them: the order record plus the shop's
//! own version of it (kept apart from Countersign's `orders.version`, which
//! refund bookings bump and approvals compare), shipping and discount, and
//! the delivery events the status derives from.

use crate::entities::{order, order_event, order_line, order_refund};
use crate::error::StorageError;
use crate::orders::{insert_lines, parse_currency};
use domain::{DeliveryEvent, DeliveryKind, Money, OrderSnapshot, PastRefund};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

/// The shop's version of an order and the hash of what it sent at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceStamp {
    pub version: i64,
    pub hash: String,
}

/// An order with what its shop sent beyond the snapshot agents read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcedOrder {
    pub order: OrderSnapshot,
    /// None for an order no shop has sent (the demo's, say).
    pub source: Option<SourceStamp>,
    pub shipping_minor: i64,
    pub discount_minor: i64,
    /// Oldest first.
    pub events: Vec<DeliveryEvent>,
}

/// The order with its source fields and events.
///
/// # Errors
/// Database failures or stored data that does not parse.
pub async fn get(
    db: &impl ConnectionTrait,
    order_id: &str,
) -> Result<Option<SourcedOrder>, StorageError> {
    read(db, order_id, false).await
}

/// [`get`], locking the order until the transaction ends on PostgreSQL
/// (SQLite's write transaction already excludes other writers), as every
/// writer of an order locks it before writing.
///
/// # Errors
/// Database failures or stored data that does not parse.
pub async fn lock_and_get(
    db: &impl ConnectionTrait,
    order_id: &str,
) -> Result<Option<SourcedOrder>, StorageError> {
    read(db, order_id, true).await
}

async fn read(
    db: &impl ConnectionTrait,
    order_id: &str,
    lock: bool,
) -> Result<Option<SourcedOrder>, StorageError> {
    let ids = [order_id.to_owned()];
    let mut orders = if lock {
        crate::orders::lock_and_get_many(db, &ids).await?
    } else {
        crate::orders::get_many(db, &ids).await?
    };
    let Some(order) = orders.remove(order_id) else {
        return Ok(None);
    };
    let Some(row) = order::Entity::find_by_id(order_id).one(db).await? else {
        return Ok(None);
    };
    let events = order_event::Entity::find()
        .filter(order_event::Column::OrderId.eq(order_id))
        .order_by_asc(order_event::Column::At)
        .order_by_asc(order_event::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(|event| {
            Ok(DeliveryEvent {
                kind: parse_kind(&event.kind)?,
                at: event.at,
            })
        })
        .collect::<Result<Vec<_>, StorageError>>()?;
    let source = match (row.source_version, row.source_hash) {
        (Some(version), Some(hash)) => Some(SourceStamp { version, hash }),
        _ => None,
    };
    Ok(Some(SourcedOrder {
        order,
        source,
        shipping_minor: row.shipping_minor,
        discount_minor: row.discount_minor,
        events,
    }))
}

/// Stores a new order with its lines and events (and no refunds yet).
///
/// # Errors
/// [`StorageError::Conflict`] when the order id exists (another writer
/// created it meanwhile); database failures.
pub async fn create(
    db: &impl ConnectionTrait,
    sourced: &SourcedOrder,
    now: domain::Timestamp,
) -> Result<(), StorageError> {
    let order = &sourced.order;
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
        updated_at: Set(now),
        source_version: Set(sourced.source.as_ref().map(|s| s.version)),
        source_hash: Set(sourced.source.as_ref().map(|s| s.hash.clone())),
        shipping_minor: Set(sourced.shipping_minor),
        discount_minor: Set(sourced.discount_minor),
    }
    .insert(db)
    .await?;
    insert_lines(db, &order.id, &order.lines).await?;
    insert_events(db, &order.id, &sourced.events).await
}

/// Replaces what the shop owns of a stored order (customer, status, money,
/// reference, lines, events, source stamp) and sets its version to
/// `sourced.order.version`, only while the stored version is still
/// `expected_version`. Refunds are kept: they happened.
///
/// # Errors
/// [`StorageError::Conflict`] when the order moved past `expected_version`;
/// database failures.
pub async fn replace(
    db: &impl ConnectionTrait,
    sourced: &SourcedOrder,
    expected_version: i64,
    now: domain::Timestamp,
) -> Result<(), StorageError> {
    let order = &sourced.order;
    let updated = order::Entity::update_many()
        .col_expr(order::Column::CustomerId, Expr::value(&order.customer_id))
        .col_expr(order::Column::Status, Expr::value(&order.status))
        .col_expr(
            order::Column::Currency,
            Expr::value(order.total.currency.code()),
        )
        .col_expr(
            order::Column::TotalMinor,
            Expr::value(order.total.amount_minor),
        )
        .col_expr(
            order::Column::PaymentReference,
            Expr::value(&order.payment_reference),
        )
        .col_expr(order::Column::PlacedAt, Expr::value(order.placed_at))
        .col_expr(order::Column::DeliveredAt, Expr::value(order.delivered_at))
        .col_expr(order::Column::Version, Expr::value(order.version))
        .col_expr(order::Column::UpdatedAt, Expr::value(now))
        .col_expr(
            order::Column::SourceVersion,
            Expr::value(sourced.source.as_ref().map(|s| s.version)),
        )
        .col_expr(
            order::Column::SourceHash,
            Expr::value(sourced.source.as_ref().map(|s| s.hash.clone())),
        )
        .col_expr(
            order::Column::ShippingMinor,
            Expr::value(sourced.shipping_minor),
        )
        .col_expr(
            order::Column::DiscountMinor,
            Expr::value(sourced.discount_minor),
        )
        .filter(order::Column::Id.eq(&order.id))
        .filter(order::Column::Version.eq(expected_version))
        .exec(db)
        .await?;
    if updated.rows_affected != 1 {
        return Err(StorageError::Conflict {
            constraint: "orders.version".to_owned(),
        });
    }
    order_line::Entity::delete_many()
        .filter(order_line::Column::OrderId.eq(&order.id))
        .exec(db)
        .await?;
    insert_lines(db, &order.id, &order.lines).await?;
    order_event::Entity::delete_many()
        .filter(order_event::Column::OrderId.eq(&order.id))
        .exec(db)
        .await?;
    insert_events(db, &order.id, &sourced.events).await
}

/// Moves the shop's version forward without touching the order: the shop
/// sent a newer version whose content is what is stored already.
///
/// # Errors
/// Database failures; [`StorageError::NotFound`] for an unknown order.
pub async fn advance_source_version(
    db: &impl ConnectionTrait,
    order_id: &str,
    source_version: i64,
) -> Result<(), StorageError> {
    let updated = order::Entity::update_many()
        .col_expr(order::Column::SourceVersion, Expr::value(source_version))
        .filter(order::Column::Id.eq(order_id))
        .exec(db)
        .await?;
    if updated.rows_affected != 1 {
        return Err(StorageError::NotFound { entity: "order" });
    }
    Ok(())
}

/// A recorded refund by its id, whichever order it is on: `(order id, refund)`.
///
/// # Errors
/// Database failures or a stored currency that does not parse.
pub async fn find_refund(
    db: &impl ConnectionTrait,
    refund_id: &str,
) -> Result<Option<(String, PastRefund)>, StorageError> {
    let Some(row) = order_refund::Entity::find_by_id(refund_id).one(db).await? else {
        return Ok(None);
    };
    Ok(Some((
        row.order_id,
        PastRefund {
            amount: Money::new(row.amount_minor, parse_currency(&row.currency)?),
            id: row.id,
            channel: row.channel,
            reference: row.reference,
            created_at: row.created_at,
        },
    )))
}

async fn insert_events(
    db: &impl ConnectionTrait,
    order_id: &str,
    events: &[DeliveryEvent],
) -> Result<(), StorageError> {
    if events.is_empty() {
        return Ok(());
    }
    order_event::Entity::insert_many(events.iter().map(|event| order_event::ActiveModel {
        order_id: Set(order_id.to_owned()),
        kind: Set(event.kind.as_str().to_owned()),
        at: Set(event.at),
        ..Default::default()
    }))
    .exec(db)
    .await?;
    Ok(())
}

fn parse_kind(kind: &str) -> Result<DeliveryKind, StorageError> {
    DeliveryKind::ALL
        .into_iter()
        .find(|known| known.as_str() == kind)
        .ok_or_else(|| StorageError::Corrupt(format!("unknown delivery event kind {kind:?}")))
}
