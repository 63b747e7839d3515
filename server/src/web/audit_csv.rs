//! `GET /api/v1/audit/events.csv`: the filtered journal as CSV for managers.

use crate::startup::AppState;
use crate::web::api::Caller;
use crate::web::api_error::ApiError;
use app::audit::AuditQuery;
use app::audit::backend::{FilterError, journal_filter_for};
use axum::body::Body;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use storage::journal::JournalEvent;

/// Rows read per query while streaming an export.
const CHUNK: u64 = 1000;

const HEADER: [&str; 10] = [
    "seq",
    "at",
    "actor",
    "action",
    "proposal_id",
    "order_id",
    "from_status",
    "to_status",
    "payload",
    "hash",
];

/// The journal as CSV (managers and admins), filtered like the audit page.
/// Every matching event, however many: the body streams chunk by chunk, so
/// an export is never cut short and never held in memory whole.
#[utoipa::path(get, path = "/api/v1/audit/events.csv", tag = "operations",
    params(
        ("order" = Option<String>, Query, description = "Only events of this order id"),
        ("proposal" = Option<String>, Query, description = "Only events of this proposal id"),
        ("user" = Option<String>, Query, description = "A user name, or an actor as the journal names it (`system:executor-1`)"),
        ("action" = Option<String>, Query, description = "An event kind: `proposed`, `approved`, `sent`, `verified`, …"),
        ("from" = Option<String>, Query, description = "`YYYY-MM-DD`, inclusive, UTC"),
        ("until" = Option<String>, Query, description = "`YYYY-MM-DD`, inclusive, UTC"),
    ),
    responses(
        (status = 200, description = "`seq,at,actor,action,proposal_id,order_id,from_status,to_status,payload,hash`, oldest first", content_type = "text/csv", body = String),
        (status = 403, description = "The audit trail is for managers and admins", body = crate::web::api::openapi::ErrorBody),
        (status = 422, description = "A filter that is not a date or a known action", body = crate::web::api::openapi::ErrorBody)))]
pub async fn export(
    State(state): State<AppState>,
    Caller(identity): Caller,
    query: Result<Query<AuditQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    if !identity.roles.any_of(app::access::AUDIT_ROLES) {
        return Err(ApiError::forbidden(
            "forbidden",
            "the audit trail is for managers",
        ));
    }
    let Query(query) =
        query.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid", e.body_text()))?;
    let filter = journal_filter_for(state.db.conn(), &query)
        .await
        .map_err(|e| match e {
            FilterError::Invalid(m) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", m)
            }
            FilterError::Storage(error) => ApiError::from(error),
        })?;
    // The first chunk is read before answering, so a failing database is a
    // clear error status (503 while it is unavailable) rather than a cut-off
    // download.
    let first = storage::journal::list_after(state.db.conn(), &filter, 0, CHUNK)
        .await
        .map_err(ApiError::from)?;
    let db = state.db.clone();
    let body = async_stream::stream! {
        yield csv_rows(None);
        let mut chunk = first;
        loop {
            let last = chunk.last().map(|e| e.seq);
            let full = chunk.len() as u64 == CHUNK;
            yield csv_rows(Some(chunk));
            let Some(after) = last.filter(|_| full) else { break };
            match storage::journal::list_after(db.conn(), &filter, after, CHUNK).await {
                Ok(next) => chunk = next,
                Err(error) => {
                    // The download ends as an error, not as a complete file.
                    tracing::error!(%error, "audit export failed mid-stream");
                    yield Err(std::io::Error::other("the audit export failed; try again"));
                    break;
                }
            }
        }
    };
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"countersign-audit.csv\"",
            ),
        ],
        Body::from_stream(body),
    )
        .into_response())
}

/// The header row (`None`) or the rows of `events`, as CSV bytes.
fn csv_rows(events: Option<Vec<JournalEvent>>) -> Result<Vec<u8>, std::io::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    match events {
        None => writer.write_record(HEADER)?,
        Some(events) => {
            for e in events {
                writer.write_record([
                    e.seq.to_string(),
                    e.at.to_rfc3339(),
                    e.actor,
                    e.kind,
                    e.proposal_id.unwrap_or_default(),
                    e.order_id.unwrap_or_default(),
                    e.from_status.unwrap_or_default(),
                    e.to_status.unwrap_or_default(),
                    e.payload,
                    e.hash,
                ])?;
            }
        }
    }
    writer.into_inner().map_err(|e| e.into_error())
}
