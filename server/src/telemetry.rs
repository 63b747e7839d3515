//! Structured logs with `tracing`: human-readable by default, JSON with
//! `COUNTERSIGN_LOG_FORMAT=json`. `RUST_LOG` filters as usual.
//!
//! Every piece of work runs in a span that names what it works on: an HTTP
//! request (`request.id`, `method`, `route`), a proposal (`proposal.id`:
//! approval, execution, verification), a chat turn (`conversation.id`), a
//! runner job (`job.id`). A JSON line carries the spans it was logged in
//! (`spans`, outermost first, each with its fields), so every line of a
//! piece of work can be found by its id, e.g.
//! `jq 'select(any(.spans[]?; ."proposal.id" == "prp_…"))'`.

use crate::config::LogFormat;
use axum::extract::MatchedPath;
use tracing::Subscriber;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        // chromiumoxide warns of what the browser lane does on purpose (a
        // browser killed at Stop) and of protocol events it does not know;
        // the lane logs its own failures.
        EnvFilter::new(
            "info,sqlx=warn,sea_orm=warn,tower_sessions=warn,tantivy=warn,chromiumoxide=error",
        )
    });
    // A second init (tests) is harmless; ignore the error.
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(layer(format, std::io::stdout))
        .try_init();
}

/// The formatting layer for `format`, writing to `writer` (stdout in the
/// server; a buffer in the tests that read the lines back).
pub fn layer<S, W>(format: LogFormat, writer: W) -> Box<dyn Layer<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let base = tracing_subscriber::fmt::layer()
        .with_target(true)
        .with_writer(writer);
    match format {
        LogFormat::Json => base
            .json()
            .flatten_event(true)
            // Every enclosing span with its fields, not only the innermost:
            // a line logged deep inside a turn still carries the turn's
            // conversation.id and the request's request.id.
            .with_span_list(true)
            .with_current_span(false)
            .boxed(),
        LogFormat::Text => base.boxed(),
    }
}

/// The span of one HTTP request: an id of its own to find all its lines,
/// and the route (the matched pattern, e.g. `/api/v1/proposals/{id}/approve`).
pub fn request_span<B>(request: &http::Request<B>) -> tracing::Span {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("", MatchedPath::as_str);
    tracing::info_span!(
        "request",
        request.id = %storage::ids::new_id("req"),
        method = %request.method(),
        route,
        path = request.uri().path(),
    )
}
