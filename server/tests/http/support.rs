//! `TestApp`: one running server per test, and one helper per endpoint.

use reqwest::cookie::{CookieStore, Jar};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Response, StatusCode, Url, redirect};
use serde_json::Value;
use server::config::Settings;
use server::startup::Application;
use std::sync::Arc;
use storage::Database;
use storage::testing::TestDatabase;
use tokio::task::JoinHandle;

/// The password of every seeded demo user.
pub const PASSWORD: &str = "demo-password-for-tests";
pub const SESSION_COOKIE: &str = "countersign_session";

pub struct TestApp {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub address: String,
    pub settings: Arc<Settings>,
    /// The server's engine, to act as another part of the system would.
    pub engine: engine::Engine,
    /// The server's work runner (subscribe to the ends of its items).
    pub runner: Option<runner::Runner>,
    /// Keeps the session cookie, like a browser; follows no redirects.
    pub client: Client,
    jar: Arc<Jar>,
    server: JoinHandle<()>,
    // Dropped last: the server task is stopped first (see Drop).
    database: TestDatabase,
}

impl TestApp {
    /// A server on default settings.
    pub async fn spawn() -> TestApp {
        Self::spawn_with(|_| {}).await
    }

    /// A server on default settings changed by `configure`.
    pub async fn spawn_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
        Self::spawn_prepared(configure, |_| async {}).await
    }

    /// A server whose database `prepare` changed before it started (what
    /// a restarted group finds already there).
    pub async fn spawn_prepared<F: std::future::Future<Output = ()>>(
        configure: impl FnOnce(&mut Settings),
        prepare: impl FnOnce(Database) -> F,
    ) -> TestApp {
        // RUST_LOG=debug shows the server's logs, tagged with the test's name.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_thread_names(true)
            .with_test_writer()
            .try_init();
        let database = TestDatabase::new().await;
        engine::demo::seed_demo(
            &database.db,
            PASSWORD,
            engine::demo::ReferenceStyle::Sandbox,
            engine::now(),
        )
        .await
        .unwrap();
        prepare(database.db.clone()).await;
        let mut settings = Settings {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: database.url.clone(),
            seed_demo: Some(false),
            ..Settings::default()
        };
        configure(&mut settings);
        settings.validate().unwrap();
        let settings = Arc::new(settings);
        let app = Application::build(settings.clone(), database.db.clone())
            .await
            .unwrap();
        let address = format!("http://{}", app.local_addr().unwrap());
        let engine = app.engine().clone();
        let runner = app.runner().cloned();
        let server = tokio::spawn(async move {
            app.run_until(std::future::pending()).await.unwrap();
        });
        let jar = Arc::new(Jar::default());
        let client = Client::builder()
            .cookie_provider(jar.clone())
            .redirect(redirect::Policy::none())
            .build()
            .unwrap();
        TestApp {
            address,
            settings,
            engine,
            runner,
            client,
            jar,
            server,
            database,
        }
    }

    pub fn db(&self) -> &Database {
        &self.database.db
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// A client with no cookie store, for requests that set headers by hand.
    pub fn bare_client(&self) -> Client {
        Client::builder()
            .redirect(redirect::Policy::none())
            .build()
            .unwrap()
    }

    /// The value of the session cookie the client holds now, if any.
    pub fn session_cookie(&self) -> Option<String> {
        let url = Url::parse(&self.address).unwrap();
        let header = self.jar.cookies(&url)?;
        header.to_str().unwrap().split("; ").find_map(|pair| {
            pair.strip_prefix(SESSION_COOKIE)
                .and_then(|rest| rest.strip_prefix('='))
                .map(str::to_owned)
        })
    }

    pub async fn get(&self, path: &str) -> Response {
        self.client.get(self.url(path)).send().await.unwrap()
    }

    /// A page's status and HTML.
    pub async fn get_page(&self, path: &str) -> (StatusCode, String) {
        let response = self.get(path).await;
        let status = response.status();
        (status, response.text().await.unwrap())
    }

    /// The session's CSRF token, read from a page as a browser would.
    pub async fn csrf_token(&self) -> String {
        let (status, html) = self.get_page("/login").await;
        assert_eq!(status, StatusCode::OK);
        csrf_from(&html)
    }

    /// A URL-encoded form POST, as a plain HTML form or a server function sends it.
    pub async fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> Response {
        self.post_form_with(path, fields, HeaderMap::new()).await
    }

    pub async fn post_form_with(
        &self,
        path: &str,
        fields: &[(&str, &str)],
        headers: HeaderMap,
    ) -> Response {
        self.client
            .post(self.url(path))
            .headers(headers)
            .form(fields)
            .send()
            .await
            .unwrap()
    }

    /// Signs in through `/fn/login` with a token read from the login page.
    pub async fn login(&self, user: &str, password: &str) -> Response {
        let token = self.csrf_token().await;
        self.post_form(
            "/fn/login",
            &[
                ("csrf_token", &token),
                ("username", user),
                ("password", password),
                ("next", "/"),
            ],
        )
        .await
    }

    /// Signs in and checks that it worked.
    pub async fn login_ok(&self, user: &str) {
        let response = self.login(user, PASSWORD).await;
        let status = response.status();
        assert_eq!(status, StatusCode::OK, "{}", response.text().await.unwrap());
        assert_eq!(self.whoami().await.unwrap()["name"], user);
    }

    pub async fn logout(&self) -> Response {
        let token = self.csrf_token().await;
        self.post_form("/fn/logout", &[("csrf_token", &token)])
            .await
    }

    /// The signed-in user according to the `whoami` server function.
    pub async fn whoami(&self) -> Option<Value> {
        let response = self.get("/fn/whoami").await;
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.unwrap();
        (!body.is_null()).then_some(body)
    }

    /// `GET /api/v1/me` with the client's cookies.
    pub async fn me(&self) -> Response {
        self.get("/api/v1/me").await
    }

    /// `GET /api/v1/me` carrying only the given session cookie value.
    pub async fn me_with_cookie(&self, cookie: &str) -> Response {
        self.bare_client()
            .get(self.url("/api/v1/me"))
            .header("cookie", format!("{SESSION_COOKIE}={cookie}"))
            .send()
            .await
            .unwrap()
    }

    /// `GET /api/v1/me` with a bearer token and no cookies.
    pub async fn me_with_bearer(&self, token: &str) -> Response {
        self.bare_client()
            .get(self.url("/api/v1/me"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Stop serving before the database goes away.
        self.server.abort();
    }
}

/// The token in `<meta name="csrf-token" content="…">`.
pub fn csrf_from(html: &str) -> String {
    let tag_start = html
        .find(r#"name="csrf-token""#)
        .and_then(|at| html[..at].rfind('<'))
        .unwrap_or_else(|| panic!("no csrf-token meta tag in:\n{html}"));
    let tag = &html[tag_start..];
    let tag = &tag[..tag.find('>').unwrap()];
    let content = tag
        .split("content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("meta tag without content: {tag}"));
    assert!(!content.is_empty(), "empty CSRF token in {tag}");
    content.to_owned()
}

/// One header, for `post_form_with`.
pub fn header(name: &'static str, value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        HeaderName::from_static(name),
        HeaderValue::from_str(value).unwrap(),
    );
    headers
}

/// A JSON body, whatever the status.
pub async fn json(response: Response) -> Value {
    let text = response.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn the_csrf_token_is_read_from_the_meta_tag() {
    let html = r#"<head><meta charset="utf-8"><meta name="csrf-token" content="abc123"/></head>"#;
    assert_eq!(csrf_from(html), "abc123");
    let reordered = r#"<meta content="xyz" name="csrf-token">"#;
    assert_eq!(csrf_from(reordered), "xyz");
}
