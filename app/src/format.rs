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

/// How long until (or since) `at`, as precise as a deadline needs:
/// "in 2 days 3 h", "in 47 h 12 min", "in 9 min 05 s", "in 40 s",
/// "3 min 10 s ago".
pub fn countdown(at: Timestamp, now: Timestamp) -> String {
    let seconds = (at - now).num_seconds();
    let (magnitude, future) = (seconds.unsigned_abs(), seconds >= 0);
    let (days, hours, minutes, secs) = (
        magnitude / 86_400,
        magnitude % 86_400 / 3600,
        magnitude % 3600 / 60,
        magnitude % 60,
    );
    let amount = match magnitude {
        0..=59 => format!("{secs} s"),
        60..=3599 => format!("{minutes} min {secs:02} s"),
        3600..=172_799 => format!("{} h {minutes} min", magnitude / 3600),
        _ => format!("{days} days {hours} h"),
    };
    if future {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    }
}

/// Whether a deadline is close enough to draw the eye (under an hour).
pub fn due_soon(at: Timestamp, now: Timestamp) -> bool {
    (at - now).num_seconds() < 3600
}

/// The first 12 characters of a hash, enough for a person to compare.
pub fn short_digest(digest: &str) -> String {
    digest.chars().take(12).collect()
}

/// `2026-11-18 10:00:05 UTC`: to the second, for timelines whose steps
/// follow each other within a minute.
pub fn utc_seconds(at: Timestamp) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// `value` with everything but RFC 3986's unreserved characters
/// percent-encoded: for a query string value or a `data:` URL.
pub fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// A stored JSON record indented for reading; anything that is not JSON
/// as it was stored.
pub fn pretty_json(stored: &str) -> String {
    serde_json::from_str::<serde_json::Value>(stored)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| stored.to_owned())
}

/// A journal event's payload (JSON) as one line a person can read: the
/// facts that matter for the event, labelled, in a fixed order; what is
/// only for machines (the full conditions snapshot) is left to the export.
pub fn event_details(payload: &str) -> String {
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_str::<serde_json::Value>(payload)
    else {
        return String::new();
    };
    let text = |key: &str| match fields.get(key) {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        Some(serde_json::Value::Bool(b)) => Some(if *b { "yes" } else { "no" }.to_owned()),
        _ => None,
    };
    let mut parts = Vec::new();
    let labelled = [
        ("reason", "reason"),
        ("amount", "amount"),
        ("agent", "agent"),
        ("provider_refund_id", "provider refund"),
        ("required_approvals", "approvers needed"),
        ("superseded_by", "superseded by"),
        ("next_check_at", "next check"),
        ("within_key_retention", "key still retained"),
        ("lease_seconds", "lease (s)"),
        ("resolution", "resolution"),
        ("note", "note"),
        ("retry_as", "new proposal"),
    ];
    for (key, label) in labelled {
        if let Some(value) = text(key) {
            parts.push(format!("{label}: {value}"));
        }
    }
    if let Some(digest) = text("action_digest") {
        parts.push(format!("digest {}", short_digest(&digest)));
    }
    if fields.get("resend").and_then(serde_json::Value::as_bool) == Some(true) {
        parts.push("sent again under the same key".to_owned());
    }
    if let Some(serde_json::Value::Array(refunds)) = fields.get("refunds_under_key") {
        let listed: Vec<String> = refunds
            .iter()
            .map(|r| {
                let field = |k: &str| r.get(k).and_then(serde_json::Value::as_str).unwrap_or("?");
                format!("{} {} {}", field("id"), field("amount"), field("status"))
            })
            .collect();
        parts.push(format!(
            "refunds under the key: {}",
            if listed.is_empty() {
                "none".to_owned()
            } else {
                listed.join(", ")
            }
        ));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone, Utc};

    fn at(seconds_from_now: i64) -> (Timestamp, Timestamp) {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
        (now + Duration::seconds(seconds_from_now), now)
    }

    #[test]
    fn a_countdown_is_as_precise_as_the_time_left_needs() {
        let cases = [
            (40, "in 40 s"),
            (9 * 60 + 5, "in 9 min 05 s"),
            (47 * 3600 + 12 * 60 + 59, "in 47 h 12 min"),
            (2 * 86_400 + 3 * 3600 + 7, "in 2 days 3 h"),
            (-(3 * 60 + 10), "3 min 10 s ago"),
            (0, "in 0 s"),
        ];
        for (seconds, expected) in cases {
            let (deadline, now) = at(seconds);
            assert_eq!(countdown(deadline, now), expected, "{seconds} s");
        }
    }

    #[test]
    fn an_events_details_name_its_facts_and_leave_out_the_machinery() {
        let approved = r#"{"approval_id":"apv_1","action_digest":"0123456789abcdef0123","required_approvals":2,"conditions":{"order_version":3}}"#;
        assert_eq!(
            event_details(approved),
            "approvers needed: 2 · digest 0123456789ab"
        );
        let verified =
            r#"{"refunds_under_key":[{"id":"re_1","amount":"79.00 EUR","status":"succeeded"}]}"#;
        assert_eq!(
            event_details(verified),
            "refunds under the key: re_1 79.00 EUR succeeded"
        );
        let unknown = r#"{"reason":"timed out","next_check_at":"2026-12-01T10:00:00Z"}"#;
        assert_eq!(
            event_details(unknown),
            "reason: timed out · next check: 2026-12-01T10:00:00Z"
        );
        assert_eq!(
            event_details(r#"{"idempotency_key":"prp_1","resend":true}"#),
            "sent again under the same key"
        );
        assert_eq!(event_details("not json"), "");
        assert_eq!(pretty_json(r#"{"a":1}"#), "{\n  \"a\": 1\n}");
        assert_eq!(pretty_json("not json"), "not json");
        assert_eq!(percent_encode("a b/+\n~"), "a%20b%2F%2B%0A~");
    }

    #[test]
    fn a_deadline_under_an_hour_away_or_past_is_due_soon() {
        let soon = [59 * 60, 0, -5].map(|s| {
            let (deadline, now) = at(s);
            due_soon(deadline, now)
        });
        assert_eq!(soon, [true, true, true]);
        let (deadline, now) = at(3600);
        assert!(!due_soon(deadline, now));
    }
}

/// A settings change (an approval limit, a role, a policy…) as a person
/// reads it in the audit trail: what it belongs to, and the value before and
/// after. `None` for events that are not settings changes.
pub fn setting_details(kind: &str, payload: &str) -> Option<String> {
    domain::SettingKind::parse(kind)?;
    let change: domain::SettingChange = serde_json::from_str(payload).ok()?;
    let shown = |value: Option<String>| value.unwrap_or_else(|| "not set".to_owned());
    Some(format!(
        "{} · before: {} · after: {}",
        change.subject,
        shown(change.before),
        shown(change.after)
    ))
}

#[cfg(test)]
mod setting_tests {
    use super::setting_details;

    #[test]
    fn a_settings_change_reads_as_subject_before_and_after() {
        let payload = r#"{"subject":"user:approver","before":null,"after":"2500.00 EUR"}"#;
        assert_eq!(
            setting_details("approval_limit_set", payload).as_deref(),
            Some("user:approver · before: not set · after: 2500.00 EUR")
        );
        assert_eq!(setting_details("approved", payload), None);
    }
}
