//! Recording how an order went out: the carrier and its tracking number,
//! which the specialist's browser lane reads when the order record shows
//! no delivery. A shipment is not part of the order's content: recording
//! or correcting it leaves the order's version (and the approvals given on
//! it) alone. Journaled in the order's stream; a repeat writes nothing.

use super::validate::check_external_id;
use super::{Feeder, OrderError, Orders};
use domain::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::json;
use storage::browser::shipments::Shipment;
use storage::journal::NewEvent;

/// The longest tracking number accepted (carriers use 10–35 characters).
pub const MAX_TRACKING_NUMBER_LEN: usize = 64;
/// The longest carrier name accepted.
pub const MAX_CARRIER_LEN: usize = 40;

/// The body of `PUT /api/v1/orders/{external_id}/shipment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShipmentInput {
    /// The carrier's name as this team configures it (`parcelway` for the
    /// sandbox carrier): lowercase letters, digits, `-` and `_`.
    pub carrier: String,
    /// As the carrier prints it: letters and digits, `-` allowed.
    pub tracking_number: String,
}

/// What recording a shipment did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShipmentChange {
    /// The order had no shipment on record.
    Recorded,
    /// Another carrier or tracking number was on record (a correction).
    Corrected,
    /// The same shipment was on record: nothing was written.
    Unchanged,
}

impl Orders {
    /// Records (or corrects) the shipment of order `external_id`.
    ///
    /// # Errors
    /// [`OrderError::InvalidExternalId`], [`OrderError::Invalid`] naming
    /// the field, [`OrderError::OrderNotFound`], storage failures; nothing
    /// is stored then.
    pub async fn record_shipment(
        &self,
        feeder: &Feeder,
        external_id: &str,
        input: ShipmentInput,
    ) -> Result<(Shipment, ShipmentChange), OrderError> {
        let external_id = check_external_id(external_id)?;
        let shipment = valid_shipment(&external_id, input)?;
        let tx = self.db.begin_write().await?;
        // Locked like every other write to the order, so a correction and
        // its journal event land in the order's stream in order.
        storage::shop_orders::lock_and_get(&*tx, &external_id)
            .await?
            .ok_or_else(|| OrderError::OrderNotFound(external_id.clone()))?;
        let before = storage::browser::shipments::find(&*tx, &external_id).await?;
        let change = match &before {
            Some(stored) if *stored == shipment => {
                tx.rollback().await?;
                return Ok((shipment, ShipmentChange::Unchanged));
            }
            Some(_) => ShipmentChange::Corrected,
            None => ShipmentChange::Recorded,
        };
        storage::browser::shipments::record(&*tx, shipment.clone()).await?;
        storage::journal::append_to_stream(
            &*tx,
            &storage::journal::order_stream(&external_id),
            vec![journal_event(
                feeder,
                &shipment,
                before.as_ref(),
                self.clock.now(),
            )],
        )
        .await?;
        tx.commit().await?;
        Ok((shipment, change))
    }

    /// The shipment on record for order `external_id`, if any.
    ///
    /// # Errors
    /// [`OrderError::InvalidExternalId`], [`OrderError::OrderNotFound`],
    /// storage failures.
    pub async fn get_shipment(
        &self,
        _permission: &Feeder,
        external_id: &str,
    ) -> Result<Option<Shipment>, OrderError> {
        let external_id = check_external_id(external_id)?;
        let conn = self.db.conn();
        if storage::shop_orders::get(conn, &external_id)
            .await?
            .is_none()
        {
            return Err(OrderError::OrderNotFound(external_id));
        }
        Ok(storage::browser::shipments::find(conn, &external_id).await?)
    }
}

/// Whether `name` has the form of a carrier's name, as shipments and the
/// `carrier_name` setting give it: 1 to [`MAX_CARRIER_LEN`] lowercase
/// letters, digits, `-` or `_`.
#[must_use]
pub fn is_carrier_name(name: &str) -> bool {
    let slug = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
    !name.is_empty() && name.len() <= MAX_CARRIER_LEN && name.chars().all(slug)
}

fn valid_shipment(order_id: &str, input: ShipmentInput) -> Result<Shipment, OrderError> {
    let carrier = input.carrier;
    if !is_carrier_name(&carrier) {
        return Err(OrderError::invalid(format!(
            "carrier: {carrier:?} is not a carrier name (1 to {MAX_CARRIER_LEN} lowercase letters, digits, '-' or '_', e.g. \"parcelway\")"
        )));
    }
    let number = input.tracking_number;
    let printable = |c: char| c.is_ascii_alphanumeric() || c == '-';
    if number.is_empty() || number.len() > MAX_TRACKING_NUMBER_LEN || !number.chars().all(printable)
    {
        return Err(OrderError::invalid(format!(
            "tracking_number: {number:?} is not a tracking number (1 to {MAX_TRACKING_NUMBER_LEN} letters, digits or '-', no spaces)"
        )));
    }
    Ok(Shipment {
        order_id: order_id.to_owned(),
        carrier,
        tracking_number: number,
    })
}

fn journal_event(
    feeder: &Feeder,
    shipment: &Shipment,
    before: Option<&Shipment>,
    now: Timestamp,
) -> NewEvent {
    NewEvent {
        proposal_id: None,
        order_id: Some(shipment.order_id.clone()),
        actor: feeder.journal_name().to_owned(),
        kind: "order.shipment_recorded".to_owned(),
        from_status: None,
        to_status: None,
        payload: json!({
            "carrier": shipment.carrier,
            "tracking_number": shipment.tracking_number,
            "replaces": before.map(|b| json!({
                "carrier": b.carrier,
                "tracking_number": b.tracking_number,
            })),
        }),
        at: now,
    }
}
