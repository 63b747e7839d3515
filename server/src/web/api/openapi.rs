//! The OpenAPI document, generated from the handlers, at `/api/openapi.json`.
//!
//! Each handler documents what it answers itself; [`Refusals`] adds the
//! refusals every operation of a kind can meet on its way to the handler
//! (no credentials, a CSRF or widget-scope refusal, a body that does not
//! parse, a database that is briefly unavailable), so that a client — or a
//! fuzzer — finds every status the server can send in the document.

use super::{
    browser_checks, conversations, handover, operations, ops, orders, proposals, shipments, views,
};
use crate::web::{audit_csv, health, live, widget};
use serde::Serialize;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder, Type};
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
            "metrics_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("The scrape token, `COUNTERSIGN_METRICS_TOKEN`"))
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

/// The refusals an operation can meet before or around its handler, added
/// to every operation they apply to (a handler's own description of the
/// same status is kept).
struct Refusals;

impl Modify for Refusals {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, item) in &mut openapi.paths.paths {
            let public = PUBLIC_PATHS.contains(&path.as_str());
            let operations = [
                (false, item.get.as_mut()),
                (false, item.head.as_mut()),
                (true, item.post.as_mut()),
                (true, item.put.as_mut()),
                (true, item.patch.as_mut()),
                (true, item.delete.as_mut()),
            ];
            for (write, operation) in operations {
                if let Some(operation) = operation {
                    add_refusals(operation, public, write);
                }
            }
        }
    }
}

/// Paths that need no credentials (probes, the widget's token exchange,
/// this document) or credentials of their own (the scrape token of
/// `/metrics`, whose refusals its handler documents).
const PUBLIC_PATHS: &[&str] = &[
    "/healthz",
    "/readyz",
    "/metrics",
    "/api/openapi.json",
    "/widget/sessions",
];

fn add_refusals(operation: &mut Operation, public: bool, write: bool) {
    let parameters = operation.parameters.as_deref().unwrap_or_default();
    let in_path = parameters
        .iter()
        .any(|p| p.parameter_in == ParameterIn::Path);
    let in_query = parameters
        .iter()
        .any(|p| p.parameter_in == ParameterIn::Query);
    let has_body = operation.request_body.is_some();
    if !public {
        refusal(
            operation,
            "401",
            "No credentials, or a bearer token or widget session that is invalid, revoked or ended",
        );
        refusal(
            operation,
            "403",
            "Not allowed for this account; a browser write without a valid CSRF token; a widget session outside the chat",
        );
        refusal(
            operation,
            "503",
            "The database is briefly unavailable; nothing was changed. Send the same request again after `Retry-After` seconds",
        );
    }
    if in_query || in_path || has_body || write {
        refusal(
            operation,
            "400",
            "Malformed query or path parameters (an id that is not UTF-8 or not of the id's form), a body that is not JSON, or a path with empty, `.` or `..` segments",
        );
    }
    if in_path {
        refusal(
            operation,
            "404",
            "Nothing with this id that the caller may see",
        );
    }
    if in_path && !write {
        operation.responses.responses.entry("308".to_owned()).or_insert_with(|| {
            RefOr::T(
                ResponseBuilder::new()
                    .description("A path with empty or `.`/`..` segments is sent to its plain form (`Location`)")
                    .header(
                        "Location",
                        HeaderBuilder::new()
                            .schema(utoipa::openapi::schema::Object::with_type(Type::String))
                            .build(),
                    )
                    .build(),
            )
        });
    }
    if let Some(RefOr::T(unavailable)) = operation.responses.responses.get_mut("503") {
        // Every 503 is answered with it (see `ApiError`), whatever its cause.
        unavailable
            .headers
            .entry("Retry-After".to_owned())
            .or_insert_with(retry_after);
    }
    if has_body {
        refusal(
            operation,
            "413",
            "The body is larger than this operation accepts",
        );
        refusal(
            operation,
            "415",
            "The body is not sent as `application/json`",
        );
        refusal(
            operation,
            "422",
            "The body is JSON but not this operation's: a missing or unknown field, a wrong type, a value out of range",
        );
    }
}

fn refusal(operation: &mut Operation, status: &str, description: &str) {
    operation
        .responses
        .responses
        .entry(status.to_owned())
        .or_insert_with(|| {
            let mut response = ResponseBuilder::new().description(description).content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            );
            if status == "503" {
                response = response.header("Retry-After", retry_after());
            }
            RefOr::T(response.build())
        });
}

