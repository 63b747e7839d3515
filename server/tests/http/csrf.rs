//! Cross-site request forgery: provenance headers and the per-session token.

use crate::support::{PASSWORD, TestApp, header, json};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

async fn assert_refused(response: reqwest::Response, code: &str) {
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(json(response).await["error"]["code"], code);
}

#[tokio::test]
async fn a_cross_origin_sign_out_is_refused_even_with_a_valid_token() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let token = app.csrf_token().await;

    for headers in [
        header("origin", "https://evil.example"),
        header("sec-fetch-site", "cross-site"),
        header("sec-fetch-site", "same-site"),
        header("origin", "null"),
    ] {
        let response = app
            .post_form_with("/fn/logout", &[("csrf_token", &token)], headers)
            .await;
        assert_refused(response, "cross_site_refused").await;
    }

    assert_eq!(app.whoami().await.unwrap()["name"], "approver");
}

#[tokio::test]
async fn a_cross_origin_sign_in_is_refused_even_with_a_valid_token() {
    let app = TestApp::spawn().await;
    let token = app.csrf_token().await;
    let fields = [
        ("csrf_token", token.as_str()),
        ("username", "approver"),
        ("password", PASSWORD),
    ];

    for headers in [
        header("origin", "https://evil.example"),
        header("sec-fetch-site", "cross-site"),
    ] {
        let response = app.post_form_with("/fn/login", &fields, headers).await;
        assert_refused(response, "cross_site_refused").await;
    }
    assert_eq!(app.whoami().await, None);
}

#[tokio::test]
async fn a_same_origin_browser_request_with_the_token_is_accepted() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let token = app.csrf_token().await;
    let mut headers = header("origin", &app.address);
    headers.extend(header("sec-fetch-site", "same-origin"));

    let response = app
        .post_form_with("/fn/logout", &[("csrf_token", &token)], headers)
        .await;

    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(app.whoami().await, None);
}

#[tokio::test]
async fn a_post_without_the_token_or_with_a_wrong_one_is_refused() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;

    let missing = app.post_form("/fn/logout", &[]).await;
    assert_refused(missing, "csrf_failed").await;
    let wrong = app
        .post_form("/fn/logout", &[("csrf_token", "0123456789abcdef")])
        .await;
    assert_refused(wrong, "csrf_failed").await;
    let empty = app.post_form("/fn/logout", &[("csrf_token", "")]).await;
    assert_refused(empty, "csrf_failed").await;

    assert_eq!(app.whoami().await.unwrap()["name"], "approver");
}

#[tokio::test]
async fn a_sign_in_without_a_token_is_refused() {
    let app = TestApp::spawn().await;
    // A visitor who never loaded a page has no token at all.
    let response = app
        .post_form(
            "/fn/login",
            &[("username", "approver"), ("password", PASSWORD)],
        )
        .await;
    assert_refused(response, "csrf_failed").await;
    assert_eq!(app.whoami().await, None);
}

#[tokio::test]
async fn the_token_of_another_session_is_refused() {
    let app = TestApp::spawn().await;
    let other = TestApp::spawn().await;
    let foreign = other.csrf_token().await;
    app.login_ok("approver").await;

    let response = app
        .post_form("/fn/logout", &[("csrf_token", &foreign)])
        .await;

    assert_refused(response, "csrf_failed").await;
}

#[tokio::test]
async fn the_token_changes_at_sign_in() {
    let app = TestApp::spawn().await;
    let anonymous = app.csrf_token().await;
    app.login_ok("approver").await;
    let signed_in = app.csrf_token().await;
    assert_ne!(anonymous, signed_in);

    let stale = app
        .post_form("/fn/logout", &[("csrf_token", &anonymous)])
        .await;
    assert_refused(stale, "csrf_failed").await;
}

#[tokio::test]
async fn json_clients_may_send_the_token_in_a_header() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let token = app.csrf_token().await;

    // /api/v1/me has no POST: getting 405 means the CSRF check let it through.
    let with_header = app
        .client
        .post(app.url("/api/v1/me"))
        .header("x-csrf-token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(with_header.status(), StatusCode::METHOD_NOT_ALLOWED);

    let without = app
        .client
        .post(app.url("/api/v1/me"))
        .headers(HeaderMap::new())
        .send()
        .await
        .unwrap();
    assert_refused(without, "csrf_failed").await;
}
