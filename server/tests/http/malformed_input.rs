//! Generated malformed input — bad JSON, wrong types, huge numbers, odd
//! Unicode, missing and unknown fields, bad path ids — sent as every role to
//! every operation of the served OpenAPI document and to every registered
//! server function. Whatever arrives, the answer is never a 5xx, never a
//! dropped connection and never a panic, and every refusal has the one
//! error shape.

use crate::support::{PASSWORD, TestApp, csrf_from};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use reqwest::cookie::Jar;
use reqwest::{Client, Method, Response};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Generated requests per role and operation; the whole test stays well
/// under a minute in a debug build.
const CASES: usize = 4;

/// The argument and field names the server's inputs use, so that generated
/// bodies reach past "unknown field" into the values' own checks.
const NAMES: &[&str] = &[
    "id",
    "page",
    "query[order]",
    "query[user]",
    "query[from]",
    "text",
    "reason",
    "note",
    "action_digest",
    "order_id",
    "amount_minor",
    "currency",
    "evidence",
    "open_questions",
    "recommendation",
    "agent",
    "conversation_id",
    "supersedes",
    "resolution",
    "retry",
    "provider_refund_id",
    "customer_id",
    "name",
    "username",
    "password",
    "display_name",
    "roles",
    "role",
    "limit_minor",
    "threshold_minor",
    "amount",
    "origin",
    "site_id",
    "public_key",
    "key_id",
    "enabled",
    "content",
    "source_version",
    "customer",
    "placed_at",
    "lines",
    "total_minor",
    "payment_reference",
    "events",
    "refund_id",
    "channel",
    "reference",
    "created_at",
    "token",
    "limit",
    "offset",
    "status",
    "next",
];

fn odd_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" ".to_owned()),
        Just("\0".to_owned()),
        Just("a\u{202e}b\u{2066}c".to_owned()),
        Just("💸🧾\u{fe0f}".to_owned()),
        Just("\u{feff}prp_1".to_owned()),
        Just("x".repeat(9_000)),
        Just("../../admin".to_owned()),
        Just("%00%ff".to_owned()),
        Just("' OR 1=1 --".to_owned()),
        Just("line\r\nbreak".to_owned()),
        Just("9223372036854775808".to_owned()),
        Just("-1".to_owned()),
        Just("NaN".to_owned()),
        Just("2026-02-30".to_owned()),
        Just("EUR".to_owned()),
        Just("XXX".to_owned()),
        Just("prp_00000000000000000000000000".to_owned()),
        any::<String>(),
    ]
}

fn odd_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        Just(Value::from(f64::MAX)),
        Just(Value::from(-0.5)),
        odd_string().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(prop::sample::select(NAMES), inner, 0..8).prop_map(|fields| {
                Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

/// A body as bytes: JSON of the wrong shape, or text that is not JSON at all.
fn odd_body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => odd_json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => Just(b"{\"amount_minor\": 1e400}".to_vec()),
        1 => Just(b"{\"amount_minor\": 123456789012345678901234567890}".to_vec()),
        1 => Just(b"{\"text\": \"unterminated".to_vec()),
        1 => Just(vec![0xff, 0xfe, 0x00, 0x7b]),
        1 => Just(format!("{}{}", "[".repeat(5000), "]".repeat(5000)).into_bytes()),
        1 => Just(b"\xef\xbb\xbf{}".to_vec()),
        1 => Just(Vec::new()),
        1 => Just(format!("{{\"text\": \"{}\"}}", "x".repeat(70_000)).into_bytes()),
    ]
}

fn odd_content_type() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        6 => Just(Some("application/json")),
        1 => Just(Some("text/plain")),
        1 => Just(Some("application/x-www-form-urlencoded")),
        1 => Just(None),
    ]
}

/// Form or query pairs for a server function: names it may take, values
/// no one should send.
fn odd_pairs() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    vec((prop::sample::select(NAMES), odd_string()), 0..6)
}

fn odd_path_id() -> impl Strategy<Value = String> {
    let encoded = odd_string().prop_map(|id| {
        let id = if id.is_empty() { "%20".to_owned() } else { id };
        id.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    });
    prop_oneof![
        6 => encoded,
        // Decodes to bytes that are no UTF-8.
        1 => Just("%FF%FE".to_owned()),
        1 => Just("prp_%C0%AF".to_owned()),
    ]
}

/// One role's credentials: a bearer token, and a signed-in browser session
/// with its CSRF token for the people who have one.
struct Caller {
    user: &'static str,
    bearer: String,
    browser: Option<(Client, String)>,
}

async fn caller(app: &TestApp, user: &'static str) -> Caller {
    let bearer = app
        .engine
        .accounts
        .create_token(user, "fuzz")
        .await
        .unwrap()
        .secret;
    let people = ["customer", "approver", "manager", "admin"];
    let browser = if people.contains(&user) {
        let client = Client::builder()
            .cookie_provider(Arc::new(Jar::default()))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let page = |client: &Client| {
            let url = app.url("/login");
            let client = client.clone();
            async move { csrf_from(&client.get(url).send().await.unwrap().text().await.unwrap()) }
        };
        let token = page(&client).await;
        let signed_in = client
            .post(app.url("/fn/login"))
            .form(&[
                ("csrf_token", token.as_str()),
                ("username", user),
                ("password", PASSWORD),
                ("next", "/"),
            ])
            .send()
            .await
            .unwrap();
        assert!(signed_in.status().is_success(), "{user} signs in");
        let token = page(&client).await;
        Some((client, token))
    } else {
        None
    };
    Caller {
        user,
        bearer,
        browser,
    }
}

