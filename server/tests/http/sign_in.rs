//! Signing in and out over HTTP.

use crate::support::{PASSWORD, TestApp, json};
use reqwest::StatusCode;

#[tokio::test]
async fn signing_in_issues_a_new_session_cookie_and_the_old_one_stays_anonymous() {
    let app = TestApp::spawn().await;
    app.csrf_token().await;
    let before = app
        .session_cookie()
        .expect("the login page starts a session");

    let response = app.login("customer", PASSWORD).await;

    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["location"], "/");
    assert!(
        response.headers().get("set-cookie").is_some(),
        "sign-in must set a cookie"
    );
    let after = app.session_cookie().unwrap();
    assert_ne!(before, after, "the session id must change at sign-in");
    let me = json(app.me().await).await;
    assert_eq!(me["name"], "customer");
    assert_eq!(me["roles"], serde_json::json!(["customer"]));

    // Session fixation: whoever knew the pre-login id gains nothing.
    let old = app.me_with_cookie(&before).await;
    assert_eq!(old.status(), StatusCode::UNAUTHORIZED);
    let new = app.me_with_cookie(&after).await;
    assert_eq!(new.status(), StatusCode::OK);
}

#[tokio::test]
async fn signing_out_ends_the_session_and_its_cookie_no_longer_authenticates() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let cookie = app.session_cookie().unwrap();

    let response = app.logout().await;

    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["location"], "/login");
    assert_eq!(app.whoami().await, None);
    assert_eq!(app.me().await.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        app.me_with_cookie(&cookie).await.status(),
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn a_wrong_password_is_422_invalid_and_signs_nobody_in() {
    let app = TestApp::spawn().await;

    let response = app.login("customer", "not the password").await;

    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body = json(response).await;
    assert_eq!(body["error"]["code"], "invalid");
    assert_eq!(body["error"]["message"], "wrong user name or password");
    assert_eq!(app.whoami().await, None);
    assert_eq!(app.me().await.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn an_unknown_user_gets_the_same_answer_as_a_wrong_password() {
    let app = TestApp::spawn().await;
    let response = app.login("nobody", PASSWORD).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body = json(response).await;
    assert_eq!(body["error"]["code"], "invalid");
    assert_eq!(body["error"]["message"], "wrong user name or password");
}

#[tokio::test]
async fn five_failures_lock_the_account_from_that_address_with_429_even_for_the_right_password() {
    let app = TestApp::spawn().await;
    for _ in 0..5 {
        let response = app.login("customer", "not the password").await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    }

    let response = app.login("customer", PASSWORD).await;

    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let body = json(response).await;
    assert_eq!(body["error"]["code"], "throttled");
    assert_eq!(
        body["error"]["message"],
        "too many failed sign-ins for this account from your network address; try again in 15 minute(s)"
    );
    assert_eq!(app.whoami().await, None);
    // Other accounts are not locked by it.
    app.login_ok("approver").await;
}

#[tokio::test]
async fn too_many_failures_from_one_address_lock_it_for_every_account() {
    let app = TestApp::spawn_with(|settings| settings.login_max_failures_per_address = 2).await;
    for user in ["customer", "approver"] {
        let response = app.login(user, "not the password").await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    }

    let response = app.login("manager", PASSWORD).await;

    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let body = json(response).await;
    assert_eq!(
        body["error"]["message"],
        "too many failed sign-ins from your network address; try again in 15 minute(s)"
    );
}

#[tokio::test]
async fn a_disabled_user_cannot_sign_in() {
    let app = TestApp::spawn().await;
    app.engine
        .accounts
        .disable_user(&engine::settings::ChangedBy::console(), "customer")
        .await
        .unwrap();
    let response = app.login("customer", PASSWORD).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(json(response).await["error"]["code"], "forbidden");
    assert_eq!(app.whoami().await, None);
}

#[tokio::test]
async fn sign_in_redirects_only_to_local_paths() {
    let app = TestApp::spawn().await;
    let token = app.csrf_token().await;
    let response = app
        .post_form(
            "/fn/login",
            &[
                ("csrf_token", &token),
                ("username", "approver"),
                ("password", PASSWORD),
                ("next", "//evil.example/steal"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["location"], "/");
}

#[tokio::test]
async fn sign_in_never_redirects_off_site_or_fails_on_odd_next_values() {
    let app = TestApp::spawn().await;
    // Browsers drop tabs and newlines from URLs, so "/\t/evil" means "//evil".
    for next in [
        "/\n/evil.example",
        "/\t/evil.example",
        "/\r\n\\evil.example",
        "https://evil.example",
        "/login?next=/",
    ] {
        let token = app.csrf_token().await;
        let response = app
            .post_form(
                "/fn/login",
                &[
                    ("csrf_token", &token),
                    ("username", "approver"),
                    ("password", PASSWORD),
                    ("next", next),
                ],
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "{next:?}");
        assert_eq!(response.headers()["location"], "/", "{next:?}");
    }

    let token = app.csrf_token().await;
    let response = app
        .post_form(
            "/fn/login",
            &[
                ("csrf_token", &token),
                ("username", "approver"),
                ("password", PASSWORD),
                ("next", "/queue?tab=mine"),
            ],
        )
        .await;
    assert_eq!(response.headers()["location"], "/queue?tab=mine");
}

#[tokio::test]
async fn a_spoofed_forwarded_for_header_is_ignored_unless_trusted() {
    let app = TestApp::spawn_with(|settings| settings.login_max_failures_per_address = 2).await;
    for i in 0..2 {
        let token = app.csrf_token().await;
        let forged = crate::support::header("x-forwarded-for", &format!("203.0.113.{i}"));
        let response = app
            .post_form_with(
                "/fn/login",
                &[
                    ("csrf_token", &token),
                    ("username", "customer"),
                    ("password", "not the password"),
                ],
                forged,
            )
            .await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    }
    let token = app.csrf_token().await;
    let response = app
        .post_form_with(
            "/fn/login",
            &[
                ("csrf_token", &token),
                ("username", "manager"),
                ("password", PASSWORD),
            ],
            crate::support::header("x-forwarded-for", "203.0.113.99"),
        )
        .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_address_it_appended_is_throttled() {
    let app = TestApp::spawn_with(|settings| {
        settings.login_max_failures_per_address = 2;
        settings.trust_forwarded_for = true;
    })
    .await;
    // The client controls everything left of what our proxy appended.
    let attempt = |forwarded: String, user: &'static str, password: &'static str| {
        let app = &app;
        async move {
            let token = app.csrf_token().await;
            app.post_form_with(
                "/fn/login",
                &[
                    ("csrf_token", &token),
                    ("username", user),
                    ("password", password),
                ],
                crate::support::header("x-forwarded-for", &forwarded),
            )
            .await
            .status()
        }
    };
    for i in 0..2 {
        let status = attempt(format!("10.9.9.{i}, 198.51.100.7"), "customer", "wrong one").await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    }

    let same_client = attempt("10.9.9.200, 198.51.100.7".into(), "manager", PASSWORD).await;
    assert_eq!(same_client, StatusCode::TOO_MANY_REQUESTS);
    let other_client = attempt("198.51.100.8".into(), "manager", PASSWORD).await;
    assert_eq!(other_client, StatusCode::OK);
}

#[tokio::test]
async fn a_stranger_hammering_an_account_from_elsewhere_does_not_lock_its_owner_out() {
    let app = TestApp::spawn_with(|settings| settings.trust_forwarded_for = true).await;
    let attempt = |address: &'static str, password: &'static str| {
        let app = &app;
        async move {
            let token = app.csrf_token().await;
            app.post_form_with(
                "/fn/login",
                &[
                    ("csrf_token", &token),
                    ("username", "customer"),
                    ("password", password),
                ],
                crate::support::header("x-forwarded-for", address),
            )
            .await
            .status()
        }
    };
    let mut refused = Vec::new();
    for _ in 0..8 {
        refused.push(attempt("203.0.113.66", "a guess").await);
    }
    // Five guesses are checked, then the stranger's address is stopped...
    assert_eq!(refused[..5], [StatusCode::UNPROCESSABLE_ENTITY; 5]);
    assert_eq!(refused[5..], [StatusCode::TOO_MANY_REQUESTS; 3]);
    // ...while the customer, at their own address, signs in.
    assert_eq!(attempt("198.51.100.20", PASSWORD).await, StatusCode::OK);
    assert_eq!(app.whoami().await.unwrap()["name"], "customer");
}
