//! The money edge through the real server: the mounted sandbox provider
//! asked over HTTP before a send, its key, approvals that do not execute,
//! and a person resolving what only a person can.

use crate::support::{TestApp, json};
use engine::live::LiveEvent;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

const SANDBOX_KEY: &str = "sk_sbx_server_tests";

async fn app() -> TestApp {
    TestApp::spawn_with(|settings| {
        settings.sandbox_secret_key = Some(SANDBOX_KEY.into());
    })
    .await
}

async fn token(app: &TestApp, user: &str) -> String {
    app.engine
        .accounts
        .create_token(user, "tests")
        .await
        .unwrap()
        .secret
}

async fn post(app: &TestApp, bearer: &str, path: &str, body: Value) -> reqwest::Response {
    app.bare_client()
        .post(app.url(path))
        .bearer_auth(bearer)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn sandbox(app: &TestApp, path: &str, key: Option<&str>, body: Value) -> reqwest::Response {
    let mut request = app
        .bare_client()
        .post(app.url(&format!("/sandbox/payments{path}")))
        .bearer_auth(SANDBOX_KEY)
        .json(&body);
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request.send().await.unwrap()
}

/// The agent proposes a full refund of `order`; returns the proposal JSON.
async fn propose(app: &TestApp, order: &str) -> Value {
    let agent = token(app, "agent").await;
    let response = post(
        app,
        &agent,
        "/api/v1/proposals",
        json!({
            "order_id": order,
            "evidence": [{"reference": format!("order:{order}")}, {"reference": "returns-policy:section-3"}],
            "recommendation": "Refund under section 3.",
        }),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    json(response).await
}

#[tokio::test]
async fn an_approval_stopped_by_a_refund_made_at_the_provider_answers_409_with_the_reason() {
    let app = app().await;
    let proposal = propose(&app, "4821").await;
    let refund = sandbox(
        &app,
        "/v1/refunds",
        Some("support-desk-7"),
        json!({"payment_reference": proposal["payment_reference"], "amount_minor": 7900, "currency": "EUR", "metadata": {"proposal_id": "desk"}}),
    )
    .await;
    assert_eq!(refund.status(), StatusCode::OK);

    let approver = token(&app, "approver").await;
    let id = proposal["id"].as_str().unwrap();
    let response = post(
        &app,
        &approver,
        &format!("/api/v1/proposals/{id}/approve"),
        json!({"action_digest": proposal["action_digest"]}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let body = json(response).await;
    assert_eq!(body["error"]["code"], "invalidated");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("fully refunded"), "{message}");

    let ledger = app
        .bare_client()
        .get(app.url("/sandbox/payments/v1/ledger"))
        .bearer_auth(SANDBOX_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(
        json(ledger).await["total_refunds"],
        1,
        "one refund, not two"
    );
}

#[tokio::test]
async fn an_empty_action_digest_is_a_422_that_names_the_field() {
    let app = app().await;
    let proposal = propose(&app, "4821").await;
    let approver = token(&app, "approver").await;
    let id = proposal["id"].as_str().unwrap();
    let response = post(
        &app,
        &approver,
        &format!("/api/v1/proposals/{id}/approve"),
        json!({"action_digest": ""}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        json(response).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("action_digest is required")
    );
}

#[tokio::test]
async fn anonymous_or_wrongly_keyed_requests_to_the_mounted_sandbox_are_refused() {
    let app = app().await;
    for key in [None, Some("sk_sbx_wrong")] {
        for (method, path) in [
            (reqwest::Method::GET, "/sandbox/payments/v1/ledger"),
            (reqwest::Method::GET, "/sandbox/payments/v1/faults"),
            (reqwest::Method::PUT, "/sandbox/payments/v1/faults"),
            (reqwest::Method::POST, "/sandbox/payments/v1/refunds"),
            (
                reqwest::Method::GET,
                "/sandbox/payments/v1/charges/pay_4821",
            ),
        ] {
            let mut request = app
                .bare_client()
                .request(method.clone(), app.url(path))
                .json(&json!({}));
            if let Some(key) = key {
                request = request.bearer_auth(key);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                response.status(),
                StatusCode::UNAUTHORIZED,
                "{method} {path} with {key:?}"
            );
        }
    }
}

/// A proposal whose send the provider refuses because another payment used
/// its idempotency key: it needs a person.
async fn needing_attention(app: &TestApp) -> Value {
    let proposal = propose(app, "4821").await;
    let id = proposal["id"].as_str().unwrap();
    let stray = format!("pay_stray_{id}");
    let charge = sandbox(
        app,
        "/v1/charges",
        None,
        json!({"id": stray, "amount_minor": 100, "currency": "EUR"}),
    )
    .await;
    assert_eq!(charge.status(), StatusCode::OK);
    let reused = sandbox(
        app,
        "/v1/refunds",
        Some(id),
        json!({"payment_reference": stray, "amount_minor": 100, "currency": "EUR", "metadata": {"proposal_id": "stray"}}),
    )
    .await;
    assert_eq!(reused.status(), StatusCode::OK);
    let mut changes = app.engine.live.subscribe();
    let approver = token(app, "approver").await;
    let approved = post(
        app,
        &approver,
        &format!("/api/v1/proposals/{id}/approve"),
        json!({"action_digest": proposal["action_digest"]}),
    )
    .await;
    assert_eq!(approved.status(), StatusCode::OK);
    // The send's answer is recorded in the background: wait for the change
    // to be announced, as the pages do.
    let needs_attention = async {
        loop {
            match changes.recv().await {
                Ok(LiveEvent::Changed(change))
                    if change.proposal_id == id && change.status == "needs_attention" =>
                {
                    return;
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(closed) => panic!("the live channel closed: {closed}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(15), needs_attention)
        .await
        .unwrap_or_else(|_| panic!("proposal {id} never needed attention"));
    proposal
}

#[tokio::test]
async fn a_person_resolves_needs_attention_through_the_api_and_only_approvers_or_managers_may() {
    let app = app().await;
    let proposal = needing_attention(&app).await;
    let id = proposal["id"].as_str().unwrap();
    let path = format!("/api/v1/proposals/{id}/resolve");

    let agent = token(&app, "agent").await;
    let refused = post(
        &app,
        &agent,
        &path,
        json!({"resolution": "closed", "note": "x"}),
    )
    .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);

    let manager = token(&app, "manager").await;
    let missing = post(
        &app,
        &manager,
        &path,
        json!({"resolution": "refund_confirmed", "note": "x"}),
    )
    .await;
    assert_eq!(missing.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let unknown = post(
        &app,
        &manager,
        &path,
        json!({"resolution": "refund_confirmed", "provider_refund_id": "re_nope", "note": "x"}),
    )
    .await;
    assert_eq!(unknown.status(), StatusCode::CONFLICT);
    let bad_kind = post(
        &app,
        &manager,
        &path,
        json!({"resolution": "paid_twice", "note": "x"}),
    )
    .await;
    assert!(bad_kind.status().is_client_error(), "{}", bad_kind.status());

    let resolved = post(&app, &manager, &path, json!({"resolution": "no_refund", "retry": true, "note": "no refund on pay_4821 at the provider"})).await;
    assert_eq!(resolved.status(), StatusCode::OK);
    let body = json(resolved).await;
    assert_eq!(body["proposal"]["status"], "failed");
    assert_eq!(body["retry"]["status"], "awaiting_approval");
    assert_ne!(body["retry"]["id"], proposal["id"]);

    let again = post(
        &app,
        &manager,
        &path,
        json!({"resolution": "closed", "note": "twice"}),
    )
    .await;
    assert_eq!(
        again.status(),
        StatusCode::CONFLICT,
        "a resolved proposal is not resolved again"
    );
}

#[tokio::test]
async fn an_admin_cannot_set_a_threshold_or_limit_in_a_code_that_is_not_money() {
    let app = TestApp::spawn().await;
    app.login_ok("admin").await;
    let csrf = app.csrf_token().await;
    let approver = storage::users::find_by_name(app.db().conn(), "approver")
        .await
        .unwrap()
        .unwrap();
    for code in ["XXX", "xts", "XAU", "XDR", "QQQ"] {
        let threshold = app
            .post_form(
                "/fn/admin_set_threshold",
                &[
                    ("csrf_token", &csrf),
                    ("currency", code),
                    ("amount", "100.00"),
                ],
            )
            .await;
        assert_eq!(
            threshold.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{code}"
        );
        let body = threshold.text().await.unwrap();
        assert!(body.contains(&code.to_ascii_uppercase()), "{code}: {body}");
        let limit = app
            .post_form(
                "/fn/admin_set_limit",
                &[
                    ("csrf_token", &csrf),
                    ("user_id", &approver.id),
                    ("currency", code),
                    ("amount", "100.00"),
                ],
            )
            .await;
        assert_eq!(limit.status(), StatusCode::UNPROCESSABLE_ENTITY, "{code}");
    }
    let conn = app.db().conn();
    assert!(
        storage::limits::four_eyes_thresholds(conn)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        storage::limits::approval_limits(conn, &approver.id)
            .await
            .unwrap()
            .is_empty()
    );
    let real = app
        .post_form(
            "/fn/admin_set_threshold",
            &[
                ("csrf_token", &csrf),
                ("currency", "chf"),
                ("amount", "100.00"),
            ],
        )
        .await;
    assert_eq!(real.status(), StatusCode::OK);
    assert_eq!(
        storage::limits::four_eyes_thresholds(conn).await.unwrap(),
        vec![("CHF".to_owned(), 10000)]
    );
}