/// Panics on this test's thread (where the server's tasks run, on the
/// test's own runtime), whether or not a client saw them.
fn count_panics_on_this_thread() -> Arc<AtomicUsize> {
    let count = Arc::new(AtomicUsize::new(0));
    let thread = std::thread::current().name().map(str::to_owned);
    let seen = count.clone();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name().map(str::to_owned) == thread {
            seen.fetch_add(1, Ordering::SeqCst);
        }
        previous(info);
    }));
    count
}

/// No 5xx; a refusal in the one error shape.
async fn check(what: &str, response: Result<Response, reqwest::Error>) {
    let what: String = what.chars().take(300).collect();
    let response = response.unwrap_or_else(|e| panic!("{what}: no answer ({e:?})"));
    let status = response.status();
    let body = response.bytes().await.unwrap_or_default();
    let shown = String::from_utf8_lossy(&body[..body.len().min(400)]).into_owned();
    assert!(status.as_u16() < 500, "{what}: {status} {shown}");
    if status.is_client_error() {
        let parsed: Value = serde_json::from_slice(&body)
            .unwrap_or_else(|_| panic!("{what}: {status} is not JSON: {shown}"));
        assert!(
            parsed["error"]["code"].is_string() && parsed["error"]["message"].is_string(),
            "{what}: {status} not in the one error shape: {shown}"
        );
    }
}

fn sample<S: Strategy>(runner: &mut TestRunner, strategy: &S) -> S::Value {
    strategy.new_tree(runner).unwrap().current()
}

#[tokio::test]
async fn malformed_input_from_any_role_to_any_route_or_server_function_is_refused_without_a_5xx_or_a_panic()
 {
    let panics = count_panics_on_this_thread();
    let app = TestApp::spawn().await;
    let mut callers = Vec::new();
    for user in ["customer", "agent", "approver", "manager", "admin", "shop"] {
        callers.push(caller(&app, user).await);
    }
    let doc: Value = app.get("/api/openapi.json").await.json().await.unwrap();
    let mut operations: Vec<(Method, String)> = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            // The live streams never end; they take no input to fuzz.
            if !path.starts_with("/api/live/") {
                operations.push((method.to_uppercase().parse().unwrap(), path.clone()));
            }
        }
    }
    assert!(operations.len() >= 20, "{operations:?}");
    let server_fns: Vec<(String, Method)> = leptos::server_fn::axum::server_fn_paths()
        // Signing out would end the session the remaining cases use.
        .filter(|(path, _)| *path != "/fn/logout")
        .map(|(path, method)| (path.to_owned(), method))
        .collect();
    assert!(server_fns.len() >= 20, "{server_fns:?}");

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let client = app.bare_client();
    for caller in &callers {
        for (method, template) in &operations {
            for _ in 0..CASES {
                let mut path = template.clone();
                while let Some(start) = path.find('{') {
                    let end = path[start..].find('}').unwrap() + start;
                    path.replace_range(start..=end, &sample(&mut runner, &odd_path_id()));
                }
                let mut request = client
                    .request(method.clone(), app.url(&path))
                    .bearer_auth(&caller.bearer);
                let pairs = sample(&mut runner, &odd_pairs());
                request = request.query(&pairs);
                if *method != Method::GET {
                    if let Some(content_type) = sample(&mut runner, &odd_content_type()) {
                        request = request.header("content-type", content_type);
                    }
                    request = request.body(sample(&mut runner, &odd_body()));
                }
                check(
                    &format!("{} {method} {path}", caller.user),
                    request.send().await,
                )
                .await;
            }
        }
        for (path, method) in &server_fns {
            for _ in 0..CASES {
                let mut pairs = sample(&mut runner, &odd_pairs());
                let (request_client, csrf) = match &caller.browser {
                    Some((browser, csrf)) => (browser.clone(), Some(csrf.clone())),
                    None => (client.clone(), None),
                };
                if let Some(csrf) = &csrf {
                    pairs.push(("csrf_token", csrf.clone()));
                }
                let mut request = request_client.request(method.clone(), app.url(path));
                if csrf.is_none() {
                    request = request.bearer_auth(&caller.bearer);
                }
                request = if *method == Method::GET {
                    request.query(&pairs)
                } else if sample(&mut runner, &any::<bool>()) {
                    request.form(&pairs)
                } else {
                    // Not a form at all (the CSRF header keeps it past the
                    // CSRF check to the argument decoder).
                    if let Some(csrf) = &csrf {
                        request = request.header("x-csrf-token", csrf);
                    }
                    request
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body(sample(&mut runner, &odd_body()))
                };
                check(
                    &format!("{} {method} {path}", caller.user),
                    request.send().await,
                )
                .await;
            }
        }
    }
    assert_eq!(
        panics.load(Ordering::SeqCst),
        0,
        "the server panicked (see the output above)"
    );
}
