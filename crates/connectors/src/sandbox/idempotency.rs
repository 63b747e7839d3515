//! Stripe-style idempotency keys: the first request under a key executes and
//! its answer is stored; a resend with the same parameters gets the stored
//! answer; different parameters are refused; a resend while the first is
//! still running is told to wait. Keys are forgotten after the retention
//! window (the ledger is not).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::wire::{ErrorBody, SandboxRefund};

/// The parameters a key is bound to, after normalisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefundParams {
    pub payment_reference: String,
    pub amount_minor: i64,
    /// Upper case.
    pub currency: String,
    pub metadata: BTreeMap<String, String>,
}

/// The stored answer of an executed request, replayed verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoredOutcome {
    /// HTTP 200 with the refund.
    Refunded(SandboxRefund),
    /// HTTP 402 with the decline.
    Declined(ErrorBody),
    /// HTTP 400: the charge cannot take the refund (already refunded, amount
    /// too large, another currency). Stored like a decline because the
    /// request began executing, as Stripe stores such results.
    Refused(ErrorBody),
}

#[derive(Debug)]
enum KeyState {
    InFlight,
    Completed(StoredOutcome),
}

#[derive(Debug)]
struct KeyEntry {
    params: RefundParams,
    first_seen: DateTime<Utc>,
    state: KeyState,
}

/// What to do with a request, decided atomically with marking the key.
#[derive(Debug)]
pub(crate) enum Admission {
    /// New key: now marked in flight; the caller executes and completes it.
    Execute,
    /// Already executed with these parameters: replay this.
    Replay(StoredOutcome),
    /// Another request under this key is still running.
    InFlight,
    /// The key is bound to different parameters.
    Conflict { message: String },
}

#[derive(Debug, Default)]
pub(crate) struct KeyStore {
    entries: HashMap<String, KeyEntry>,
    /// Keys in the order first seen, so expiry looks only at the oldest
    /// instead of at every key on every request.
    arrivals: VecDeque<(DateTime<Utc>, String)>,
}

impl KeyStore {
    pub(crate) fn admit(
        &mut self,
        key: &str,
        params: &RefundParams,
        now: DateTime<Utc>,
        retention: Duration,
    ) -> Admission {
        self.forget_expired(now, retention);
        let Some(entry) = self.entries.get(key) else {
            self.entries.insert(
                key.to_owned(),
                KeyEntry {
                    params: params.clone(),
                    first_seen: now,
                    state: KeyState::InFlight,
                },
            );
            self.arrivals.push_back((now, key.to_owned()));
            return Admission::Execute;
        };
        if entry.params != *params {
            return Admission::Conflict {
                message: conflict_message(key, &entry.params, params),
            };
        }
        match &entry.state {
            KeyState::InFlight => Admission::InFlight,
            KeyState::Completed(outcome) => Admission::Replay(outcome.clone()),
        }
    }

    /// Store the answer of the request admitted with [`Admission::Execute`].
    pub(crate) fn complete(&mut self, key: &str, outcome: StoredOutcome) {
        if let Some(entry) = self.entries.get_mut(key) {
            entry.state = KeyState::Completed(outcome);
        }
    }

    /// Release a key whose execution was abandoned before it completed.
    pub(crate) fn abandon(&mut self, key: &str) {
        if self
            .entries
            .get(key)
            .is_some_and(|entry| matches!(entry.state, KeyState::InFlight))
        {
            self.entries.remove(key);
        }
    }

    /// Drop completed keys older than the retention window. In-flight keys
    /// stay until their request ends.
    fn forget_expired(&mut self, now: DateTime<Utc>, retention: Duration) {
        // Each arrival is looked at once per call at most; a key still in
        // flight goes to the back and is looked at again on a later call.
        for _ in 0..self.arrivals.len() {
            let Some((first_seen, key)) = self.arrivals.front() else {
                break;
            };
            let age = (now - *first_seen).to_std().unwrap_or_default();
            if age < retention {
                break;
            }
            let Some(entry) = self.entries.get(key) else {
                // Abandoned and forgotten already.
                self.arrivals.pop_front();
                continue;
            };
            if matches!(entry.state, KeyState::InFlight) {
                if let Some(arrival) = self.arrivals.pop_front() {
                    self.arrivals.push_back(arrival);
                }
            } else if entry.first_seen == *first_seen {
                self.entries.remove(key);
                self.arrivals.pop_front();
            } else {
                // Abandoned, then admitted again later: that later arrival
                // is queued on its own.
                self.arrivals.pop_front();
            }
        }
    }
}

