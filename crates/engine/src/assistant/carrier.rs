//! The carrier's view of a shipment, read from its tracking page in a real
//! browser inside the exclusive browser lane (one page at a time across
//! every replica), and kept as evidence: what the page said, its URL, when,
//! and a screenshot with its SHA-256.

use super::Chat;
use crate::exclusive_lane::ExclusiveLane;
use connectors::browser::{BrowserError, Chromium};
use domain::Timestamp;
use serde::{Deserialize, Serialize};
use storage::StorageError;

/// The longest one page read may be given, browser start included.
pub const MAX_BROWSER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The resource the browser lane serialises.
pub const BROWSER_RESOURCE: &str = "browser";

/// The carrier whose tracking pages the specialist reads, and how.
#[derive(Debug, Clone)]
pub struct CarrierDesk {
    /// The carrier whose pages these are, as shipments name it.
    pub carrier: String,
    pub browser: Chromium,
    pub lane: ExclusiveLane,
    /// The tracking page's address, `{tracking_number}` standing for the
    /// shipment's number.
    pub tracking_url: String,
}

/// One reading of a tracking page, as a tool result and as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarrierCheck {
    /// The browser check on record (`browser-check:<id>` cites it).
    pub id: String,
    pub order_id: String,
    pub carrier: String,
    pub tracking_number: String,
    pub url: String,
    pub captured_at: Timestamp,
    /// `delivered`, `in_transit`, `out_for_delivery`, `exception` or
    /// `unknown`.
    pub status: String,
    /// `YYYY-MM-DD`, when delivered.
    pub delivered_on: Option<String>,
    pub screenshot_sha256: String,
}

/// Why no reading was made. None of these says anything about the parcel.
#[derive(Debug, thiserror::Error)]
pub enum CarrierCheckError {
    #[error("no carrier is connected to this team")]
    NoCarrier,
    #[error("no shipment is on record for order {0}")]
    NoShipment(String),
    /// Another carrier's number on this carrier's page could name someone
    /// else's parcel: it is never looked up there.
    #[error(
        "order {order_id} went out with {carrier}, whose tracking pages this team does not read (only {readable}'s)"
    )]
    OtherCarrier {
        order_id: String,
        carrier: String,
        readable: String,
    },
    #[error(transparent)]
    Browser(#[from] BrowserError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl Chat {
    /// Reads the tracking page of `order_id`'s shipment in the browser
    /// lane, for conversation `conversation_id`, and records what it saw.
    /// Cancel-safe: a Stop drops it, which kills the browser and gives the
    /// lane to the next task.
    pub(super) async fn check_carrier(
        &self,
        order_id: &str,
        conversation_id: &str,
    ) -> Result<CarrierCheck, CarrierCheckError> {
        let desk = self.carrier.as_ref().ok_or(CarrierCheckError::NoCarrier)?;
        let shipment = storage::browser::shipments::find(self.db.conn(), order_id)
            .await?
            .ok_or_else(|| CarrierCheckError::NoShipment(order_id.to_owned()))?;
        if shipment.carrier != desk.carrier {
            return Err(CarrierCheckError::OtherCarrier {
                order_id: order_id.to_owned(),
                carrier: shipment.carrier,
                readable: desk.carrier.clone(),
            });
        }
        let url = desk
            .tracking_url
            .replace("{tracking_number}", &url_escape(&shipment.tracking_number));
        let hold = desk.lane.acquire(BROWSER_RESOURCE).await?;
        let read = desk.browser.read_tracking_page(&url).await;
        hold.release().await;
        let page = read?;
        let check = CarrierCheck {
            id: storage::ids::new_id("brc"),
            order_id: order_id.to_owned(),
            carrier: shipment.carrier,
            tracking_number: shipment.tracking_number,
            url: page.url,
            captured_at: self.clock.now(),
            status: page.status,
            delivered_on: page.delivered_on,
            screenshot_sha256: page.screenshot_sha256,
        };
        // The screenshot moves into the record; only its hash is kept here.
        let record = storage::browser::checks::BrowserCheck {
            id: check.id.clone(),
            order_id: check.order_id.clone(),
            conversation_id: Some(conversation_id.to_owned()),
            url: check.url.clone(),
            captured_at: check.captured_at,
            status: check.status.clone(),
            delivered_on: check.delivered_on.clone(),
            page_text: page.text,
            screenshot_sha256: check.screenshot_sha256.clone(),
            screenshot: page.screenshot,
        };
        storage::browser::checks::record(self.db.conn(), record).await?;
        Ok(check)
    }
}

/// A tracking number as a path segment: letters, digits, '-' and '_' as
/// they are, anything else percent-encoded.
fn url_escape(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
