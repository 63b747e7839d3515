//! `GET /metrics`: the Prometheus text exposition format, for a scraper
//! holding the scrape token.
//!
//! Two kinds of series. Events (provider calls, chat turns, Stop) are
//! recorded where they happen through the `metrics` facade, as `tracing` is
//! used for logs: the engine and the agents call `metrics::histogram!` and
//! know nothing of Prometheus; this process installs one recorder that keeps
//! them ([`install`]). States (proposals by state, unknown outcomes, live
//! subscribers, the work lanes) are read when scraped, from the database and
//! the engine this server runs ([`scrape`]), so every replica reports what
//! the shared database holds and nothing can drift.
//!
//! Labels are low-cardinality only (a state, an operation, an outcome, a
//! lane): never an id. Units are in the names.

pub mod provider;
pub mod scrape;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;

pub const PROVIDER_CALLS: &str = "countersign_provider_calls_total";
pub const PROVIDER_CALL_SECONDS: &str = "countersign_provider_call_duration_seconds";
/// Recorded by the engine (`assistant::chat::turn`); named here for the docs.
pub const CHAT_TURN_SECONDS: &str = "countersign_chat_turn_duration_seconds";
pub const CHAT_STOP_SECONDS: &str = "countersign_chat_stop_duration_seconds";
/// Recorded by the work runner (`runner::run`).
pub const WORK_ITEM_SECONDS: &str = "countersign_work_item_seconds";

/// Provider calls take milliseconds to the payment timeout (10 s by
/// default); chat turns and work items up to a model's timeout (60 s)
/// times its retries, or a provider call's.
const PROVIDER_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
const TURN_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The process's recorder, installed on first use (every server in one
/// process, as in the tests, shares it: event series are per process, as a
/// scraper expects of one target).
pub fn install() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let builder = || {
            PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full(PROVIDER_CALL_SECONDS.to_owned()),
                    PROVIDER_BUCKETS,
                )
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Prefix("countersign_chat_".to_owned()),
                        TURN_BUCKETS,
                    )
                })
                .and_then(|b| {
                    b.set_buckets_for_metric(Matcher::Full(WORK_ITEM_SECONDS.to_owned()), TURN_BUCKETS)
                })
        };
        let installed = builder().and_then(PrometheusBuilder::install_recorder);
        let handle = match installed {
            Ok(handle) => handle,
            Err(error) => {
                // Another recorder owns the facade (an embedding program's):
                // the scrape still answers, with the state series only.
                tracing::warn!(%error, "metrics recorder not installed; /metrics shows state series only");
                PrometheusBuilder::new().build_recorder().handle()
            }
        };
        describe();
        handle
    })
}

fn describe() {
    metrics::describe_counter!(
        PROVIDER_CALLS,
        "Payment provider calls by operation (refund, lookup, refunds_for_key, charge) and outcome"
    );
    metrics::describe_histogram!(
        PROVIDER_CALL_SECONDS,
        metrics::Unit::Seconds,
        "Payment provider call latency by operation"
    );
    metrics::describe_histogram!(
        CHAT_TURN_SECONDS,
        metrics::Unit::Seconds,
        "Chat turn latency, from claiming the conversation to the saved reply, by how the turn ended"
    );
    metrics::describe_histogram!(
        CHAT_STOP_SECONDS,
        metrics::Unit::Seconds,
        "Time from a Stop request reaching the turn to the turn having ended and saved"
    );
    metrics::describe_histogram!(
        WORK_ITEM_SECONDS,
        metrics::Unit::Seconds,
        "How long the work runner took over one item, by lane and kind"
    );
}
