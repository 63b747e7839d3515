//! `GET /metrics` through the real server: only for the scraper holding the
//! scrape token, nothing at all without one, and what it shows follows what
//! happened (a refund approved and executed on the sandbox provider).

use crate::support::{TestApp, json};
use reqwest::StatusCode;
use sea_orm::ConnectionTrait;
use std::collections::BTreeMap;
use tokio::sync::broadcast::error::RecvError;

const SCRAPE_TOKEN: &str = "scrape-token-for-the-tests-0123";

async fn app_with_token() -> TestApp {
    TestApp::spawn_with(|settings| {
        settings.metrics_token = Some(SCRAPE_TOKEN.into());
        // Nothing but this test's refund moves proposals.
        settings.reconcile_interval_seconds = 0;
    })
    .await
}

async fn scrape(app: &TestApp, token: Option<&str>) -> reqwest::Response {
    let mut request = app.bare_client().get(app.url("/metrics"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

/// One sample of the text exposition format: name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses the text format (version 0.0.4): comments, then
/// `name{label="value",…} number` per line. Fails the test on anything else.
fn parse(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (series, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("no value in {line:?}"));
            let value: f64 = value
                .parse()
                .unwrap_or_else(|e| panic!("value of {line:?}: {e}"));
            let (name, labels) = match series.split_once('{') {
                None => (series, BTreeMap::new()),
                Some((name, rest)) => {
                    let body = rest
                        .strip_suffix('}')
                        .unwrap_or_else(|| panic!("unclosed labels in {line:?}"));
                    let labels = body
                        .split(',')
                        .filter(|pair| !pair.is_empty())
                        .map(|pair| {
                            let (key, quoted) = pair
                                .split_once('=')
                                .unwrap_or_else(|| panic!("label without = in {line:?}"));
                            let value = quoted
                                .strip_prefix('"')
                                .and_then(|v| v.strip_suffix('"'))
                                .unwrap_or_else(|| panic!("unquoted label in {line:?}"));
                            (key.to_owned(), value.to_owned())
                        })
                        .collect();
                    (name, labels)
                }
            };
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
                "metric name {name:?}"
            );
            Sample {
                name: name.to_owned(),
                labels,
                value,
            }
        })
        .collect()
}

/// The value of the one sample of `name` with exactly these labels, if shown.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let wanted: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let found: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.name == name && s.labels == wanted)
        .collect();
    assert!(found.len() <= 1, "{name} {labels:?} shown twice");
    found.first().map(|s| s.value)
}

