//! `/api/v1/proposals`: submit (for agents inside or outside Countersign),
//! list, read, approve, reject, and the journal of one proposal.

use super::Caller;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::views::{EventView, ProposalDetailView, ProposalView};
use crate::startup::AppState;
use crate::web::api_error::ApiError;
use app::server_errors::{decision_error, resolve_error, submit_error};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use domain::proposal::{ProposalState, ProposalStatus};
use engine::execution::resolve::ResolveAs;
use engine::proposals::{ListError, SubmitError, SubmitProposal};
use serde::{Deserialize, Serialize};
use storage::proposals::ProposalFilter;
use utoipa::{IntoParams, ToSchema};

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only proposals in this status (e.g. `awaiting_approval`).
    pub status: Option<String>,
    pub order_id: Option<String>,
    /// At most 500; default 50.
    #[param(maximum = 500)]
    pub limit: Option<u64>,
    /// Proposals to skip; at most 9223372036854775807 (the database's
    /// largest integer).
    #[param(maximum = 9_223_372_036_854_775_807_u64)]
    pub offset: Option<u64>,
}

/// The most proposals one page lists.
pub const MAX_LIMIT: u64 = 500;

impl ListQuery {
    /// The page asked for, `(limit, offset)`, or a 400 naming the parameter
    /// out of bounds.
    fn page(&self) -> Result<(u64, u64), ApiError> {
        let limit = self.limit.unwrap_or(50);
        if limit > MAX_LIMIT {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid",
                format!("limit must be at most {MAX_LIMIT}"),
            ));
        }
        let offset = storage::error::bindable(self.offset.unwrap_or(0), "offset")
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid", e.to_string()))?;
        Ok((limit, offset))
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveBody {
    /// The action digest the approver was shown.
    pub action_digest: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectBody {
    pub reason: String,
}

/// How a person resolves a proposal that needs attention. Each claim is
/// checked with the payment provider before anything is recorded.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveBody {
    /// `refund_confirmed` (the provider holds the refund; name it in
    /// `provider_refund_id`), `no_refund` (the provider holds none; with
    /// `retry: true` a new proposal under a new key waits for a fresh
    /// approval) or `closed` (closed without a refund).
    pub resolution: ResolutionKind,
    /// With `refund_confirmed`: the provider's refund id (`re_…`).
    pub provider_refund_id: Option<String>,
    /// With `no_refund`: send again under a new key after a fresh approval.
    #[serde(default)]
    pub retry: bool,
    /// What the person checked; kept in the journal.
    pub note: String,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionKind {
    RefundConfirmed,
    NoRefund,
    Closed,
}

/// The resolved proposal, and the new one waiting for approval when a new
/// send was asked for.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResolvedView<'a> {
    pub proposal: ProposalView<'a>,
    pub retry: Option<ProposalView<'a>>,
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no proposal {id}"),
    )
}

/// List proposals visible to the caller.
#[utoipa::path(get, path = "/api/v1/proposals", tag = "proposals", params(ListQuery),
    responses((status = 200, body = [ProposalView]),
        (status = 400, description = "An unknown status or parameter, or a limit or offset out of bounds", body = super::openapi::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let mut filter = ProposalFilter::default();
    let (limit, offset) = query.page()?;
    if let Some(status) = &query.status {
        let status: ProposalStatus =
            status
                .parse()
                .map_err(|e: domain::proposal::UnknownStatus| {
                    ApiError::new(StatusCode::BAD_REQUEST, "invalid", e.to_string())
                })?;
        filter.statuses = vec![status];
    }
    filter.order_id = query.order_id;
    // The engine narrows the filter to what this caller may see.
    let proposals = state
        .engine
        .proposals
        .list_for(&identity.actor(), filter, limit, offset)
        .await
        .map_err(|e| match e {
            ListError::NotAllowed => {
                ApiError::forbidden("forbidden", "this account cannot see proposals")
            }
            ListError::Storage(storage::StorageError::OutOfRange(message)) => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid", message)
            }
            ListError::Storage(other) => ApiError::internal(&other),
        })?;
    let views: Vec<ProposalView> = proposals.iter().map(ProposalView::from).collect();
    Ok(Json(views).into_response())
}