fn retry_after() -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .schema(utoipa::openapi::schema::Object::with_type(Type::Integer))
        .description(Some("Seconds to wait before sending the request again"))
        .build()
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Countersign API",
        description = "Agents propose; an authenticated person approves one specific proposal; Countersign executes it exactly once and verifies it. Money is integer minor units with an ISO currency; times are UTC. Every refusal is `{\"error\": {\"code\", \"message\"}}`; a 503 carries `Retry-After`.",
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
        shipments::record,
        shipments::get_one,
        operations::ledger,
        operations::verify_journal,
        ops::view,
        ops::retry,
        ops::resolve,
        ops::cancel,
        ops::acknowledge,
        audit_csv::export,
        browser_checks::screenshot,
        conversations::create,
        conversations::get_one,
        conversations::message,
        conversations::stop,
        conversations::events,
        handover::get_handover,
        handover::request,
        handover::take_over,
        handover::person_message,
        handover::hand_back,
        handover::inbox,
        live::proposal_events,
        live::ops_events,
        super::me,
        widget::sessions::open,
        health::healthz,
        health::readyz,
        crate::metrics::scrape::metrics,
        document,
    ),
    components(schemas(
        ErrorBody,
        ErrorDetail,
        views::ProposalView,
        views::ProposalDetailView,
        views::EvidenceView,
        views::QuestionView,
        views::AnsweredInView,
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
        shipments::ShipmentView,
        shipments::ShipmentSchema,
        conversations::CreateConversationBody,
        conversations::MessageBody,
        conversations::ConversationView,
        conversations::MessageView,
        conversations::ToolCallView,
        conversations::LinkedProposalView,
        conversations::EvidenceItemView,
        conversations::TurnView,
        conversations::StopView,
        conversations::QueuedView,
        conversations::QueueEntryView,
        conversations::ConversationEventView,
        handover::HandoverView,
        handover::PersonMessageBody,
        handover::InboxEntryView,
    )),
    modifiers(&Security, &Refusals),
    security(("bearer" = []), ("session" = [])),
    tags(
        (name = "proposals", description = "Refund proposals and decisions"),
        (name = "orders", description = "The order source: shops feed orders and record refunds made elsewhere and how orders went out"),
        (name = "operations", description = "Ledger and audit checks; background work (`/api/v1/ops`: 403 for other roles than manager and admin, 404 for an unknown id, 409 with the reason when the state does not allow the action)"),
        (name = "identity", description = "Who is calling"),
        (name = "chat", description = "Conversations with the coordinator and the refund specialist"),
        (name = "live", description = "Server-sent events"),
        (name = "widget", description = "The embeddable chat widget"),
        (name = "probes", description = "Liveness, readiness and metrics"),
    )
)]
pub struct ApiDoc;

/// This document.
#[utoipa::path(get, path = "/api/openapi.json", tag = "probes", security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object)))]
pub async fn document() -> axum::Json<utoipa::openapi::OpenApi> {
    axum::Json(ApiDoc::openapi())
}

#[cfg(test)]
mod tests {
    use super::ApiDoc;
    use std::collections::BTreeSet;
    use utoipa::OpenApi;
    use utoipa::openapi::path::{Operation, ParameterIn};

    /// Routes mounted but deliberately outside the JSON API: server
    /// functions (the pages' RPC) and the widget's HTML, script and style.
    const NOT_IN_THE_API: &[&str] = &[
        "/fn/{*name}",
        "/widget.js",
        "/widget/frame",
        "/widget/frame.js",
        "/widget/frame.css",
    ];

