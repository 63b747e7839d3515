//! The scrape: the token check, the state series read now, and the event
//! series the recorder kept.

use crate::startup::AppState;
use crate::web::api_error::ApiError;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use domain::Timestamp;
use domain::proposal::{ProposalState, ProposalStatus};
use http::{HeaderMap, StatusCode, header};
use metrics_exporter_prometheus::PrometheusBuilder;
use secrecy::ExposeSecret;
use subtle::ConstantTimeEq;

/// The text exposition format's content type.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

pub const PROPOSALS: &str = "countersign_proposals";
pub const UNKNOWN_OPEN: &str = "countersign_unknown_outcomes_open";
pub const UNKNOWN_OLDEST_SECONDS: &str = "countersign_unknown_outcome_oldest_age_seconds";
pub const LIVE_SUBSCRIBERS: &str = "countersign_live_subscribers";
pub const WORK_ITEMS: &str = "countersign_work_items";
pub const WORK_OLDEST_DUE_SECONDS: &str = "countersign_work_oldest_due_age_seconds";
pub const ALERTS_OPEN: &str = "countersign_alerts_open";

/// Metrics in the Prometheus text format, for a scraper that sends
/// `Authorization: Bearer <COUNTERSIGN_METRICS_TOKEN>`. Without a token
/// configured there are no metrics here: 404, as for any unknown path.
#[utoipa::path(get, path = "/metrics", tag = "probes", security(("metrics_token" = [])),
    responses(
        (status = 200, description = "Prometheus text exposition format (0.0.4)", content_type = "text/plain", body = String),
        (status = 401, description = "No scrape token, or not the configured one", body = crate::web::api::openapi::ErrorBody),
        (status = 404, description = "No scrape token is configured (`COUNTERSIGN_METRICS_TOKEN`)", body = crate::web::api::openapi::ErrorBody),
        (status = 503, description = "The database does not answer", body = crate::web::api::openapi::ErrorBody)))]
pub async fn metrics(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let Some(expected) = &state.settings.metrics_token else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "no such endpoint",
        ));
    };
    if !holds_token(&headers, expected.expose_secret()) {
        return Err(ApiError::unauthenticated(
            "send the scrape token as Authorization: Bearer <COUNTERSIGN_METRICS_TOKEN>",
        ));
    }
    let states = read_states(&state).await?;
    let events = super::install();
    events.run_upkeep();
    let mut body = events.render();
    body.push_str(&states);
    Ok(([(header::CONTENT_TYPE, TEXT_FORMAT)], body).into_response())
}

/// Compared in constant time, so timing tells nothing of the token.
fn holds_token(headers: &HeaderMap, expected: &str) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .is_some_and(|(_, sent)| bool::from(sent.trim().as_bytes().ct_eq(expected.as_bytes())))
}

