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

/// "in 47 hours", "3 minutes ago".
pub fn relative_time(at: Timestamp, now: Timestamp) -> String {
    let seconds = (at - now).num_seconds();
    let (magnitude, future) = (seconds.unsigned_abs(), seconds >= 0);
    let amount = match magnitude {
        0..=59 => format!("{magnitude} s"),
        60..=3599 => format!("{} min", magnitude / 60),
        3600..=172_799 => format!("{} h", magnitude / 3600),
        _ => format!("{} days", magnitude / 86_400),
    };
    if future {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    }
}

/// The first 12 characters of a hash, enough for a person to compare.
pub fn short_digest(digest: &str) -> String {
    digest.chars().take(12).collect()
}