/// Submit a refund proposal. The server checks the order and every evidence
/// reference against live records, recomputes the amount, and stores an
/// immutable proposal awaiting approval.
#[utoipa::path(post, path = "/api/v1/proposals", tag = "proposals", request_body = SubmitProposalSchema,
    responses((status = 201, body = ProposalView),
        (status = 403, description = "This account may not propose refunds", body = super::openapi::ErrorBody),
        (status = 404, description = "No such order (or not the caller's)", body = super::openapi::ErrorBody),
        (status = 409, description = "The order changed meanwhile, or a live proposal already covers it (the message names it; resubmit with `supersedes` to replace it)", body = super::openapi::ErrorBody),
        (status = 422, description = "An invalid proposal: the message names what", body = super::openapi::ErrorBody),
        (status = 429, description = "This account submitted its most proposals for the window; `Retry-After` says when a slot frees", body = super::openapi::ErrorBody)))]
pub async fn submit(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiJson(input): ApiJson<SubmitProposal>,
) -> Result<Response, Response> {
    let stored = state
        .engine
        .proposals
        .submit_proposal(&identity.actor(), input)
        .await
        .map_err(submit_refusal)?;
    Ok((StatusCode::CREATED, Json(ProposalView::from(&stored))).into_response())
}

/// A refused submission in the one error shape; a spent budget says when
/// to try again (`Retry-After`, seconds).
fn submit_refusal(error: SubmitError) -> Response {
    let retry_after = match &error {
        SubmitError::TooManySubmissions {
            retry_after_secs, ..
        } => Some(*retry_after_secs),
        _ => None,
    };
    let mut response = ApiError::from(submit_error(error)).into_response();
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
    }
    response
}

/// A proposal with its decisions and receipt.
#[utoipa::path(get, path = "/api/v1/proposals/{id}", tag = "proposals",
    params(("id" = String, Path, description = "The proposal id (`prp_…`)")),
    responses((status = 200, body = ProposalDetailView), (status = 404, body = super::openapi::ErrorBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let detail = state
        .engine
        .proposals
        .detail_for(&identity.actor(), &id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .ok_or_else(|| not_found(&id))?;
    Ok(Json(ProposalDetailView::from(&detail)).into_response())
}

/// Approve the proposal whose action has the given digest. Completing the
/// approvals claims it for execution at once, after the provider was asked
/// what is left on the charge. An approval that revalidation stops answers
/// 409 `invalidated` with the reason: nothing was refunded.
#[utoipa::path(post, path = "/api/v1/proposals/{id}/approve", tag = "proposals", request_body = ApproveBody,
    params(("id" = String, Path, description = "The proposal id (`prp_…`)")),
    responses((status = 200, body = ProposalView), (status = 403, body = super::openapi::ErrorBody),
        (status = 409, description = "no longer approvable, or approved but invalidated by revalidation (code `invalidated`)", body = super::openapi::ErrorBody),
        (status = 422, body = super::openapi::ErrorBody),
        (status = 503, description = "the payment provider could not be asked about the charge; nothing was recorded", body = super::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(proposal.id = %id))]
pub async fn approve(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ApproveBody>,
) -> Result<Response, ApiError> {
    let stored = state
        .engine
        .approvals
        .approve(&identity.actor(), &id, body.action_digest.trim())
        .await
        .map_err(|e| ApiError::from(decision_error(e)))?;
    if let ProposalState::Invalidated { reason } = &stored.state {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "invalidated",
            format!("the approval was recorded but the refund was not executed: {reason}"),
        ));
    }
    Ok(Json(ProposalView::from(&stored)).into_response())
}

/// Reject the proposal, with a reason.
#[utoipa::path(post, path = "/api/v1/proposals/{id}/reject", tag = "proposals", request_body = RejectBody,
    params(("id" = String, Path, description = "The proposal id (`prp_…`)")),
    responses((status = 200, body = ProposalView), (status = 403, body = super::openapi::ErrorBody),
        (status = 409, description = "No longer awaiting approval", body = super::openapi::ErrorBody),
        (status = 422, description = "An empty or over-long reason", body = super::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(proposal.id = %id))]
pub async fn reject(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<RejectBody>,
) -> Result<Response, ApiError> {
    let stored = state
        .engine
        .approvals
        .reject(&identity.actor(), &id, &body.reason)
        .await
        .map_err(|e| ApiError::from(decision_error(e)))?;
    Ok(Json(ProposalView::from(&stored)).into_response())
}

