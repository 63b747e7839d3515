//! JSON logs (`COUNTERSIGN_LOG_FORMAT=json`) through the real server: every
//! line logged while a refund is approved and executed carries the
//! proposal's id, and every line of a chat turn the conversation's id, so
//! one `jq` filter finds all of a piece of work.
//!
//! Its own test binary: it installs the process's log subscriber (the
//! server's JSON layer, writing into a buffer) and reads the lines back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "http/support.rs"]
#[allow(
    dead_code,
    reason = "shared with the http tests; this binary uses a few helpers"
)]
mod support;

#[path = "common/refund.rs"]
mod refund;

use serde_json::{Value, json};
use server::config::LogFormat;
use std::sync::{Arc, Mutex};
use support::TestApp;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Everything the server logs in this process, as JSON lines.
#[derive(Clone)]
struct Captured(Arc<Mutex<Vec<u8>>>);

/// Appends each formatted line (one write per event) to the buffer.
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn install() -> Captured {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        tracing_subscriber::registry()
            // Our crates at debug: as many lines as the work logs.
            .with(EnvFilter::new(
                "info,server=debug,engine=debug,agents=debug,connectors=debug,runner=debug",
            ))
            .with(server::telemetry::layer(LogFormat::Json, {
                let buffer = buffer.clone();
                move || Sink(buffer.clone())
            }))
            .init();
        Captured(buffer)
    }

    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// The lines written between two `len()` marks, parsed.
    fn lines(&self, from: usize, to: usize) -> Vec<Value> {
        let bytes = self.0.lock().unwrap()[from..to].to_vec();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    }
}

/// The value of `field` in any span the line was logged in.
fn span_field<'a>(line: &'a Value, field: &str) -> Option<&'a str> {
    line["spans"]
        .as_array()?
        .iter()
        .find_map(|span| span[field].as_str())
}

/// Lines of a runner job not about `subject`: the sweeps on a timer (no
/// subject) or other work run beside ours; with no subject, any job's.
fn other_job(line: &Value, subject: Option<&str>) -> bool {
    line["spans"].as_array().is_some_and(|spans| {
        spans.iter().any(|span| {
            span["name"] == "job" && (subject.is_none() || span["job.subject"].as_str() != subject)
        })
    })
}

/// Lines of the sandbox provider's own HTTP handling: it stands for an
/// outside service that knows nothing of our proposals (it sees only the
/// idempotency key), so its lines are not our work's.
fn provider_side(line: &Value) -> bool {
    span_field(line, "path").is_some_and(|path| path.starts_with("/sandbox/"))
}

#[tokio::test]
async fn every_line_of_a_refund_approval_and_of_a_chat_turn_carries_its_id() {
    let logs = Captured::install();
    let app = TestApp::spawn_with(|settings| {
        settings.log_format = LogFormat::Json;
        // No background pass mixes its lines into the refund's.
        settings.reconcile_interval_seconds = 0;
    })
    .await;

    // The refund: approval, the provider call after commit, the answer.
    let proposal = refund::propose(&app, "4821").await;
    let id = proposal["id"].as_str().unwrap();
    app.login_ok("approver").await;
    let start = logs.len();
    refund::approve_until_refunded(&app, &proposal).await;
    let lines: Vec<Value> = logs
        .lines(start, logs.len())
        .into_iter()
        .filter(|line| !provider_side(line) && !other_job(line, Some(id)))
        .collect();
    assert!(
        lines
            .iter()
            .any(|line| line["message"] == "payment provider call"
                && line["provider.operation"] == "refund"),
        "the refund sent after commit logs its call: {lines:#?}"
    );
    // The runner's own lines of the send name the proposal as the job's
    // subject; the work inside it as proposal.id.
    for line in &lines {
        let named = span_field(line, "proposal.id") == Some(id)
            || span_field(line, "job.subject") == Some(id);
        assert!(named, "{line}");
    }
    assert!(
        lines
            .iter()
            .any(|line| span_field(line, "route") == Some("/api/v1/proposals/{id}/approve")),
        "the approval request's own lines are there too: {lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|line| span_field(line, "job.id").is_some()),
        "the send ran as a runner job, whose lines carry its job.id too: {lines:#?}"
    );
    app.logout().await;

    // A chat turn.
    app.login_ok("customer").await;
    let opened = refund::post(&app, "/api/v1/conversations", &json!({})).await;
    assert_eq!(opened.status(), reqwest::StatusCode::CREATED);
    let conversation = support::json(opened).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let start = logs.len();
    let turn = refund::post(
        &app,
        &format!("/api/v1/conversations/{conversation}/messages"),
        &json!({"text": "I want a refund for order 4821"}),
    )
    .await;
    assert_eq!(turn.status(), reqwest::StatusCode::OK);
    let lines: Vec<Value> = logs
        .lines(start, logs.len())
        .into_iter()
        // A chat turn runs in its request, never as a runner job.
        .filter(|line| !other_job(line, None))
        .collect();
    // The agents run the turn in a task of its own: their events are there.
    assert!(
        lines.iter().any(|line| line["message"] == "agent event"),
        "the agents' events are there: {lines:#?}"
    );
    for line in &lines {
        assert_eq!(
            span_field(line, "conversation.id"),
            Some(conversation.as_str()),
            "{line}"
        );
    }
}
