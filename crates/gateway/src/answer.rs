//! A signed answer: the group that answers a task signs what it answered
//! (the task's key, who asked, the state, the result), so the asking group
//! can show its people evidence that verifiably came from that group, not
//! from whatever stood between them. Same JWS scheme as the envelope
//! ([`crate::jws`]), with its own `typ`, so an answer's signature can never
//! pass for a task's or the other way round.

use crate::budget::Spent;
use crate::envelope::JwsSignature;
use crate::jws::{self, ANSWER_SIGNATURE_TYPE};
use crate::keys::{KeyPins, SigningKey};
use crate::names::{GroupName, KeyRef, TaskKey};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The answer format this build writes and reads.
pub const ANSWER_VERSION: u32 = 1;

/// What a group answered to one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskAnswer {
    pub v: u32,
    pub task_key: TaskKey,
    /// The group that sent the task: the answer is for it.
    pub to: GroupName,
    /// The group answering; it signs.
    pub from: GroupName,
    /// `completed` (a result) or `failed`.
    pub state: String,
    pub result: Value,
    /// What the task spent here and in the tasks passed on for it; the
    /// asking group charges it to the task's budget.
    pub spent: Spent,
    pub answered_at: DateTime<Utc>,
    pub signer: KeyRef,
}

/// An answer with its detached signature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedAnswer {
    pub answer: TaskAnswer,
    pub signature: JwsSignature,
}

/// What the answer's signer (the key it names) signs.
#[must_use]
pub fn to_sign(answer: &TaskAnswer) -> jws::ToSign {
    let json = serde_json::to_value(answer).unwrap_or_default();
    jws::to_sign_json(&json, &answer.signer, ANSWER_SIGNATURE_TYPE)
}

/// Signs `answer` with `key`, which must be the key it names.
///
/// # Errors
/// [`jws::SignError`] when `key` is not the answer's signer.
pub fn sign(answer: TaskAnswer, key: &SigningKey) -> Result<SignedAnswer, jws::SignError> {
    jws::check_signer(&answer.signer, key)?;
    Ok(SignedAnswer {
        signature: key.sign_detached(to_sign(&answer)),
        answer,
    })
}

/// What the asking group expects of an answer.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub task_key: &'a TaskKey,
    /// The group the task was sent to.
    pub from: &'a GroupName,
    /// This group.
    pub to: &'a GroupName,
}

/// Verifies a signed answer as received (`raw`): it is for this task and
/// this group, from the group the task went to, signed by a key of that
/// group pinned here and usable when it answered.
///
/// # Errors
/// A sentence saying why the answer is not taken.
pub fn verify(
    raw: &Value,
    expected: Expected<'_>,
    pins: &impl KeyPins,
    now: DateTime<Utc>,
) -> Result<SignedAnswer, String> {
    // As for envelopes: an integral 4.0 from a protobuf-based SDK is 4.
    let signed: SignedAnswer = serde_json::from_value(crate::chain::integral_numbers(raw.clone()))
        .map_err(|e| format!("the signed answer is malformed: {e}"))?;
    let answer = &signed.answer;
    if answer.v != ANSWER_VERSION {
        return Err(format!("answer version {} is not supported", answer.v));
    }
    if &answer.task_key != expected.task_key
        || &answer.from != expected.from
        || &answer.to != expected.to
    {
        return Err(format!(
            "the answer is for task {} from {} to {}, not task {} from {} to {}",
            answer.task_key, answer.from, answer.to, expected.task_key, expected.from, expected.to
        ));
    }
    let header = jws::header(&signed.signature, ANSWER_SIGNATURE_TYPE)?;
    if header.kid != answer.signer.to_string() || answer.signer.group != answer.from {
        return Err(format!(
            "the answer is signed by {}, which is not a key of {}",
            header.kid, answer.from
        ));
    }
    let key = pins
        .pinned(&answer.signer)
        .ok_or_else(|| format!("key {} is not pinned here", answer.signer))?;
    if let Some(why) = key.unusable(answer.answered_at, now) {
        return Err(format!("key {} may not be used: {why}", answer.signer));
    }
    jws::verify(&raw["answer"], &signed.signature, &key)?;
    Ok(signed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{PinnedKey, PinnedKeys};
    use crate::names::KeyId;
    use serde_json::json;

    fn group(name: &str) -> GroupName {
        GroupName::parse(name).unwrap()
    }

    fn returns_key() -> SigningKey {
        let key = KeyRef {
            group: group("returns"),
            key_id: KeyId::parse("gateway").unwrap(),
            version: 1,
        };
        SigningKey::from_seed(key, &[3u8; 32]).unwrap()
    }

    fn answer(key: &SigningKey) -> TaskAnswer {
        TaskAnswer {
            v: ANSWER_VERSION,
            task_key: TaskKey::parse("task_1").unwrap(),
            to: group("support"),
            from: group("returns"),
            state: "completed".to_owned(),
            result: json!({ "condition": "sealed" }),
            spent: Spent::one_step(),
            answered_at: Utc::now(),
            signer: key.key_ref().clone(),
        }
    }

    fn pins(key: &SigningKey) -> PinnedKeys {
        let mut pins = PinnedKeys::default();
        pins.pin(
            key.key_ref().clone(),
            PinnedKey {
                public_key: key.public_key(),
                valid_from: Utc::now() - chrono::Duration::days(1),
                usable_until: None,
            },
        );
        pins
    }

    #[test]
    fn an_answer_changed_on_the_way_or_meant_for_another_task_is_not_taken() {
        let key = returns_key();
        let signed = sign(answer(&key), &key).unwrap();
        let raw = serde_json::to_value(&signed).unwrap();
        let task_key = TaskKey::parse("task_1").unwrap();
        let (from, to) = (group("returns"), group("support"));
        let expected = Expected {
            task_key: &task_key,
            from: &from,
            to: &to,
        };
        let pins = pins(&key);
        assert_eq!(verify(&raw, expected, &pins, Utc::now()).unwrap(), signed);

        let mut changed = raw.clone();
        changed["answer"]["result"]["condition"] = json!("opened");
        assert!(verify(&changed, expected, &pins, Utc::now()).is_err());
        // Spending reported lower than signed is a change like any other.
        let mut cheaper = raw.clone();
        cheaper["answer"]["spent"]["steps"] = json!(0);
        assert!(verify(&cheaper, expected, &pins, Utc::now()).is_err());

        let other_task = TaskKey::parse("task_2").unwrap();
        let elsewhere = Expected {
            task_key: &other_task,
            ..expected
        };
        assert!(verify(&raw, elsewhere, &pins, Utc::now()).is_err());
        assert!(verify(&raw, expected, &PinnedKeys::default(), Utc::now()).is_err());
    }

    #[test]
    fn a_task_signature_cannot_pass_for_an_answer() {
        let key = returns_key();
        let signed = sign(answer(&key), &key).unwrap();
        let mut raw = serde_json::to_value(&signed).unwrap();
        let as_task = jws::sign_json(&raw["answer"], &key, jws::SIGNATURE_TYPE);
        raw["signature"] = serde_json::to_value(as_task).unwrap();
        let task_key = TaskKey::parse("task_1").unwrap();
        let (from, to) = (group("returns"), group("support"));
        let expected = Expected {
            task_key: &task_key,
            from: &from,
            to: &to,
        };
        let refused = verify(&raw, expected, &pins(&key), Utc::now()).unwrap_err();
        assert!(refused.contains("typ"), "{refused}");
    }
}
