//! The JSON API and the probes; bearer tokens for machines.

use crate::support::{SESSION_COOKIE, TestApp, json};
use reqwest::StatusCode;

#[tokio::test]
async fn the_probes_answer_when_the_database_does() {
    let app = TestApp::spawn().await;
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status(), StatusCode::OK);
    assert_eq!(json(ready).await["status"], "ready");
    let live = app.get("/healthz").await;
    assert_eq!(live.status(), StatusCode::OK);
    assert_eq!(json(live).await["status"], "ok");
}

#[tokio::test]
async fn a_bearer_token_identifies_its_user() {
    let app = TestApp::spawn().await;
    let token = app
        .engine
        .accounts
        .create_token("agent", "ci")
        .await
        .unwrap();

    let response = app.me_with_bearer(&token.secret).await;

    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("set-cookie").is_none());
    let me = json(response).await;
    assert_eq!(me["name"], "agent");
    assert_eq!(me["roles"], serde_json::json!(["agent"]));
}

#[tokio::test]
async fn a_revoked_or_malformed_bearer_token_is_401_json() {
    let app = TestApp::spawn().await;
    let token = app
        .engine
        .accounts
        .create_token("agent", "ci")
        .await
        .unwrap();
    app.engine.accounts.revoke_token(&token.id).await.unwrap();

    for secret in [
        token.secret.as_str(),
        "cst_not-a-token",
        "",
        &format!("cst_{}", "0".repeat(64)),
    ] {
        let response = app.me_with_bearer(secret).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{secret:?}");
        let body = json(response).await;
        assert_eq!(body["error"]["code"], "unauthenticated", "{secret:?}");
    }
}

#[tokio::test]
async fn without_credentials_the_api_answers_401_json() {
    let app = TestApp::spawn().await;
    let response = app.me().await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(json(response).await["error"]["code"], "unauthenticated");
    let unknown = app.get("/api/v1/nothing-here").await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert_eq!(json(unknown).await["error"]["code"], "not_found");
}

#[tokio::test]
async fn a_mistyped_path_under_api_is_a_json_404_not_the_pages_html() {
    let app = TestApp::spawn().await;
    for path in ["/api/nothing", "/api/v2/proposals", "/api/live/nothing"] {
        let response = app.get(path).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert_eq!(json(response).await["error"]["code"], "not_found", "{path}");
    }
}

#[tokio::test]
async fn bearer_requests_without_cookies_skip_the_csrf_token_but_are_authenticated() {
    let app = TestApp::spawn().await;
    let token = app
        .engine
        .accounts
        .create_token("agent", "ci")
        .await
        .unwrap();
    let client = app.bare_client();

    // No token, no cookie: past the CSRF check to the router (no POST on /me).
    let bearer_only = client
        .post(app.url("/api/v1/me"))
        .bearer_auth(&token.secret)
        .send()
        .await
        .unwrap();
    assert_eq!(bearer_only.status(), StatusCode::METHOD_NOT_ALLOWED);

    // ... but only with a valid token.
    let bad_bearer = client
        .post(app.url("/api/v1/me"))
        .bearer_auth("cst_forged")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_bearer.status(), StatusCode::UNAUTHORIZED);

    // A cookie makes it a browser request again, which needs the CSRF token.
    app.login_ok("approver").await;
    let cookie = app.session_cookie().unwrap();
    let with_cookie = client
        .post(app.url("/api/v1/me"))
        .bearer_auth(&token.secret)
        .header("cookie", format!("{SESSION_COOKIE}={cookie}"))
        .send()
        .await
        .unwrap();
    assert_eq!(with_cookie.status(), StatusCode::FORBIDDEN);
    assert_eq!(json(with_cookie).await["error"]["code"], "csrf_failed");
}

#[tokio::test]
async fn an_unknown_server_function_gets_a_json_404_and_the_wrong_method_a_405() {
    let app = TestApp::spawn().await;
    let missing = app.get("/fn/no_such_function").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let body = json(missing).await;
    assert_eq!(body["error"]["code"], "not_found");
    assert_eq!(
        body["error"]["message"],
        "no server function at /fn/no_such_function"
    );

    let wrong = app.get("/fn/login").await;
    assert_eq!(wrong.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(wrong.headers()["allow"], "POST");
}
