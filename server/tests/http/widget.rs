//! The embeddable widget over HTTP: the loader, the frame and its
//! `frame-ancestors`, exchanging a host token for a widget session, and what
//! that session may reach.

use crate::support::{TestApp, json};
use chrono::Duration;
use engine::widget::{HostTokenClaims, NewSigningKey, TOKEN_AUDIENCE, sign_host_token};
use reqwest::StatusCode;
use serde_json::{Value, json};

const HOST_ORIGIN: &str = "http://127.0.0.1:3299";

async fn user_id(app: &TestApp, name: &str) -> String {
    storage::users::find_by_name(app.db().conn(), name)
        .await
        .unwrap()
        .unwrap()
        .id
}

async fn register(app: &TestApp) -> NewSigningKey {
    let admin = storage::users::find_by_name(app.db().conn(), "admin")
        .await
        .unwrap()
        .unwrap();
    let actor = engine::Actor {
        user_id: admin.id,
        name: admin.name,
        roles: admin.roles,
    };
    engine::widget::register_site(app.db(), &actor, "Demo shop", HOST_ORIGIN, engine::now())
        .await
        .unwrap()
}

fn host_token(
    key: &NewSigningKey,
    customer_id: &str,
    issued: chrono::DateTime<chrono::Utc>,
) -> String {
    let claims = HostTokenClaims {
        iss: key.site_id.clone(),
        sub: customer_id.to_owned(),
        aud: TOKEN_AUDIENCE.to_owned(),
        iat: issued.timestamp(),
        exp: (issued + Duration::minutes(5)).timestamp(),
        jti: storage::ids::new_id("jti"),
    };
    sign_host_token(&key.private_key_pem, &key.key_id, &claims).unwrap()
}

async fn exchange(app: &TestApp, site_id: &str, token: &str) -> (StatusCode, Value) {
    let response = app
        .bare_client()
        .post(app.url("/widget/sessions"))
        .json(&json!({ "site_id": site_id, "token": token }))
        .send()
        .await
        .unwrap();
    (response.status(), json(response).await)
}

async fn with_widget(
    app: &TestApp,
    secret: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = app
        .bare_client()
        .request(method, app.url(path))
        .bearer_auth(secret);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    (response.status(), json(response).await)
}

#[tokio::test]
async fn the_loader_is_served_as_javascript_that_hands_the_token_over_by_message() {
    let app = TestApp::spawn().await;
    let response = app.get("/widget.js").await;
    assert_eq!(response.status(), StatusCode::OK);
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(kind.starts_with("text/javascript"), "{kind}");
    let body = response.text().await.unwrap();
    assert!(body.contains("countersign:token"));
    assert!(body.contains("/widget/frame?site="));
}

