//! What the benchmarks share: their options and their percentiles.

use std::str::FromStr;
use std::time::Duration;

/// The environment variable `name` as a number, `default` when unset or
/// not one.
pub fn env_or<T: FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `p`-th percentile (nearest rank) of `sorted`, which is not empty.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