/// The series read at scrape time, rendered through a recorder of their own
/// (every server in a process has its own database and engine).
async fn read_states(state: &AppState) -> Result<String, ApiError> {
    let db = state.db.conn();
    let by_status = storage::proposals::count_by_status(db)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let now = state.engine.now();
    let unresolved = storage::proposals::unresolved_outcomes(db, now)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let oldest = unresolved
        .iter()
        .filter_map(unresolved_since)
        .min()
        .map_or(0.0, |since| seconds_between(since, now));
    let subscribers = state.engine.live.subscribers();
    let lanes = storage::work::lane_summary(db, now)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let mut alerts = Vec::new();
    for kind in ALERT_KINDS {
        let open = storage::work::alerts::count_open(db, kind)
            .await
            .map_err(|e| ApiError::internal(&e))?;
        alerts.push((*kind, open));
    }

    let recorder = PrometheusBuilder::new().build_recorder();
    metrics::with_local_recorder(&recorder, || {
        metrics::describe_gauge!(
            PROPOSALS,
            "Proposals by state, as the database holds them now"
        );
        // Every state, zero included, so a state's series never vanishes.
        for status in ProposalStatus::ALL {
            let count = by_status
                .iter()
                .find(|(name, _)| name == status.as_str())
                .map_or(0, |(_, count)| *count);
            #[allow(clippy::cast_precision_loss, reason = "a count, far below 2^52")]
            metrics::gauge!(PROPOSALS, "state" => status.as_str()).set(count as f64);
        }
        metrics::describe_gauge!(
            UNKNOWN_OPEN,
            "Refunds whose outcome is not known: outcome_unknown, or executing past the lease"
        );
        #[allow(clippy::cast_precision_loss, reason = "a count, far below 2^52")]
        metrics::gauge!(UNKNOWN_OPEN).set(unresolved.len() as f64);
        metrics::describe_gauge!(
            UNKNOWN_OLDEST_SECONDS,
            metrics::Unit::Seconds,
            "How long the oldest open unknown outcome has been unknown (0 when none)"
        );
        metrics::gauge!(UNKNOWN_OLDEST_SECONDS).set(oldest);
        metrics::describe_gauge!(
            LIVE_SUBSCRIBERS,
            "Open live streams (server-sent events) in this process"
        );
        #[allow(clippy::cast_precision_loss, reason = "a count, far below 2^52")]
        metrics::gauge!(LIVE_SUBSCRIBERS).set(subscribers as f64);
        lane_series(&lanes, now);
        metrics::describe_gauge!(
            ALERTS_OPEN,
            "Alerts no person has acknowledged yet, by kind"
        );
        for (kind, open) in &alerts {
            #[allow(clippy::cast_precision_loss, reason = "a count, far below 2^52")]
            metrics::gauge!(ALERTS_OPEN, "kind" => *kind).set(*open as f64);
        }
    });
    Ok(recorder.handle().render())
}

/// The alert kinds, each shown (zero included) so an alert rule can watch
/// its series from the start.
const ALERT_KINDS: &[&str] = &[
    engine::work::alert_kind::JOURNAL_BROKEN,
    engine::work::alert_kind::PROPOSAL_NEEDS_PERSON,
    engine::work::alert_kind::KEY_EXPIRING,
];

/// The runner's lanes: items by what they are doing, and how long the
/// longest-waiting due item has waited. (How long items take is recorded
/// by the runner itself: `countersign_work_item_seconds{lane,kind}`.)
#[allow(clippy::cast_precision_loss, reason = "counts, far below 2^52")]
fn lane_series(lanes: &[storage::work::LaneSummary], now: Timestamp) {
    metrics::describe_gauge!(
        WORK_ITEMS,
        "Work items of each lane by state: running, queued (due), scheduled, retrying, dead"
    );
    metrics::describe_gauge!(
        WORK_OLDEST_DUE_SECONDS,
        metrics::Unit::Seconds,
        "How long the longest-waiting due item of each lane has waited (0 when none)"
    );
    for lane in lanes {
        let name = lane.lane.clone();
        for (state, count) in [
            ("running", lane.running),
            ("queued", lane.queued),
            ("scheduled", lane.scheduled),
            ("retrying", lane.retrying),
            ("dead", lane.dead),
        ] {
            metrics::gauge!(WORK_ITEMS, "lane" => name.clone(), "state" => state).set(count as f64);
        }
        let waited = lane.oldest_due.map_or(0.0, |due| seconds_between(due, now));
        metrics::gauge!(WORK_OLDEST_DUE_SECONDS, "lane" => name).set(waited);
    }
}

/// Since when a refund's outcome has not been known: the first unknown
/// answer, or for a send whose lease lapsed without one, the lapse.
fn unresolved_since(state: &ProposalState) -> Option<Timestamp> {
    match state {
        ProposalState::OutcomeUnknown { since, .. } => Some(*since),
        ProposalState::Executing {
            unknown: Some(uncertainty),
            ..
        } => Some(uncertainty.since),
        ProposalState::Executing { lease_until, .. } => Some(*lease_until),
        _ => None,
    }
}

#[allow(
    clippy::cast_precision_loss,
    reason = "milliseconds of an age, far below 2^52"
)]
fn seconds_between(since: Timestamp, now: Timestamp) -> f64 {
    (now - since).num_milliseconds().max(0) as f64 / 1000.0
}
