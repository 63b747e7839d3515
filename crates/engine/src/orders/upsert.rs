//! Storing an order as the shop sends it: load the stored order (locked),
//! decide by the shop's source version, save the whole order and its
//! journal event in one transaction, or nothing.

use super::validate::{self, ValidOrder};
use super::{Feeder, OrderError, OrderRecord, OrderUpsert, Orders};
use connectors::ProviderError;
use domain::{OrderSnapshot, Role, Timestamp};
use serde_json::json;
use std::cmp::Ordering;
use storage::journal::NewEvent;
use storage::shop_orders::{SourceStamp, SourcedOrder};
use storage::{ConnectionTrait, Database};

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A new order.
    Created,
    /// A higher source version was stored.
    Updated,
    /// The same version with the same content: nothing was written.
    Unchanged,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpsertOutcome {
    pub change: Change,
    pub order: OrderRecord,
}

/// What to do with an incoming order, given the stored one (carried along).
#[derive(Debug)]
enum Decision {
    Create,
    /// A higher version with other content.
    Replace(SourcedOrder),
    /// A higher version with the content already stored.
    AdvanceVersion(SourcedOrder),
    /// The stored version with the stored content.
    Unchanged(SourcedOrder),
}

impl Orders {
    /// Stores the shop's order `external_id` unless a version at least as new
    /// is stored: created, replaced by a higher source version, or left as it
    /// is for a repeat of the stored version. The payment reference is checked
    /// with `references` (the configured provider) first.
    ///
    /// # Errors
    /// [`OrderError`] naming the first problem; nothing is stored then.
    pub async fn upsert_order(
        &self,
        feeder: &Feeder,
        external_id: &str,
        input: OrderUpsert,
    ) -> Result<UpsertOutcome, OrderError> {
        let (db, references, now) = (&self.db, self.provider.as_ref(), self.clock.now());
        let incoming = validate::order(external_id, input, now)?;
        references
            .check_reference(&incoming.payment_reference)
            .map_err(|error| OrderError::PaymentReference(provider_message(error)))?;
        match attempt(db, feeder, &incoming, now).await {
            // Two first sends of one order at once: the loser's insert hits the
            // winner's row; again, it finds that order and compares with it.
            Err(OrderError::Storage(error)) if error.is_conflict() => {
                attempt(db, feeder, &incoming, now).await
            }
            outcome => outcome,
        }
    }
}

async fn attempt(
    db: &Database,
    feeder: &Feeder,
    incoming: &ValidOrder,
    now: Timestamp,
) -> Result<UpsertOutcome, OrderError> {
    let hash = incoming.content_hash();
    let tx = db.begin_write().await?;
    let stored = storage::shop_orders::lock_and_get(&*tx, &incoming.external_id).await?;
    let stamp = SourceStamp {
        version: incoming.source_version,
        hash: hash.clone(),
    };
    let (change, content_changed, sourced) = match decide(stored, incoming, &hash)? {
        Decision::Unchanged(stored) => {
            tx.rollback().await?;
            return Ok(UpsertOutcome {
                change: Change::Unchanged,
                order: OrderRecord {
                    customer_name: incoming.customer.clone(),
                    sourced: stored,
                },
            });
        }
        Decision::Create => {
            let customer_id = customer_id(&*tx, &incoming.customer).await?;
            let created = sourced(incoming, customer_id, 1, Vec::new(), stamp);
            storage::shop_orders::create(&*tx, &created, now).await?;
            (Change::Created, true, created)
        }
        Decision::Replace(stored) => {
            let customer_id = customer_id(&*tx, &incoming.customer).await?;
            let replaced = replacement(&stored, incoming, customer_id, stamp)?;
            storage::shop_orders::replace(&*tx, &replaced, stored.order.version, now).await?;
            (Change::Updated, true, replaced)
        }
        // The same content, so the same customer: only the version moves.
        Decision::AdvanceVersion(mut stored) => {
            storage::shop_orders::advance_source_version(
                &*tx,
                &incoming.external_id,
                stamp.version,
            )
            .await?;
            stored.source = Some(stamp);
            (Change::Updated, false, stored)
        }
    };
    let kind = match change {
        Change::Created => "order.created",
        Change::Updated | Change::Unchanged => "order.updated",
    };
    storage::journal::append_to_stream(
        &*tx,
        &storage::journal::order_stream(&incoming.external_id),
        vec![journal_event(feeder, kind, &sourced, content_changed, now)],
    )
    .await?;
    tx.commit().await?;
    Ok(UpsertOutcome {
        change,
        order: OrderRecord {
            customer_name: incoming.customer.clone(),
            sourced,
        },
    })
}

