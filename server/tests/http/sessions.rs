//! Sessions end when they must: disabled users (for good: re-enabling revives
//! no credential), the absolute lifetime, and never through a GET; and a GET
//! creates nothing.

use crate::support::{PASSWORD, TestApp};
use app::server::keys;
use reqwest::StatusCode;
use server::session_store::AnyStore;
use std::str::FromStr;
use tower_sessions::SessionStore;
use tower_sessions::session::Id;

/// Rewrites when the session behind `cookie` was signed in, directly in the
/// session store: the lifetime is hours, the test cannot wait for it.
async fn set_signed_in_at(app: &TestApp, cookie: &str, signed_in_at: i64) {
    let store = AnyStore::for_database(app.db()).await.unwrap();
    let id = Id::from_str(cookie).unwrap();
    let mut record = store.load(&id).await.unwrap().expect("a stored session");
    record
        .data
        .insert(keys::SIGNED_IN_AT.to_owned(), signed_in_at.into());
    store.save(&record).await.unwrap();
}

async fn session_exists(app: &TestApp, cookie: &str) -> bool {
    let store = AnyStore::for_database(app.db()).await.unwrap();
    store
        .load(&Id::from_str(cookie).unwrap())
        .await
        .unwrap()
        .is_some()
}

#[tokio::test]
async fn disabling_a_user_ends_their_existing_session_at_once() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;
    let cookie = app.session_cookie().unwrap();
    assert_eq!(app.me().await.status(), StatusCode::OK);

    app.engine
        .accounts
        .disable_user(&engine::settings::ChangedBy::console(), "customer")
        .await
        .unwrap();

    assert_eq!(app.me().await.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(app.whoami().await, None);
    assert!(
        !session_exists(&app, &cookie).await,
        "the session is deleted"
    );
}

#[tokio::test]
async fn a_new_password_ends_existing_sessions() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;
    let user = storage::users::find_by_name(app.db().conn(), "customer")
        .await
        .unwrap()
        .unwrap();

    storage::users::set_password_hash(app.db().conn(), &user.id, &user.password_hash)
        .await
        .unwrap();

    assert_eq!(app.me().await.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_session_ends_after_its_absolute_lifetime_however_active() {
    let app = TestApp::spawn_with(|settings| settings.session_absolute_hours = 2).await;
    app.login_ok("approver").await;
    let cookie = app.session_cookie().unwrap();
    let lifetime = app.settings.session_absolute_hours * 3600;
    let now = engine::now().timestamp();

    set_signed_in_at(&app, &cookie, now - lifetime + 300).await;
    assert_eq!(
        app.me().await.status(),
        StatusCode::OK,
        "still inside the lifetime"
    );

    set_signed_in_at(&app, &cookie, now - lifetime - 1).await;
    assert_eq!(app.me().await.status(), StatusCode::UNAUTHORIZED);
    assert!(
        !session_exists(&app, &cookie).await,
        "the session is deleted"
    );
    assert_eq!(app.whoami().await, None);
}

#[tokio::test]
async fn a_session_without_a_sign_in_time_is_not_trusted() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let cookie = app.session_cookie().unwrap();
    let store = AnyStore::for_database(app.db()).await.unwrap();
    let id = Id::from_str(&cookie).unwrap();
    let mut record = store.load(&id).await.unwrap().unwrap();
    record.data.remove(keys::SIGNED_IN_AT);
    store.save(&record).await.unwrap();

    assert_eq!(app.me().await.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn get_requests_never_sign_anyone_out() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let token = app.csrf_token().await;

    let response = app.get(&format!("/fn/logout?csrf_token={token}")).await;

    let status = response.status();
    assert!(
        matches!(
            status,
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_FOUND
        ),
        "GET /fn/logout answered {status}"
    );
    assert_eq!(app.whoami().await.unwrap()["name"], "approver");
    assert_eq!(app.me().await.status(), StatusCode::OK);
}

/// Writes a session record as it is, past the store's skipping of
/// expiry-only saves (the test cannot wait a minute for the expiry to age).
async fn store_as_is(store: &AnyStore, record: &tower_sessions::session::Record) {
    store.save_as_is(record).await.unwrap();
}

#[tokio::test]
async fn reading_pages_writes_no_session_but_an_active_session_still_slides_its_idle_expiry() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let cookie = app.session_cookie().unwrap();
    let store = AnyStore::for_database(app.db()).await.unwrap();
    let id = Id::from_str(&cookie).unwrap();
    let at_sign_in = store.load(&id).await.unwrap().unwrap();

    // Reads within a minute of the last write leave the stored session alone.
    for _ in 0..3 {
        let response = app.me().await;
        assert_eq!(response.status(), StatusCode::OK);
        let set_cookie = response
            .headers()
            .get("set-cookie")
            .expect("the cookie's Max-Age is renewed")
            .to_str()
            .unwrap()
            .to_owned();
        assert!(set_cookie.contains("Max-Age=1800"), "{set_cookie}");
    }
    assert_eq!(
        store.load(&id).await.unwrap().unwrap(),
        at_sign_in,
        "no write for a read request"
    );

    // Once the stored expiry is over a minute behind, the next request
    // moves it forward: the idle timeout still counts from the last use.
    let mut aged = at_sign_in.clone();
    aged.expiry_date -= time::Duration::minutes(2);
    store_as_is(&store, &aged).await;
    assert_eq!(app.me().await.status(), StatusCode::OK);
    let after = store.load(&id).await.unwrap().unwrap();
    assert!(
        after.expiry_date > aged.expiry_date + time::Duration::minutes(1),
        "the stored expiry slides: {} -> {}",
        aged.expiry_date,
        after.expiry_date
    );
    assert_eq!(after.data, at_sign_in.data);
}