    /// `(METHOD, path)` for every `.route(…)` in a router's source, with
    /// `prefix` (where the router is nested) in front.
    fn routes_in(source: &str, prefix: &str) -> BTreeSet<(String, String)> {
        let mut routes = BTreeSet::new();
        for call in source.split(".route(").skip(1) {
            // The call's own text: up to its closing parenthesis.
            let mut depth = 1;
            let end = call
                .char_indices()
                .find_map(|(at, c)| {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    (depth == 0).then_some(at)
                })
                .expect("a .route( call is closed");
            let call = &call[..end];
            let path = call.split('"').nth(1).expect("a route's path literal");
            let path = format!("{prefix}{path}");
            if NOT_IN_THE_API.contains(&path.as_str()) {
                continue;
            }
            for method in ["get", "post", "put", "patch", "delete"] {
                let called = call.match_indices(&format!("{method}(")).any(|(at, _)| {
                    !call[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if called {
                    routes.insert((method.to_uppercase(), path.clone()));
                }
            }
        }
        routes
    }

    fn mounted() -> BTreeSet<(String, String)> {
        let mut all = routes_in(include_str!("mod.rs"), "/api/v1");
        all.extend(routes_in(include_str!("../../startup.rs"), ""));
        all.extend(routes_in(include_str!("../widget/mod.rs"), ""));
        all
    }

    fn documented() -> Vec<(String, String, Operation)> {
        let doc = ApiDoc::openapi();
        let mut all = Vec::new();
        for (path, item) in doc.paths.paths {
            for (method, operation) in [
                ("GET", item.get),
                ("POST", item.post),
                ("PUT", item.put),
                ("PATCH", item.patch),
                ("DELETE", item.delete),
            ] {
                if let Some(operation) = operation {
                    all.push((method.to_owned(), path.clone(), operation));
                }
            }
        }
        all
    }

    #[test]
    fn the_routes_the_server_mounts_are_the_operations_the_document_describes() {
        let mounted = mounted();
        assert!(
            mounted.contains(&("GET".to_owned(), "/api/v1/proposals/{id}".to_owned())),
            "the route table was read: {mounted:?}"
        );
        let documented: BTreeSet<(String, String)> = documented()
            .into_iter()
            .map(|(method, path, _)| (method, path))
            .collect();
        let undocumented: Vec<_> = mounted.difference(&documented).collect();
        let unmounted: Vec<_> = documented.difference(&mounted).collect();
        assert!(
            undocumented.is_empty(),
            "mounted but not documented: {undocumented:?}"
        );
        assert!(
            unmounted.is_empty(),
            "documented but not mounted: {unmounted:?}"
        );
    }

    #[test]
    fn every_path_parameter_is_declared_in_the_path_and_every_filter_in_the_query() {
        for (method, path, operation) in documented() {
            let in_path: BTreeSet<String> = path
                .split('/')
                .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
                .map(str::to_owned)
                .collect();
            let parameters = operation.parameters.unwrap_or_default();
            let declared: BTreeSet<String> = parameters
                .iter()
                .filter(|p| p.parameter_in == ParameterIn::Path)
                .map(|p| p.name.clone())
                .collect();
            assert_eq!(declared, in_path, "{method} {path}: path parameters");
        }
        let list = documented()
            .into_iter()
            .find(|(method, path, _)| method == "GET" && path == "/api/v1/proposals")
            .unwrap()
            .2;
        let query: BTreeSet<String> = list
            .parameters
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.parameter_in == ParameterIn::Query)
            .map(|p| p.name)
            .collect();
        assert_eq!(
            query,
            ["limit", "offset", "order_id", "status"]
                .map(str::to_owned)
                .into()
        );
    }

    #[test]
    fn every_refusal_is_documented_in_the_one_error_shape_and_a_503_with_retry_after() {
        for (method, path, operation) in documented() {
            let responses = &operation.responses.responses;
            for (status, response) in responses {
                let utoipa::openapi::RefOr::T(response) = response else {
                    continue;
                };
                if status.starts_with('4') || status.starts_with('5') {
                    let json = response.content.get("application/json");
                    let schema = json.and_then(|c| c.schema.as_ref());
                    assert!(
                        matches!(schema, Some(utoipa::openapi::RefOr::Ref(r)) if r.ref_location.ends_with("/ErrorBody")),
                        "{method} {path} {status}: not the error shape"
                    );
                }
            }
            // Only these two answer without the database.
            if !["/healthz", "/api/openapi.json"].contains(&path.as_str()) {
                let unavailable = responses.get("503").unwrap_or_else(|| {
                    panic!("{method} {path}: no 503 for a database that is unavailable")
                });
                let utoipa::openapi::RefOr::T(unavailable) = unavailable else {
                    panic!("{method} {path}: 503 by reference");
                };
                assert!(
                    unavailable.headers.contains_key("Retry-After"),
                    "{method} {path}: 503 without Retry-After"
                );
            }
        }
    }

    #[test]
    fn the_csv_export_and_the_live_stream_declare_their_content_types() {
        let content = |path: &str| {
            let (_, _, operation) = documented()
                .into_iter()
                .find(|(method, p, _)| method == "GET" && p == path)
                .unwrap_or_else(|| panic!("{path} is not documented"));
            let utoipa::openapi::RefOr::T(ok) = &operation.responses.responses["200"] else {
                panic!("{path}: 200 by reference");
            };
            ok.content.keys().cloned().collect::<Vec<_>>()
        };
        assert_eq!(content("/api/v1/audit/events.csv"), ["text/csv"]);
        assert_eq!(content("/api/live/proposals"), ["text/event-stream"]);
    }
}