async fn scraped(app: &TestApp) -> Vec<Sample> {
    let response = scrape(app, Some(SCRAPE_TOKEN)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    parse(&response.text().await.unwrap())
}

#[tokio::test]
async fn without_a_scrape_token_configured_metrics_are_not_there_at_all() {
    let app = TestApp::spawn().await;
    for token in [None, Some(SCRAPE_TOKEN)] {
        let response = scrape(&app, token).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        let body = json(response).await;
        assert_eq!(body["error"]["code"], "not_found", "{body}");
    }
}

#[tokio::test]
async fn a_scraper_without_the_token_or_with_a_wrong_one_gets_401_in_the_error_shape() {
    let app = app_with_token().await;
    let near_miss = format!("{SCRAPE_TOKEN}x");
    for token in [None, Some("wrong"), Some(near_miss.as_str()), Some("")] {
        let response = scrape(&app, token).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{token:?}");
        let body = json(response).await;
        assert_eq!(body["error"]["code"], "unauthenticated", "{body}");
        assert!(!body.to_string().contains("countersign_"), "{body}");
    }
    // A session is no substitute for the token.
    app.login_ok("admin").await;
    let response = app.get("/metrics").await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn after_a_refund_is_approved_and_executed_the_scrape_counts_it_and_the_provider_call() {
    let app = app_with_token().await;
    let proposal = crate::refund::propose(&app, "4821").await;
    let before = scraped(&app).await;
    let settled = |samples: &[Sample]| {
        value(samples, "countersign_proposals", &[("state", "succeeded")]).unwrap()
            + value(samples, "countersign_proposals", &[("state", "verified")]).unwrap()
    };
    let refund_calls = |samples: &[Sample]| {
        value(
            samples,
            "countersign_provider_calls_total",
            &[("operation", "refund"), ("outcome", "succeeded")],
        )
        .unwrap_or(0.0)
    };
    let awaiting = value(
        &before,
        "countersign_proposals",
        &[("state", "awaiting_approval")],
    );
    assert!(awaiting.unwrap() >= 1.0, "the new proposal awaits approval");

    app.login_ok("approver").await;
    crate::refund::approve_until_refunded(&app, &proposal).await;

    let after = scraped(&app).await;
    assert_eq!(
        settled(&after),
        settled(&before) + 1.0,
        "one more refund done"
    );
    assert_eq!(
        value(
            &after,
            "countersign_proposals",
            &[("state", "awaiting_approval")]
        ),
        awaiting.map(|n| n - 1.0)
    );
    // Provider calls are counted per process (tests share it): at least ours.
    assert!(refund_calls(&after) >= refund_calls(&before) + 1.0);
    let timed = value(
        &after,
        "countersign_provider_call_duration_seconds_count",
        &[("operation", "refund")],
    );
    assert!(timed.unwrap() >= 1.0, "the refund call was timed");
    assert_eq!(
        value(&after, "countersign_unknown_outcomes_open", &[]),
        Some(0.0)
    );
    assert_eq!(
        value(
            &after,
            "countersign_unknown_outcome_oldest_age_seconds",
            &[]
        ),
        Some(0.0)
    );
    assert!(value(&after, "countersign_live_subscribers", &[]).is_some());
}

#[tokio::test]
async fn a_chat_turn_is_timed_by_how_it_ended() {
    let app = app_with_token().await;
    let answered = |samples: &[Sample]| {
        value(
            samples,
            "countersign_chat_turn_duration_seconds_count",
            &[("end", "answered")],
        )
        .unwrap_or(0.0)
    };
    let before = answered(&scraped(&app).await);
    app.login_ok("customer").await;
    let opened = crate::refund::post(&app, "/api/v1/conversations", &serde_json::json!({})).await;
    assert_eq!(opened.status(), StatusCode::CREATED);
    let id = json(opened).await["id"].as_str().unwrap().to_owned();
    let turn = crate::refund::post(
        &app,
        &format!("/api/v1/conversations/{id}/messages"),
        &serde_json::json!({"text": "what is your returns policy?"}),
    )
    .await;
    assert_eq!(turn.status(), StatusCode::OK);
    // Turns are timed per process (tests share it): at least ours.
    assert!(answered(&scraped(&app).await) >= before + 1.0);
}

#[tokio::test]
async fn a_refund_whose_outcome_is_unknown_shows_as_open_with_its_age() {
    let app = TestApp::spawn_with(|settings| {
        settings.metrics_token = Some(SCRAPE_TOKEN.into());
        settings.reconcile_interval_seconds = 0;
        // Every refund request answers 500: the refund may or may not exist.
        settings.sandbox_faults = Some(r#"{"faults":[{"mode":"server_error"}]}"#.into());
    })
    .await;
    let before = scraped(&app).await;
    assert_eq!(
        value(&before, "countersign_unknown_outcomes_open", &[]),
        Some(0.0)
    );
    let proposal = crate::refund::propose(&app, "4821").await;
    let id = proposal["id"].as_str().unwrap();
    let mut changes = app.engine.live.subscribe();
    app.login_ok("approver").await;
    let approved = crate::refund::post(
        &app,
        &format!("/api/v1/proposals/{id}/approve"),
        &serde_json::json!({"action_digest": proposal["action_digest"]}),
    )
    .await;
    assert_eq!(approved.status(), StatusCode::OK);
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            match changes.recv().await {
                Ok(engine::live::LiveEvent::Changed(change))
                    if change.proposal_id == id && change.status == "outcome_unknown" =>
                {
                    return;
                }
                Err(RecvError::Closed) => panic!("live updates ended"),
                _ => {}
            }
        }
    })
    .await
    .expect("the refund's outcome becomes unknown");

    // Scraped before the first status check is due (two seconds later).
    let after = scraped(&app).await;
    assert_eq!(
        value(&after, "countersign_unknown_outcomes_open", &[]),
        Some(1.0)
    );
    let age = value(
        &after,
        "countersign_unknown_outcome_oldest_age_seconds",
        &[],
    )
    .unwrap();
    assert!((0.0..60.0).contains(&age), "{age}");
    assert!(
        value(
            &after,
            "countersign_provider_calls_total",
            &[("operation", "refund"), ("outcome", "unknown")],
        )
        .unwrap()
            >= 1.0
    );
}

#[tokio::test]
async fn a_broken_journal_found_by_the_daily_check_shows_as_an_open_alert() {
    let app = TestApp::spawn_with(|settings| {
        settings.metrics_token = Some(SCRAPE_TOKEN.into());
        // The daily check runs below on a clock the test moves.
        settings.work_runner = false;
    })
    .await;
    let broken = |samples: &[Sample]| {
        value(
            samples,
            "countersign_alerts_open",
            &[("kind", "journal.broken")],
        )
    };
    assert_eq!(broken(&scraped(&app).await), Some(0.0));

    let proposal = crate::refund::propose(&app, "4821").await;
    app.db()
        .conn()
        .execute_unprepared(&format!(
            "UPDATE journal_events SET actor = 'user:manager' WHERE proposal_id = '{}' AND stream_seq = 1",
            proposal["id"].as_str().unwrap()
        ))
        .await
        .unwrap();
    let clock = engine::ManualClock::starting_at(engine::now());
    let checker = app.engine.clone().with_clock(clock.clock());
    let runner = checker.work.runner(&engine::work::WorkSchedule::default());
    let mut finished = runner.finished();
    runner.start().await.unwrap();
    clock.advance(chrono::Duration::minutes(2));
    checker.work.wake.lane(engine::work::SCHEDULED);
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            match finished.recv().await {
                Ok(run) if run.kind == engine::work::AUDIT_VERIFY => return,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => panic!("the runner stopped"),
            }
        }
    })
    .await
    .expect("the daily journal check ran");

    assert_eq!(broken(&scraped(&app).await), Some(1.0));
}
