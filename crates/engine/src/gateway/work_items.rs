//! The gateway's items on the work runner: relaying a task to its peer,
//! asking the peer how it stands, and answering a task received.

use chrono::Duration;
use domain::Timestamp;
use serde_json::json;
use storage::work::NewWork;

/// Delivers an outbox task to its peer.
pub const RELAY: &str = "gateway.relay";
/// Asks the peer how an outbox task stands.
pub const POLL: &str = "gateway.poll";
/// Answers a task in the inbox.
pub const ANSWER: &str = "gateway.answer";
/// Tells the peer to cancel an outbox task.
pub const CANCEL: &str = "gateway.cancel";

/// A peer that is down is tried again with backoff this many times before
/// the item is dead-lettered for a person (about two hours with the
/// gateway lane's backoff).
const RELAY_ATTEMPTS: u32 = 20;

pub fn relay(outbox_id: &str, now: Timestamp) -> NewWork {
    NewWork {
        kind: RELAY.to_owned(),
        lane: super::GATEWAY_LANE.to_owned(),
        subject: Some(outbox_id.to_owned()),
        payload: json!({ "outbox_id": outbox_id }),
        run_after: now,
        max_attempts: RELAY_ATTEMPTS,
        every: None,
        dedupe_key: Some(format!("{RELAY}:{outbox_id}")),
    }
}

/// The `look`-th look at the peer's answer, after the wait that look
/// calls for: 25 ms doubling to 5 s (a quick answer is seen quickly; a
/// long task costs the peer a request every 5 s).
pub fn poll(outbox_id: &str, look: u32, now: Timestamp) -> NewWork {
    let factor = 2i64.saturating_pow(look.saturating_sub(1).min(10));
    let wait = Duration::milliseconds((25 * factor).min(5_000));
    NewWork {
        kind: POLL.to_owned(),
        lane: super::GATEWAY_LANE.to_owned(),
        subject: Some(outbox_id.to_owned()),
        payload: json!({ "outbox_id": outbox_id, "look": look }),
        run_after: now + wait,
        max_attempts: RELAY_ATTEMPTS,
        every: None,
        // One key per look: a look that runs twice (its worker died after
        // its commit) queues its successor once.
        dedupe_key: Some(format!("{POLL}:{outbox_id}:{look}")),
    }
}

pub fn answer(inbox_id: &str, now: Timestamp) -> NewWork {
    answer_because(inbox_id, None, now)
}

/// Answers the inbox task again because of `why` (a child task it waits
/// for ended, or it was canceled): a key of its own per reason, so the
/// look is queued even while the first answer item is still running.
pub fn answer_again(inbox_id: &str, why: &str, now: Timestamp) -> NewWork {
    answer_because(inbox_id, Some(why), now)
}

fn answer_because(inbox_id: &str, why: Option<&str>, now: Timestamp) -> NewWork {
    let dedupe_key = match why {
        None => format!("{ANSWER}:{inbox_id}"),
        Some(why) => format!("{ANSWER}:{inbox_id}:{why}"),
    };
    NewWork {
        kind: ANSWER.to_owned(),
        lane: super::GATEWAY_LANE.to_owned(),
        subject: Some(inbox_id.to_owned()),
        payload: json!({ "inbox_id": inbox_id }),
        run_after: now,
        max_attempts: 8,
        every: None,
        dedupe_key: Some(dedupe_key),
    }
}

/// Tells the peer that a delivered task is canceled, retried with the
/// lane's backoff until it acknowledges; dead-lettered (visible on `/ops`
/// as unreachable) after the last try.
pub fn cancel(outbox_id: &str, now: Timestamp) -> NewWork {
    NewWork {
        kind: CANCEL.to_owned(),
        lane: super::GATEWAY_LANE.to_owned(),
        subject: Some(outbox_id.to_owned()),
        payload: json!({ "outbox_id": outbox_id }),
        run_after: now,
        max_attempts: RELAY_ATTEMPTS,
        every: None,
        dedupe_key: Some(format!("{CANCEL}:{outbox_id}")),
    }
}
