//! The embeddable widget over HTTP: the loader, the frame and its
//! `frame-ancestors`, exchanging a host token for a widget session, and what
//! that session may reach.

use crate::support::{TestApp, json};
use chrono::Duration;
use engine::widget::{HostTokenClaims, NewSigningKey, TOKEN_AUDIENCE, sign_host_token};
use reqwest::StatusCode;
use serde_json::{Value, json};

const HOST_ORIGIN: &str = "http://127.0.0.1:3299";

pub(crate) async fn user_id(app: &TestApp, name: &str) -> String {
    storage::users::find_by_name(app.db().conn(), name)
        .await
        .unwrap()
        .unwrap()
        .id
}

async fn admin(app: &TestApp) -> engine::Actor {
    let admin = storage::users::find_by_name(app.db().conn(), "admin")
        .await
        .unwrap()
        .unwrap();
    engine::Actor {
        user_id: admin.id,
        name: admin.name,
        roles: admin.roles,
        widget_session: None,
    }
}

/// Registers the demo shop, allowed to sign in the three demo customers.
pub(crate) async fn register(app: &TestApp) -> NewSigningKey {
    let key = register_unbound(app, "Demo shop", HOST_ORIGIN).await;
    for customer in ["customer", "customer2", "customer3"] {
        app.engine
            .widget
            .bind_customer(&admin(app).await, &key.site_id, customer)
            .await
            .unwrap();
    }
    key
}

/// Registers a site that may sign in nobody yet.
async fn register_unbound(app: &TestApp, name: &str, origin: &str) -> NewSigningKey {
    app.engine
        .widget
        .register_site(&admin(app).await, name, origin)
        .await
        .unwrap()
}

