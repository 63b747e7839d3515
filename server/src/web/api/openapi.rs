//! The OpenAPI document, generated from the handlers, at `/api/openapi.json`.

use super::{conversations, operations, orders, proposals, views};
use serde::Serialize;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// `{"error": {"code": "...", "message": "..."}}`, the one error shape.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Machine-readable: `unauthenticated`, `forbidden`, `invalid`, `not_found`, `conflict`, …
    pub code: String,
    /// For people.
    pub message: String,
}

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("`countersign token create --user NAME`"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "countersign_session",
                "Browser session; writes also need the x-csrf-token header",
            ))),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Countersign API",
        description = "Agents propose; an authenticated person approves one specific proposal; Countersign executes it exactly once and verifies it. Money is integer minor units with an ISO currency; times are UTC.",
        version = "1"
    ),
    paths(
        proposals::list,
        proposals::submit,
        proposals::get_one,
        proposals::approve,
        proposals::reject,
        proposals::resolve,
        proposals::events,
        orders::upsert,
        orders::get_one,
        orders::record_refund,
        operations::ledger,
        operations::verify_journal,
        conversations::create,
        conversations::get_one,
        conversations::message,
        conversations::stop,
        conversations::events,
        super::me,
    ),
    components(schemas(
        ErrorBody,
        ErrorDetail,
        views::ProposalView,
        views::ProposalDetailView,
        views::EvidenceView,
        views::QuestionView,
        views::DecisionView,
        views::ReceiptView,
        views::EventView,
        proposals::ApproveBody,
        proposals::RejectBody,
        proposals::ResolveBody,
        proposals::ResolutionKind,
        proposals::ResolvedView,
        proposals::SubmitProposalSchema,
        orders::OrderView,
        orders::LineView,
        orders::DeliveryEventView,
        orders::RefundView,
        orders::OrderUpsertSchema,
        orders::LineSchema,
        orders::DeliveryEventSchema,
        orders::RecordRefundSchema,
        conversations::CreateConversationBody,
        conversations::MessageBody,
        conversations::ConversationView,
        conversations::MessageView,
        conversations::ToolCallView,
        conversations::LinkedProposalView,
        conversations::EvidenceItemView,
        conversations::TurnView,
        conversations::StopView,
        conversations::ConversationEventView,
    )),
    modifiers(&Security),
    security(("bearer" = []), ("session" = [])),
    tags(
        (name = "proposals", description = "Refund proposals and decisions"),
        (name = "orders", description = "The order source: shops feed orders and record refunds made elsewhere"),
        (name = "operations", description = "Ledger and audit checks"),
        (name = "identity", description = "Who is calling"),
        (name = "chat", description = "Conversations with the coordinator and the refund specialist"),
    )
)]
pub struct ApiDoc;

pub async fn document() -> axum::Json<utoipa::openapi::OpenApi> {
    axum::Json(ApiDoc::openapi())
}