fn conflict_message(key: &str, stored: &RefundParams, sent: &RefundParams) -> String {
    let mut differences = Vec::new();
    if stored.payment_reference != sent.payment_reference {
        differences.push("payment_reference");
    }
    if stored.amount_minor != sent.amount_minor {
        differences.push("amount_minor");
    }
    if stored.currency != sent.currency {
        differences.push("currency");
    }
    if stored.metadata != sent.metadata {
        differences.push("metadata");
    }
    format!(
        "Keys for idempotent requests can only be used with the same parameters they were first \
         used with. Key {key:?} was used with different {}.",
        differences.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(amount_minor: i64) -> RefundParams {
        RefundParams {
            payment_reference: "pay_1".to_owned(),
            amount_minor,
            currency: "EUR".to_owned(),
            metadata: BTreeMap::new(),
        }
    }

    fn declined() -> StoredOutcome {
        StoredOutcome::Declined(ErrorBody::new("card_error", "charge_declined", "no"))
    }

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn a_key_moves_from_execute_to_in_flight_to_replay() {
        let mut keys = KeyStore::default();
        let now = Utc::now();
        assert!(matches!(
            keys.admit("k", &params(1), now, DAY),
            Admission::Execute
        ));
        assert!(matches!(
            keys.admit("k", &params(1), now, DAY),
            Admission::InFlight
        ));
        keys.complete("k", declined());
        assert!(matches!(
            keys.admit("k", &params(1), now, DAY),
            Admission::Replay(_)
        ));
        let conflict = keys.admit("k", &params(2), now, DAY);
        assert!(
            matches!(&conflict, Admission::Conflict { message } if message.contains("amount_minor"))
        );
    }

    #[test]
    fn an_abandoned_key_can_execute_again() {
        let mut keys = KeyStore::default();
        let now = Utc::now();
        assert!(matches!(
            keys.admit("k", &params(1), now, DAY),
            Admission::Execute
        ));
        keys.abandon("k");
        assert!(matches!(
            keys.admit("k", &params(1), now, DAY),
            Admission::Execute
        ));
    }

    #[test]
    fn a_completed_key_is_forgotten_after_retention() {
        let mut keys = KeyStore::default();
        let now = Utc::now();
        assert!(matches!(
            keys.admit("k", &params(1), now, DAY),
            Admission::Execute
        ));
        keys.complete("k", declined());
        let later = now + chrono::TimeDelta::days(2);
        assert!(matches!(
            keys.admit("k", &params(2), later, DAY),
            Admission::Execute
        ));
    }

    #[test]
    fn completed_keys_expire_behind_a_key_still_in_flight_and_the_in_flight_key_stays() {
        let mut keys = KeyStore::default();
        let now = Utc::now();
        assert!(matches!(
            keys.admit("slow", &params(1), now, DAY),
            Admission::Execute
        ));
        assert!(matches!(
            keys.admit("done", &params(1), now, DAY),
            Admission::Execute
        ));
        keys.complete("done", declined());
        let later = now + chrono::TimeDelta::days(2);
        // "done" is forgotten: the same key with other parameters executes.
        assert!(matches!(
            keys.admit("done", &params(2), later, DAY),
            Admission::Execute
        ));
        // "slow" is still running however old it is.
        assert!(matches!(
            keys.admit("slow", &params(1), later, DAY),
            Admission::InFlight
        ));
    }

    #[test]
    fn a_key_abandoned_and_admitted_again_expires_from_its_second_arrival() {
        let mut keys = KeyStore::default();
        let now = Utc::now();
        assert!(matches!(
            keys.admit("k", &params(1), now, DAY),
            Admission::Execute
        ));
        keys.abandon("k");
        let second = now + chrono::TimeDelta::hours(20);
        assert!(matches!(
            keys.admit("k", &params(1), second, DAY),
            Admission::Execute
        ));
        keys.complete("k", declined());
        // A day after the first arrival, but not after the second: replayed.
        let check = now + chrono::TimeDelta::hours(30);
        assert!(matches!(
            keys.admit("k", &params(1), check, DAY),
            Admission::Replay(_)
        ));
    }
}