/// A widget session for the named customer at `key`'s site.
pub(crate) async fn widget_session(app: &TestApp, key: &NewSigningKey, customer: &str) -> String {
    let id = user_id(app, customer).await;
    let (status, opened) = exchange(app, &key.site_id, &host_token(key, &id, engine::now())).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    opened["session_token"].as_str().unwrap().to_owned()
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

pub(crate) async fn with_widget(
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
    assert!(app.engine.widget.list_sites().await.unwrap().is_empty());

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
    let sites = app.engine.widget.list_sites().await.unwrap();
    assert_eq!(sites.len(), 1);
    assert_eq!(sites[0].origin, "https://shop.example");
    // Only the public half is kept.
    assert_eq!(sites[0].keys[0].id, key["key_id"].as_str().unwrap());
}

/// Opens a conversation in the widget and talks `order` into a proposal;
/// returns the conversation's and the proposal's ids.
async fn widget_proposal(app: &TestApp, secret: &str, order: &str) -> (String, String) {
    let (status, conversation) = with_widget(
        app,
        secret,
        reqwest::Method::POST,
        "/api/v1/conversations",
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{conversation}");
    let id = conversation["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/conversations/{id}/messages");
    for text in [
        format!("check order {order} and refund it if it qualifies"),
        "no, still sealed".to_owned(),
    ] {
        let (status, turn) = with_widget(
            app,
            secret,
            reqwest::Method::POST,
            &path,
            Some(json!({ "text": text })),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{turn}");
        if let Some(proposal) = turn["proposal_id"].as_str() {
            return (id, proposal.to_owned());
        }
    }
    panic!("the widget chat prepared no proposal for order {order}");
}

/// The customer, in the web app, talks order 4821 into a proposal.
async fn web_app_proposal(app: &TestApp, customer: &engine::Actor) -> (String, String) {
    use engine::assistant::TurnControl;
    let opened = app
        .engine
        .chat
        .create_conversation(customer, None)
        .await
        .unwrap();
    let mut proposal = None;
    for text in [
        "check order 4821 and refund it if it qualifies",
        "no, still sealed",
    ] {
        let turn = app
            .engine
            .chat
            .chat_turn(
                customer,
                &opened.id,
                text,
                engine::assistant::Priority::Later,
                TurnControl::new(),
            )
            .await
            .unwrap()
            .answered()
            .expect("no turn was running");
        proposal = proposal.or(turn.proposal_id);
    }
    (opened.id, proposal.expect("a proposal for order 4821"))
}

async fn actor(app: &TestApp, name: &str) -> engine::Actor {
    let user = storage::users::find_by_name(app.db().conn(), name)
        .await
        .unwrap()
        .unwrap();
    engine::Actor::from(user)
}

#[tokio::test]
async fn a_widget_session_cannot_read_or_post_into_the_customers_other_conversations_or_see_their_other_proposals()
 {
    let app = TestApp::spawn().await;
    let key = register(&app).await;
    let (web_conversation, web_proposal) =
        web_app_proposal(&app, &actor(&app, "customer").await).await;
    let secret = widget_session(&app, &key, "customer").await;
    let (own_conversation, own_proposal) = widget_proposal(&app, &secret, "4823").await;
    let call = |method: reqwest::Method, path: String, body: Option<Value>| {
        let (app, secret) = (&app, secret.clone());
        async move { with_widget(app, &secret, method, &path, body).await }
    };

    // What it opened, it reaches.
    let (status, mine) = call(
        reqwest::Method::GET,
        format!("/api/v1/conversations/{own_conversation}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    assert_eq!(mine["proposals"][0]["proposal_id"], own_proposal.as_str());
    let (status, proposal) = call(
        reqwest::Method::GET,
        format!("/api/v1/proposals/{own_proposal}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{proposal}");

    // The same customer's web-app conversation and its proposal do not
    // exist for this session: reading, writing, stopping, events.
    for (method, path, body) in [
        (
            reqwest::Method::GET,
            format!("/api/v1/conversations/{web_conversation}"),
            None,
        ),
        (
            reqwest::Method::POST,
            format!("/api/v1/conversations/{web_conversation}/messages"),
            Some(json!({ "text": "refund everything" })),
        ),
        (
            reqwest::Method::POST,
            format!("/api/v1/conversations/{web_conversation}/stop"),
            None,
        ),
        (
            reqwest::Method::GET,
            format!("/api/v1/conversations/{web_conversation}/events"),
            None,
        ),
        (
            reqwest::Method::GET,
            format!("/api/v1/proposals/{web_proposal}"),
            None,
        ),
    ] {
        let (status, body) = call(method, path.clone(), body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_eq!(body["error"]["code"], "not_found", "{path}");
    }
    let transcript = app
        .engine
        .chat
        .conversation(&actor(&app, "customer").await, &web_conversation)
        .await
        .unwrap();
    assert_eq!(transcript.turns, 2, "nothing was posted into it");

    // Another widget session of the same customer does not reach this one's.
    let other = widget_session(&app, &key, "customer").await;
    for path in [
        format!("/api/v1/conversations/{own_conversation}"),
        format!("/api/v1/proposals/{own_proposal}"),
    ] {
        let (status, body) = with_widget(&app, &other, reqwest::Method::GET, &path, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    }
}

#[tokio::test]
async fn a_widget_session_hears_live_changes_only_of_the_proposals_it_prepared() {
    let app = TestApp::spawn().await;
    let key = register(&app).await;
    let customer = actor(&app, "customer").await;
    let (_, web_proposal) = web_app_proposal(&app, &customer).await;
    let secret = widget_session(&app, &key, "customer").await;
    let (_, own_proposal) = widget_proposal(&app, &secret, "4823").await;
    let mut stream = app
        .bare_client()
        .get(app.url("/api/live/proposals"))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    // On PostgreSQL changes travel by NOTIFY: wait until its LISTEN is in place.
    app.engine.live.listening().await;

    let change = |proposal_id: &str| engine::live::ProposalChanged {
        proposal_id: proposal_id.to_owned(),
        order_id: "4821".to_owned(),
        status: "executing".to_owned(),
        customer_id: Some(customer.user_id.clone()),
        state: None,
        state_version: 0,
    };
    app.engine
        .live
        .publish_all(vec![change(&web_proposal), change(&own_proposal)]);
    app.engine.live.resync();

    let mut heard = crate::live::events(&mut stream, 2).await;
    heard.sort();
    assert_eq!(heard[0].0, "proposal");
    assert!(heard[0].1.contains(&own_proposal), "{heard:?}");
    assert_eq!(heard[1].0, "resync", "{heard:?}");
}

#[tokio::test]
async fn a_site_signs_in_only_the_customers_an_admin_allowed_it() {
    let app = TestApp::spawn().await;
    let key = register_unbound(&app, "Someone's shop", "https://someones-shop.example").await;
    let customer = user_id(&app, "customer").await;

    let (status, body) = exchange(
        &app,
        &key.site_id,
        &host_token(&key, &customer, engine::now()),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], "invalid_token");
    assert_eq!(
        body["error"]["message"],
        "the sign-in token names no customer this site may sign in"
    );

    // An admin allows the customer on the admin page; a customer may not.
    app.login_ok("customer").await;
    let token = app.csrf_token().await;
    let fields = [
        ("csrf_token", token.as_str()),
        ("site_id", key.site_id.as_str()),
        ("customer", "customer"),
    ];
    let refused = app
        .post_form("/fn/admin_allow_widget_customer", &fields)
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    app.logout().await;
    app.login_ok("admin").await;
    let token = app.csrf_token().await;
    let fields = [
        ("csrf_token", token.as_str()),
        ("site_id", key.site_id.as_str()),
        ("customer", "customer"),
    ];
    let allowed = app
        .post_form("/fn/admin_allow_widget_customer", &fields)
        .await;
    assert_eq!(allowed.status(), StatusCode::OK);
    let sites = app.get("/fn/admin_widget_sites").await;
    assert_eq!(json(sites).await[0]["customers"], json!(["customer"]));

    let secret = widget_session(&app, &key, "customer").await;
    let other = user_id(&app, "customer2").await;
    let (status, _) = exchange(&app, &key.site_id, &host_token(&key, &other, engine::now())).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "customer2 was not allowed"
    );

    // Disallowing ends the session it opened, at once.
    let disallowed = app
        .post_form("/fn/admin_disallow_widget_customer", &fields)
        .await;
    assert_eq!(disallowed.status(), StatusCode::OK);
    let (status, _) = with_widget(&app, &secret, reqwest::Method::GET, "/api/v1/me", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}