#[tokio::test]
async fn the_session_cookie_is_http_only_same_site_lax_and_secure_behind_https() {
    let app = TestApp::spawn().await;
    let response = app.get("/login").await;
    let cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(cookie.starts_with("countersign_session="), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(cookie.contains("Path=/"), "{cookie}");
    assert!(!cookie.contains("Secure"), "{cookie}");

    let https = TestApp::spawn_with(|settings| {
        settings.public_url = Some("https://countersign.example".into());
    })
    .await;
    let response = https.get("/login").await;
    let cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(cookie.contains("Secure"), "{cookie}");
}

#[tokio::test]
async fn a_request_that_finishes_after_sign_out_does_not_revive_the_session() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let cookie = app.session_cookie().unwrap();
    let store = AnyStore::for_database(app.db()).await.unwrap();
    let id = Id::from_str(&cookie).unwrap();
    // What a slow request (say, a long chat turn) loaded when it started.
    let in_flight = store.load(&id).await.unwrap().unwrap();

    assert_eq!(app.logout().await.status(), StatusCode::OK);
    // The slow request ends and the session layer saves what it holds.
    store.save(&in_flight).await.unwrap();

    assert!(!session_exists(&app, &cookie).await);
    assert_eq!(
        app.me_with_cookie(&cookie).await.status(),
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn re_enabling_a_user_does_not_revive_any_credential_issued_before_the_disable() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;
    let cookie = app.session_cookie().unwrap();
    let token = app
        .engine
        .accounts
        .create_token("customer", "shop")
        .await
        .unwrap()
        .secret;
    let site = crate::widget::register(&app).await;
    let widget = crate::widget::widget_session(&app, &site, "customer").await;
    assert_eq!(app.me_with_bearer(&widget).await.status(), StatusCode::OK);

    let console = engine::settings::ChangedBy::console();
    app.engine
        .accounts
        .disable_user(&console, "customer")
        .await
        .unwrap();
    app.engine
        .accounts
        .enable_user(&console, "customer")
        .await
        .unwrap();

    assert_eq!(
        app.me().await.status(),
        StatusCode::UNAUTHORIZED,
        "the browser session"
    );
    assert_eq!(app.session_cookie(), None, "the browser dropped its cookie");
    assert_eq!(
        app.me_with_cookie(&cookie).await.status(),
        StatusCode::UNAUTHORIZED,
        "the old cookie, wherever it was copied"
    );
    assert_eq!(
        app.me_with_bearer(&token).await.status(),
        StatusCode::UNAUTHORIZED,
        "the API token"
    );
    assert_eq!(
        app.me_with_bearer(&widget).await.status(),
        StatusCode::UNAUTHORIZED,
        "the widget session"
    );
    // The user signs in afresh.
    app.login_ok("customer").await;
}

#[tokio::test]
async fn opening_the_chat_page_creates_no_conversation() {
    let app = TestApp::spawn().await;
    app.login_ok("customer3").await;
    let (status, html) = app.get_page("/chat").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("chat-empty"), "the empty chat is shown");
    let read = app.get("/fn/my_conversation").await;
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(
        read.json::<serde_json::Value>().await.unwrap(),
        "NotStarted"
    );
    let customer3 = crate::widget::user_id(&app, "customer3").await;
    let stored = storage::conversations::list_for_user(app.db().conn(), &customer3, 10)
        .await
        .unwrap();
    assert!(stored.is_empty(), "a GET opened {stored:?}");

    // The first message opens one, by POST.
    let token = app.csrf_token().await;
    let opened = app
        .post_form("/fn/new_conversation", &[("csrf_token", &token)])
        .await;
    assert_eq!(opened.status(), StatusCode::OK);
    let read = app.get("/fn/my_conversation").await;
    let resumed = read.json::<serde_json::Value>().await.unwrap();
    assert!(resumed["Resumed"]["id"].as_str().is_some(), "{resumed}");
}

/// The session cookie `response` sets or clears, if any.
fn session_set_cookie(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|value| value.to_str().unwrap().to_owned())
        .find(|value| value.starts_with("countersign_session="))
}

#[tokio::test]
async fn a_request_sent_just_before_a_sign_in_in_another_tab_does_not_sign_the_browser_out() {
    let app = TestApp::spawn().await;
    app.csrf_token().await;
    let visitor = app
        .session_cookie()
        .expect("the page starts a visitor's session");
    // The other tab signs in: the visitor's session is replaced.
    assert_eq!(
        app.login("customer", PASSWORD).await.status(),
        StatusCode::OK
    );

    // A poll the first tab sent with the visitor's cookie arrives now. Were
    // it to clear the cookie, the browser would drop the new one too.
    let late = app
        .bare_client()
        .get(app.url("/chat"))
        .header("cookie", format!("countersign_session={visitor}"))
        .send()
        .await
        .unwrap();

    assert_eq!(late.status(), StatusCode::OK);
    assert_eq!(session_set_cookie(&late), None);
}

#[tokio::test]
async fn signing_out_clears_the_cookie_in_the_browser() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;

    let response = app.logout().await;

    let cleared = session_set_cookie(&response).expect("sign-out clears the cookie");
    assert!(cleared.starts_with("countersign_session=;"), "{cleared}");
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    assert_eq!(app.session_cookie(), None);
}