/// The shop's source version decides: higher replaces, equal must repeat
/// the stored content, lower is stale. An order no shop sent yet (no
/// source version) takes any version.
fn decide(
    stored: Option<SourcedOrder>,
    incoming: &ValidOrder,
    hash: &str,
) -> Result<Decision, OrderError> {
    let Some(stored) = stored else {
        return Ok(Decision::Create);
    };
    let Some(source) = &stored.source else {
        return Ok(Decision::Replace(stored));
    };
    let (stored_version, same_content) = (source.version, source.hash == hash);
    let given = incoming.source_version;
    match given.cmp(&stored_version) {
        Ordering::Greater if same_content => Ok(Decision::AdvanceVersion(stored)),
        Ordering::Greater => Ok(Decision::Replace(stored)),
        Ordering::Equal if same_content => Ok(Decision::Unchanged(stored)),
        Ordering::Equal => Err(OrderError::ConflictingContent {
            order_id: incoming.external_id.clone(),
            stored: stored_version,
        }),
        Ordering::Less => Err(OrderError::StaleVersion {
            order_id: incoming.external_id.clone(),
            stored: stored_version,
            given,
        }),
    }
}

/// The stored order with the shop's new content: the refunds already
/// booked stay (they happened), so the new content must still hold them,
/// and Countersign's version moves so approvals of the old order fail
/// revalidation.
fn replacement(
    stored: &SourcedOrder,
    incoming: &ValidOrder,
    customer_id: String,
    stamp: SourceStamp,
) -> Result<SourcedOrder, OrderError> {
    let replaced = sourced(
        incoming,
        customer_id,
        stored.order.version + 1,
        stored.order.refunds.clone(),
        stamp,
    );
    let order = &replaced.order;
    if let Some(refund) = order
        .refunds
        .iter()
        .find(|refund| refund.amount.currency != order.currency())
    {
        return Err(OrderError::invalid(format!(
            "currency: order {} already has refunds in {} (refund {}); its currency cannot become {}",
            order.id,
            refund.amount.currency,
            refund.id,
            order.currency()
        )));
    }
    let refunded = order
        .refunded()
        .map_err(|e| OrderError::invalid(format!("the order's refunds do not add up: {e}")))?;
    if refunded.amount_minor > order.total.amount_minor {
        return Err(OrderError::invalid(format!(
            "total_minor {} is less than the {refunded} already refunded on order {}",
            order.total.amount_minor, order.id
        )));
    }
    Ok(replaced)
}

fn sourced(
    incoming: &ValidOrder,
    customer_id: String,
    version: i64,
    refunds: Vec<domain::PastRefund>,
    stamp: SourceStamp,
) -> SourcedOrder {
    let (status, delivered_at) = domain::order::delivery_status(&incoming.events);
    SourcedOrder {
        order: OrderSnapshot {
            id: incoming.external_id.clone(),
            customer_id,
            status,
            total: incoming.total,
            payment_reference: incoming.payment_reference.clone(),
            placed_at: incoming.placed_at,
            delivered_at,
            version,
            lines: incoming.lines.clone(),
            refunds,
        },
        source: Some(stamp),
        shipping_minor: incoming.shipping_minor,
        discount_minor: incoming.discount_minor,
        events: incoming.events.clone(),
    }
}

async fn customer_id(db: &impl ConnectionTrait, name: &str) -> Result<String, OrderError> {
    let user = storage::users::find_by_name(db, name)
        .await?
        .ok_or_else(|| OrderError::UnknownCustomer(name.to_owned()))?;
    if !user.roles.contains(Role::Customer) {
        return Err(OrderError::NotACustomer(name.to_owned()));
    }
    Ok(user.id)
}

fn journal_event(
    feeder: &Feeder,
    kind: &str,
    sourced: &SourcedOrder,
    content_changed: bool,
    now: Timestamp,
) -> NewEvent {
    let order = &sourced.order;
    NewEvent {
        proposal_id: None,
        order_id: Some(order.id.clone()),
        actor: feeder.journal_name().to_owned(),
        kind: kind.to_owned(),
        from_status: None,
        to_status: None,
        payload: json!({
            "source_version": sourced.source.as_ref().map(|s| s.version),
            "content_hash": sourced.source.as_ref().map(|s| s.hash.clone()),
            "content_changed": content_changed,
            "order_version": order.version,
            "status": order.status,
            "amount": order.total.display(),
            "payment_reference": order.payment_reference,
            "lines": order.lines.len(),
        }),
        at: now,
    }
}

/// The provider's own words for a reference it cannot address.
fn provider_message(error: ProviderError) -> String {
    match error {
        ProviderError::InvalidRequest { message } => message,
        other => other.to_string(),
    }
}