/// Resolve a proposal that needs attention (approvers and managers).
#[utoipa::path(post, path = "/api/v1/proposals/{id}/resolve", tag = "proposals", request_body = ResolveBody,
    params(("id" = String, Path, description = "The proposal id (`prp_…`)")),
    responses((status = 200, body = ResolvedView), (status = 403, body = super::openapi::ErrorBody),
        (status = 404, body = super::openapi::ErrorBody),
        (status = 409, description = "not waiting for a person, or the provider shows otherwise", body = super::openapi::ErrorBody),
        (status = 422, body = super::openapi::ErrorBody),
        (status = 503, description = "the payment provider could not be asked; nothing was recorded", body = super::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(proposal.id = %id))]
pub async fn resolve(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ResolveBody>,
) -> Result<Response, ApiError> {
    let how = match (body.resolution, body.provider_refund_id) {
        (ResolutionKind::RefundConfirmed, Some(refund_id)) => ResolveAs::RefundConfirmed {
            provider_refund_id: refund_id,
        },
        (ResolutionKind::RefundConfirmed, None) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid",
                "provider_refund_id is required with refund_confirmed",
            ));
        }
        (ResolutionKind::NoRefund, _) => ResolveAs::NoRefund { retry: body.retry },
        (ResolutionKind::Closed, _) => ResolveAs::Closed,
    };
    let resolved = state
        .engine
        .execution
        .resolve(&identity.actor(), &id, how, &body.note)
        .await
        .map_err(|e| ApiError::from(resolve_error(e)))?;
    Ok(Json(ResolvedView {
        proposal: ProposalView::from(&resolved.proposal),
        retry: resolved.retry.as_ref().map(ProposalView::from),
    })
    .into_response())
}

/// The journal of one proposal, oldest first.
#[utoipa::path(get, path = "/api/v1/proposals/{id}/events", tag = "proposals",
    params(("id" = String, Path, description = "The proposal id (`prp_…`)")),
    responses((status = 200, body = [EventView]), (status = 404, body = super::openapi::ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Vec<EventView>>, ApiError> {
    let detail = state
        .engine
        .proposals
        .detail_for(&identity.actor(), &id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .ok_or_else(|| not_found(&id))?;
    Ok(Json(detail.events.iter().map(EventView::from).collect()))
}

/// Documents the body of `POST /api/v1/proposals`.
#[derive(ToSchema)]
#[expect(dead_code, reason = "exists to document the request body in OpenAPI")]
pub struct SubmitProposalSchema {
    /// The order to refund.
    pub order_id: String,
    /// Omit to refund everything still refundable (of the named lines, if
    /// any); a given amount is checked.
    pub amount_minor: Option<i64>,
    /// Must match the order's currency if given.
    pub currency: Option<String>,
    /// The order lines (SKUs) the refund is for; omit for the whole order.
    /// Live proposals for different lines of one order may coexist while
    /// together they fit what is left to refund.
    pub lines: Option<Vec<String>>,
    /// Citations: `{"reference": "order:4821"}`, `{"reference": "returns-policy:section-3", "quote": "…", "version": "…"}`.
    #[schema(value_type = Vec<Object>)]
    pub evidence: Vec<serde_json::Value>,
    /// Explicit unknowns: `{"question": "Was the parcel opened?", "ask": "customer", "answer": null}`.
    #[schema(value_type = Vec<Object>)]
    pub open_questions: Vec<serde_json::Value>,
    pub recommendation: String,
    /// Deprecated, omit it: the agent name is bound to the credential
    /// (`external:<user name>` for an agent service account,
    /// `staff:<user name>` for staff). A name given here must be exactly
    /// that; any other is refused with 403.
    pub agent: Option<String>,
    /// A conversation with the order's own customer; any other is refused.
    pub conversation_id: Option<String>,
    /// Id of the live proposal (awaiting approval) this one replaces: it is
    /// superseded in the same transaction. Required when the new proposal
    /// overlaps a live one on the order (the same lines, or together more
    /// than is left to refund); without it that submission is a 409 naming
    /// the live proposal.
    pub supersedes: Option<String>,
}
