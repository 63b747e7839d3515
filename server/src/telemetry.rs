//! Structured logs with `tracing`: human-readable by default, JSON with
//! `COUNTERSIGN_LOG_FORMAT=json`. `RUST_LOG` filters as usual.

use crate::config::LogFormat;
use tracing_subscriber::EnvFilter;

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new("info,sqlx=warn,sea_orm=warn,tower_sessions=warn,tantivy=warn")
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(true);
    // A second init (tests) is harmless; ignore the error.
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
