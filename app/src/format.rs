//! Display helpers shared by pages.

use domain::Timestamp;

/// "12 days ago", "today", "in 3 hours" — relative to `now`.
pub fn relative_days(at: Timestamp, now: Timestamp) -> String {
    let days = (now - at).num_days();
    match days {
        0 => "today".to_owned(),
        1 => "yesterday".to_owned(),
        d if d > 1 => format!("{d} days ago"),
        -1 => "tomorrow".to_owned(),
        d => format!("in {} days", -d),
    }
}

/// `2026-11-18 10:00 UTC`.
pub fn utc(at: Timestamp) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}
