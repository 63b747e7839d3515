//! `GET /api/v1/audit/events.csv`: the filtered journal as CSV for managers.

use crate::startup::AppState;
use crate::web::api::Caller;
use crate::web::api_error::ApiError;
use app::audit::AuditQuery;
use app::audit::backend::journal_filter;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

/// The most rows one export returns.
const MAX_ROWS: u64 = 100_000;

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
    let filter = journal_filter(&query)
        .map_err(|m| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", m))?;
    let (events, _) = storage::journal::list(state.db.conn(), &filter, 0, MAX_ROWS)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let mut writer = csv::Writer::from_writer(Vec::new());
    let header_row = [
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
    writer
        .write_record(header_row)
        .map_err(|e| ApiError::internal(&e))?;
    for e in events {
        writer
            .write_record([
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
            ])
            .map_err(|e| ApiError::internal(&e))?;
    }
    let body = writer.into_inner().map_err(|e| ApiError::internal(&e))?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"countersign-audit.csv\"",
            ),
        ],
        body,
    )
        .into_response())
}
