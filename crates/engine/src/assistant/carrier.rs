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

/// How long one carrier check may take: a place in the one browser's
/// queue, then the read, which the browser's own time limit bounds. The
/// turn's usual tool limit (20 s) would cut a read queued behind another
/// slow page, and the carrier's answer would be lost.
pub const CARRIER_READ_LIMIT: std::time::Duration =
    MAX_BROWSER_TIMEOUT.saturating_add(std::time::Duration::from_secs(30));

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
        // The conversation's pages say a carrier's page is being read
        // (queue included) until the read ends, however it ends.
        let shown = ReadShown::start(self, conversation_id).await?;
        let hold = desk.lane.acquire(BROWSER_RESOURCE).await;
        let read: Result<_, CarrierCheckError> = match hold {
            Ok(hold) => {
                let read = desk.browser.read_tracking_page(&url).await;
                hold.release().await;
                read.map_err(CarrierCheckError::from)
            }
            Err(error) => Err(error.into()),
        };
        shown.end().await;
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

    /// Tells conversation `conversation_id`'s pages that it changed.
    async fn announce_change(&self, conversation_id: &str) {
        match storage::conversations::get(self.db.conn(), conversation_id).await {
            Ok(Some(stored)) => self.announce(&stored),
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(%error, conversation.id = %conversation_id, "a conversation's pages could not be told it changed");
            }
        }
    }
}

/// The mark that a carrier's page is being read for a conversation: set
/// when the check starts, ended when it does. A check dropped mid-read (a
/// Stop) ends it in a supervised task; a lost end only shows the line until
/// the turn ends or the read's time limit passes.
struct ReadShown {
    chat: Chat,
    conversation_id: String,
    until: Timestamp,
    ended: bool,
}

impl ReadShown {
    async fn start(chat: &Chat, conversation_id: &str) -> Result<ReadShown, StorageError> {
        let limit = chrono::Duration::from_std(CARRIER_READ_LIMIT).unwrap_or(chrono::Duration::MAX);
        // Whole milliseconds: the end compares it with what the database
        // stored, and PostgreSQL keeps microseconds only.
        let until = chat.clock.now() + limit;
        let until = Timestamp::from_timestamp_millis(until.timestamp_millis()).unwrap_or(until);
        storage::conversations::start_carrier_read(chat.db.conn(), conversation_id, until).await?;
        chat.announce_change(conversation_id).await;
        Ok(ReadShown {
            chat: chat.clone(),
            conversation_id: conversation_id.to_owned(),
            until,
            ended: false,
        })
    }

    async fn end(mut self) {
        self.ended = true;
        end_read(&self.chat, &self.conversation_id, self.until).await;
    }
}

impl Drop for ReadShown {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let chat = self.chat.clone();
        let conversation_id = std::mem::take(&mut self.conversation_id);
        let until = self.until;
        self.chat
            .tasks
            .spawn("end a carrier read's mark", async move {
                end_read(&chat, &conversation_id, until).await;
            });
    }
}

async fn end_read(chat: &Chat, conversation_id: &str, until: Timestamp) {
    match storage::conversations::end_carrier_read(chat.db.conn(), conversation_id, until).await {
        Ok(true) => chat.announce_change(conversation_id).await,
        Ok(false) => {}
        Err(error) => {
            tracing::warn!(%error, conversation.id = %conversation_id, "a carrier read's mark could not be ended; it lapses with the read's time limit");
        }
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
