//! A database that is briefly unavailable is the client's cue to try again:
//! a 503 in the one error shape, with `Retry-After`, on every path — the
//! JSON API, server functions and the readiness probe — never a 500
//! "internal" that reads as a bug and is not retried.

use crate::support::{TestApp, json};
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};
use sqlx::{Connection, Executor};

async fn token(app: &TestApp, user: &str) -> String {
    app.engine
        .accounts
        .create_token(user, "tests")
        .await
        .unwrap()
        .secret
}

async fn post(app: &TestApp, bearer: &str, path: &str, body: Value) -> Response {
    app.bare_client()
        .post(app.url(path))
        .bearer_auth(bearer)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {path}: no answer ({e})"))
}

fn full_refund_of(order: &str) -> Value {
    json!({
        "order_id": order,
        "evidence": [{"reference": format!("order:{order}")}, {"reference": "returns-policy:section-3"}],
        "recommendation": "Refund under section 3.",
        // The name bound to the demo agent's credential.
        "agent": "external:agent",
    })
}

/// A 503 the client can act on: the one error shape, code `unavailable`,
/// and how long to wait.
async fn assert_try_again(what: &str, response: Response) {
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = json(response).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{what}: {body}");
    assert_eq!(body["error"]["code"], "unavailable", "{what}: {body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
    let seconds: u64 = retry_after
        .unwrap_or_else(|| panic!("{what}: no Retry-After"))
        .parse()
        .unwrap();
    assert!(seconds >= 1, "{what}: Retry-After {seconds}");
}

/// Closes the server's connection pool (shared with the test): from now on
/// every query fails as it would with the database gone.
async fn close_the_pool(app: &TestApp) {
    if let Some(pool) = app.db().sqlite_pool() {
        pool.close().await;
    }
    if let Some(pool) = app.db().postgres_pool() {
        pool.close().await;
    }
}

#[tokio::test]
async fn when_the_database_stops_answering_submissions_decisions_server_functions_and_the_probe_say_try_again_with_a_503()
 {
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let approver = token(&app, "approver").await;
    let proposal =
        json(post(&app, &agent, "/api/v1/proposals", full_refund_of("4821")).await).await;
    let id = proposal["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{proposal}"));
    app.login_ok("manager").await;

    close_the_pool(&app).await;

    let submitted = post(&app, &agent, "/api/v1/proposals", full_refund_of("4822")).await;
    assert_try_again("submission", submitted).await;
    let approved = post(
        &app,
        &approver,
        &format!("/api/v1/proposals/{id}/approve"),
        json!({"action_digest": proposal["action_digest"]}),
    )
    .await;
    assert_try_again("approval", approved).await;
    let listed = app
        .bare_client()
        .get(app.url("/api/v1/proposals"))
        .bearer_auth(&approver)
        .send()
        .await
        .unwrap();
    assert_try_again("list", listed).await;
    assert_try_again("server function", app.get("/fn/whoami").await).await;
    assert_try_again("readiness", app.get("/readyz").await).await;
    // The process itself is alive: nothing to restart.
    let alive = app
        .bare_client()
        .get(app.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(alive.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_submission_or_an_approval_that_cannot_get_the_write_lock_is_a_503_to_retry_not_a_500() {
    // SQLite's one writer is held by another process's connection (a backup,
    // a migration tool): the server waits its busy timeout, then must say
    // "try again". PostgreSQL has no such file lock; the pool test covers it.
    if storage::testing::TestDatabase::on_postgres() {
        return;
    }
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let approver = token(&app, "approver").await;
    let proposal =
        json(post(&app, &agent, "/api/v1/proposals", full_refund_of("4821")).await).await;
    let id = proposal["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{proposal}"));

    let mut other_process = sqlx::SqliteConnection::connect(&app.settings.database_url)
        .await
        .unwrap();
    other_process.execute("BEGIN IMMEDIATE").await.unwrap();

    let approve = format!("/api/v1/proposals/{id}/approve");
    let (submitted, approved) = tokio::join!(
        post(&app, &agent, "/api/v1/proposals", full_refund_of("4822")),
        post(
            &app,
            &approver,
            &approve,
            json!({"action_digest": proposal["action_digest"]}),
        )
    );
    assert_try_again("submission", submitted).await;
    assert_try_again("approval", approved).await;

    // Once the lock is gone the same requests go through.
    other_process.execute("ROLLBACK").await.unwrap();
    let again = post(&app, &agent, "/api/v1/proposals", full_refund_of("4822")).await;
    assert_eq!(again.status(), StatusCode::CREATED);
}
