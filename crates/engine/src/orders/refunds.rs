//! Recording a refund the shop made through another channel (its support
//! desk, the provider's dashboard): booked on the order exactly like
//! Countersign's own refunds, so revalidation and the refundable remainder
//! count it, and journaled in the order's stream.

use super::validate::{self, ValidRefund};
use super::{Feeder, OrderError, Orders, RecordRefund};
use domain::{Money, PastRefund, Timestamp};
use serde_json::json;
use storage::journal::NewEvent;

/// A refund as recorded on an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRefund {
    pub order_id: String,
    pub refund: PastRefund,
    /// False when this exact refund was recorded before: nothing was written.
    pub newly_recorded: bool,
}

impl Orders {
    /// Books the refund on order `external_id` unless a refund with its id is
    /// recorded already (then the same refund is answered, and a different
    /// one refused).
    ///
    /// # Errors
    /// [`OrderError`] naming the problem: an unknown order, another currency
    /// than the order's, more than is still refundable, a refund id recorded
    /// with other content; nothing is stored then.
    pub async fn record_refund(
        &self,
        feeder: &Feeder,
        external_id: &str,
        input: RecordRefund,
    ) -> Result<RecordedRefund, OrderError> {
        let (db, now) = (&self.db, self.clock.now());
        let external_id = validate::check_external_id(external_id)?;
        let incoming = validate::refund(input, now)?;
        let tx = db.begin_write().await?;
        let order = storage::shop_orders::lock_and_get(&*tx, &external_id)
            .await?
            .ok_or_else(|| OrderError::OrderNotFound(external_id.clone()))?
            .order;
        let refund = PastRefund {
            id: incoming.refund_id.clone(),
            amount: Money::new(incoming.amount_minor, incoming.currency),
            channel: incoming.channel.clone(),
            reference: incoming.reference.clone(),
            created_at: incoming.created_at,
        };
        if let Some((recorded_on, recorded)) =
            storage::shop_orders::find_refund(&*tx, &incoming.refund_id).await?
        {
            tx.rollback().await?;
            return repeat(&external_id, refund, recorded_on, recorded);
        }
        check_against_order(&order, &incoming)?;
        storage::orders::record_refund(&*tx, &external_id, &refund).await?;
        storage::journal::append_to_stream(
            &*tx,
            &storage::journal::order_stream(&external_id),
            vec![journal_event(feeder, &order, &refund, now)],
        )
        .await?;
        tx.commit().await?;
        Ok(RecordedRefund {
            order_id: external_id,
            refund,
            newly_recorded: true,
        })
    }
}

/// A refund id seen before: the same refund again is answered as it was;
/// anything else under that id is refused, naming what is recorded.
fn repeat(
    order_id: &str,
    incoming: PastRefund,
    recorded_on: String,
    recorded: PastRefund,
) -> Result<RecordedRefund, OrderError> {
    if recorded_on == order_id && recorded == incoming {
        return Ok(RecordedRefund {
            order_id: recorded_on,
            refund: recorded,
            newly_recorded: false,
        });
    }
    Err(OrderError::RefundConflict(format!(
        "refund {} is already recorded on order {recorded_on} as {} through {} ({}) at {}; a different refund needs another refund_id",
        recorded.id,
        recorded.amount,
        recorded.channel,
        recorded.reference,
        recorded
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
    )))
}

fn check_against_order(
    order: &domain::OrderSnapshot,
    incoming: &ValidRefund,
) -> Result<(), OrderError> {
    if incoming.currency != order.currency() {
        return Err(OrderError::invalid(format!(
            "currency: order {} is in {}, not {}",
            order.id,
            order.currency(),
            incoming.currency
        )));
    }
    if incoming.created_at < order.placed_at {
        return Err(OrderError::invalid(format!(
            "created_at ({}) is before the order was placed ({})",
            incoming.created_at, order.placed_at
        )));
    }
    let refundable = order
        .refundable()
        .map_err(|e| OrderError::invalid(format!("the order's refunds do not add up: {e}")))?;
    if incoming.amount_minor > refundable.amount_minor {
        return Err(OrderError::OverRefund {
            order_id: order.id.clone(),
            requested: Money::new(incoming.amount_minor, incoming.currency),
            refundable,
        });
    }
    Ok(())
}

fn journal_event(
    feeder: &Feeder,
    order: &domain::OrderSnapshot,
    refund: &PastRefund,
    now: Timestamp,
) -> NewEvent {
    let refundable_after = order
        .refundable()
        .ok()
        .and_then(|left| left.checked_sub(refund.amount).ok())
        .map(|left| left.display());
    NewEvent {
        proposal_id: None,
        order_id: Some(order.id.clone()),
        actor: feeder.journal_name().to_owned(),
        kind: "order.refund_recorded".to_owned(),
        from_status: None,
        to_status: None,
        payload: json!({
            "refund_id": refund.id,
            "amount": refund.amount.display(),
            "amount_minor": refund.amount.amount_minor,
            "channel": refund.channel,
            "reference": refund.reference,
            "created_at": refund.created_at,
            "refundable_after": refundable_after,
            "order_version": order.version + 1,
        }),
        at: now,
    }
}
