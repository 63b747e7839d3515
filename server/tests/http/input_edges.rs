//! Input at the edges of what the server accepts: paging numbers beyond what
//! the database can take, server-function arguments that do not decode and
//! bodies too large to read. Each is a precise 4xx, never a 500 or a dropped
//! connection, and the server keeps answering afterwards.

use crate::support::{TestApp, json};
use reqwest::StatusCode;
use serde_json::Value;

/// The status and JSON body of a GET; a dropped connection (a panic in the
/// handler) fails the test with the path that caused it.
async fn get_json(app: &TestApp, path: &str) -> (StatusCode, Value) {
    let response = app
        .client
        .get(app.url(path))
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {path}: no answer ({e})"));
    let status = response.status();
    (status, json(response).await)
}

/// The server still answers on the same app: whatever came before did not
/// take it down.
async fn still_answers(app: &TestApp) {
    let response = app.get("/healthz").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(app.whoami().await.is_some(), "the session survived");
}

#[tokio::test]
async fn a_paging_number_too_large_for_the_database_is_refused_precisely_instead_of_dropping_the_connection()
 {
    let app = TestApp::spawn().await;
    app.login_ok("manager").await;

    for (path, parameter) in [
        ("/api/v1/proposals?offset=9223372036854775808", "offset"),
        ("/api/v1/proposals?offset=18446744073709551615", "offset"),
        ("/api/v1/proposals?limit=18446744073709551615", "limit"),
    ] {
        let (status, body) = get_json(&app, path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert_eq!(body["error"]["code"], "invalid", "{path}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(parameter), "{path}: {message}");
        still_answers(&app).await;
    }

    let path = "/fn/audit_events?query[order]=&page=18446744073709551615";
    let (status, body) = get_json(&app, path).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {body}");
    assert_eq!(body["error"]["code"], "invalid", "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("page"),
        "{body}"
    );
    still_answers(&app).await;

    // The largest page that exists is still served, empty.
    let (status, body) = get_json(&app, "/fn/audit_events?query[order]=&page=1000").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["rows"], serde_json::json!([]));
}

#[tokio::test]
async fn a_server_function_call_with_a_missing_or_malformed_argument_is_a_422_that_names_it_without_internals()
 {
    let app = TestApp::spawn().await;
    app.login_ok("manager").await;

    for (path, named) in [
        ("/fn/audit_events?query[order]=&page=abc", "whole number"),
        ("/fn/audit_events?query[order]=", "`page` is missing"),
        ("/fn/proposal_page", "`id` is missing"),
    ] {
        let (status, body) = get_json(&app, path).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {body}");
        assert_eq!(body["error"]["code"], "invalid", "{path}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{path}: {message}");
        for internal in ["serde", "deserializ", "ServerFn", "server function", "qs"] {
            assert!(
                !message.to_lowercase().contains(&internal.to_lowercase()),
                "{path}: {message}"
            );
        }
        still_answers(&app).await;
    }

    // A form post without its CSRF token field (sent in the header instead,
    // so that the CSRF check lets it through to the function).
    let token = app.csrf_token().await;
    let response = app
        .post_form_with(
            "/fn/logout",
            &[("other", "x")],
            crate::support::header("x-csrf-token", &token),
        )
        .await;
    let status = response.status();
    let body = json(response).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`csrf_token` is missing"),
        "{body}"
    );
    still_answers(&app).await;
}

#[tokio::test]
async fn a_huge_body_sent_to_a_server_function_is_a_413_not_a_500() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;
    let token = app.csrf_token().await;

    // The token in the header, so nothing before the function reads the body.
    let body = format!("id=&text={}", "a".repeat(100 * 1024 * 1024));
    let response = app
        .client
        .post(app.url("/fn/send_message"))
        .header("x-csrf-token", &token)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("the server answers rather than dropping the connection");
    let status = response.status();
    let body = json(response).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["code"], "payload_too_large", "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("MiB"),
        "{body}"
    );

    // Without a length announced up front (chunked), the same.
    let cookie = format!(
        "{}={}",
        crate::support::SESSION_COOKIE,
        app.session_cookie().unwrap()
    );
    let (status, answer) = post_chunked(&app, "/fn/send_message", &cookie, &token, 3 << 20).await;
    assert_eq!(status, 413, "{answer}");
    assert!(answer.contains("payload_too_large"), "{answer}");

    still_answers(&app).await;
}

/// A chunked POST of `size` bytes over a plain connection; the status and
/// the whole answer.
async fn post_chunked(
    app: &TestApp,
    path: &str,
    cookie: &str,
    token: &str,
    size: usize,
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let host = app.address.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(host).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nx-csrf-token: {token}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b'a'; 64 * 1024];
    let mut sent = 0;
    while sent < size {
        let frame = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
        // The server may answer and close before reading everything.
        if stream.write_all(&frame).await.is_err() {
            break;
        }
        sent += chunk.len();
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"));
    (status, answer)
}

#[tokio::test]
async fn a_misspelt_field_in_a_proposal_is_refused_instead_of_becoming_a_full_refund() {
    let app = TestApp::spawn().await;
    let agent = app
        .engine
        .accounts
        .create_token("agent", "tests")
        .await
        .unwrap()
        .secret;
    let response = app
        .bare_client()
        .post(app.url("/api/v1/proposals"))
        .bearer_auth(&agent)
        .json(&serde_json::json!({
            "order_id": "4821",
            "ammount_minor": 100,
            "evidence": [{"reference": "order:4821"}, {"reference": "returns-policy:section-3"}],
            "recommendation": "Refund one euro."
        }))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error(), "{}", response.status());
    let body = json(response).await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("ammount_minor"), "{body}");
    let stored = storage::proposals::list(
        app.db().conn(),
        &storage::proposals::ProposalFilter::default(),
        10,
        0,
    )
    .await
    .unwrap();
    assert!(stored.is_empty(), "nothing was stored: {stored:?}");
}
