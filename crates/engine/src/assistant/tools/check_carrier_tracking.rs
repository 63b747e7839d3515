//! `check_carrier_tracking`: opens the carrier's tracking page for the
//! order's shipment in a real browser (the exclusive browser lane: one page
//! at a time, across replicas) and reads the delivery status and date. The
//! reading is evidence with its provenance — URL, time, and a screenshot
//! with its SHA-256 — which a proposal cites and the review queue shows.
//! A page that cannot be read (no browser installed, the carrier slow or
//! down) is `unknown`, with the reason: never a guess about the parcel.

use super::{CHECK_CARRIER_TRACKING, one_order_parameters, this_customers_order_call};
use crate::assistant::carrier::{CARRIER_READ_LIMIT, CarrierCheck, CarrierCheckError};
use agents::{Provenance, Tool, ToolContext, ToolOutcome};
use async_trait::async_trait;
use serde_json::Value;
use std::time::Duration;

/// How a browser check is cited: `browser-check:<id>`.
pub const BROWSER_CHECK_SOURCE: &str = "browser-check";

#[derive(Debug, Clone, Copy, Default)]
pub struct CheckCarrierTracking;

/// The provenance of `check`: the page, when it was read, and the hash of
/// the screenshot taken then.
pub fn provenance(check: &CarrierCheck) -> Provenance {
    Provenance {
        source: format!("{BROWSER_CHECK_SOURCE}:{}", check.id),
        title: format!(
            "{} tracking page for order {} ({})",
            check.carrier, check.order_id, check.tracking_number
        ),
        section: Some(format!(
            "{} · read {} · screenshot SHA-256 {}",
            check.url,
            check.captured_at.format("%Y-%m-%d %H:%M:%S UTC"),
            check.screenshot_sha256
        )),
        version: check.screenshot_sha256.clone(),
        quote: Some(match &check.delivered_on {
            Some(date) => format!("status: {}; delivered on {date}", check.status),
            None => format!("status: {}", check.status),
        }),
    }
}

#[async_trait]
impl Tool for CheckCarrierTracking {
    fn name(&self) -> &str {
        CHECK_CARRIER_TRACKING
    }

    fn description(&self) -> &str {
        "Open the carrier's tracking page for the order's shipment in a browser and read its delivery status and date. Use it when the order record does not show a delivery. The page read is evidence (with a screenshot); unknown means the page could not be read and nothing is known about the parcel."
    }

    fn parameters(&self) -> Value {
        one_order_parameters()
    }

    fn time_limit(&self, _runner_limit: Option<Duration>) -> Option<Duration> {
        Some(CARRIER_READ_LIMIT)
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> ToolOutcome {
        let (scope, order_id) = match this_customers_order_call(ctx, args).await {
            Ok(call) => call,
            Err(outcome) => return outcome,
        };
        let check = match scope
            .tools
            .check_carrier(&order_id, &scope.conversation_id)
            .await
        {
            Ok(check) => check,
            Err(CarrierCheckError::NoCarrier) => {
                return ToolOutcome::refused("no carrier is connected to this team");
            }
            Err(error) => {
                tracing::warn!(%error, order.id = %order_id, "the carrier's tracking page could not be read");
                return ToolOutcome::unknown(format!(
                    "the delivery status of order {order_id} is unknown: {error}"
                ));
            }
        };
        let provenance = provenance(&check);
        scope
            .ledger()
            .carrier_checked(&order_id, provenance.clone());
        ToolOutcome::found(
            serde_json::to_value(&check).unwrap_or_default(),
            vec![provenance],
        )
    }
}