#[tokio::test]
async fn only_the_registered_origin_may_frame_the_chat_and_no_cookie_is_set() {
    let app = TestApp::spawn().await;
    let key = register(&app).await;
    let response = app
        .bare_client()
        .get(app.url(&format!("/widget/frame?site={}", key.site_id)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let csp = response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains(&format!("frame-ancestors {HOST_ORIGIN}")),
        "{csp}"
    );
    assert!(response.headers().get("set-cookie").is_none());
    let html = response.text().await.unwrap();
    assert!(html.contains(&format!("data-host-origin=\"{HOST_ORIGIN}\"")));

    for (path, status) in [
        ("/widget/frame?site=wst_unknown", StatusCode::NOT_FOUND),
        ("/widget/frame", StatusCode::BAD_REQUEST),
        ("/widget/frame?site=%3Cscript%3E", StatusCode::BAD_REQUEST),
    ] {
        let response = app.bare_client().get(app.url(path)).send().await.unwrap();
        assert_eq!(response.status(), status, "{path}");
        let csp = response.headers()["content-security-policy"]
            .to_str()
            .unwrap();
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
    }
}

#[tokio::test]
async fn a_widget_session_chats_as_its_customer_and_reaches_nothing_else() {
    let app = TestApp::spawn().await;
    let key = register(&app).await;
    let customer = user_id(&app, "customer").await;
    let (status, opened) = exchange(
        &app,
        &key.site_id,
        &host_token(&key, &customer, engine::now()),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    assert_eq!(opened["customer"]["display_name"], "Cora Customer");
    let secret = opened["session_token"].as_str().unwrap().to_owned();

    let (status, me) = with_widget(&app, &secret, reqwest::Method::GET, "/api/v1/me", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(me["id"], customer.as_str());

    let (status, conversation) = with_widget(
        &app,
        &secret,
        reqwest::Method::POST,
        "/api/v1/conversations",
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{conversation}");
    assert_eq!(conversation["customer_id"], customer.as_str());
    let id = conversation["id"].as_str().unwrap();

    // Order 4822 belongs to customer2: this session cannot see it.
    let (status, turn) = with_widget(
        &app,
        &secret,
        reqwest::Method::POST,
        &format!("/api/v1/conversations/{id}/messages"),
        Some(json!({ "text": "please refund order 4822" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{turn}");
    assert!(turn["proposal_id"].is_null(), "{turn}");
    assert!(
        !turn["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["source"] == "order:4822"),
        "{turn}"
    );

    // Nor another customer's conversation opened elsewhere.
    let other = user_id(&app, "customer2").await;
    let (_, other_opened) =
        exchange(&app, &key.site_id, &host_token(&key, &other, engine::now())).await;
    let other_secret = other_opened["session_token"].as_str().unwrap();
    let (status, _) = with_widget(
        &app,
        other_secret,
        reqwest::Method::GET,
        &format!("/api/v1/conversations/{id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    for (method, path) in [
        (reqwest::Method::GET, "/api/v1/proposals"),
        (reqwest::Method::POST, "/api/v1/proposals"),
        (reqwest::Method::GET, "/api/v1/audit/verify"),
        (reqwest::Method::GET, "/api/v1/sandbox/ledger"),
    ] {
        let (status, body) = with_widget(&app, &secret, method, path, Some(json!({}))).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
        assert_eq!(body["error"]["code"], "widget_scope");
    }
}

#[tokio::test]
async fn refused_tokens_get_precise_errors_and_open_nothing() {
    let app = TestApp::spawn().await;
    let key = register(&app).await;
    let customer = user_id(&app, "customer").await;

    let stale = host_token(&key, &customer, engine::now() - Duration::minutes(30));
    let (status, body) = exchange(&app, &key.site_id, &stale).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "token_expired");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired")
    );

    let fresh = host_token(&key, &customer, engine::now());
    assert_eq!(
        exchange(&app, &key.site_id, &fresh).await.0,
        StatusCode::CREATED
    );
    let (status, body) = exchange(&app, &key.site_id, &fresh).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "token_used");

    let (status, body) = exchange(
        &app,
        "wst_nope",
        &host_token(&key, &customer, engine::now()),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "unknown_site");

    let (status, body) = exchange(&app, &key.site_id, "garbage").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "invalid_token");

    let response = app
        .bare_client()
        .post(app.url("/widget/sessions"))
        .header("content-type", "application/json")
        .body(r#"{"site":"x"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(json(response).await["error"]["code"], "invalid");

    let (status, body) = with_widget(
        &app,
        &format!("cwt_{}", "0".repeat(64)),
        reqwest::Method::GET,
        "/api/v1/me",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
}

#[tokio::test]
async fn only_admins_register_widget_sites_through_the_server_functions() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;
    let token = app.csrf_token().await;
    let refused = app
        .post_form(
            "/fn/admin_register_widget_site",
            &[
                ("csrf_token", &token),
                ("name", "Mine"),
                ("origin", "https://mine.example"),
            ],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(
        engine::widget::list_sites(app.db())
            .await
            .unwrap()
            .is_empty()
    );

    app.logout().await;
    app.login_ok("admin").await;
    let token = app.csrf_token().await;
    let bad = app
        .post_form(
            "/fn/admin_register_widget_site",
            &[
                ("csrf_token", &token),
                ("name", "Shop"),
                ("origin", "https://shop.example/help"),
            ],
        )
        .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad.text()
            .await
            .unwrap()
            .contains("give only scheme, host and port")
    );

    let created = app
        .post_form(
            "/fn/admin_register_widget_site",
            &[
                ("csrf_token", &token),
                ("name", "Shop"),
                ("origin", "https://shop.example"),
            ],
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let key: Value = json(created).await;
    assert!(
        key["private_key_pem"]
            .as_str()
            .unwrap()
            .contains("BEGIN PRIVATE KEY")
    );
    let sites = engine::widget::list_sites(app.db()).await.unwrap();
    assert_eq!(sites.len(), 1);
    assert_eq!(sites[0].origin, "https://shop.example");
    // Only the public half is kept.
    assert_eq!(sites[0].keys[0].id, key["key_id"].as_str().unwrap());
}
