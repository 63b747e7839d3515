//! Verifying every signature of a chain, from the envelope received down to
//! the root it embeds: each with a pinned key of the group that sent it,
//! usable for that envelope at this moment.

use crate::envelope::{ENVELOPE_VERSION, JwsSignature, SignedEnvelope, TaskEnvelope};
use crate::jws;
use crate::keys::KeyPins;
use crate::refusal::Refusal;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// More nesting than any depth limit allows is refused before any
/// signature is checked, so a hostile chain costs little.
pub const MAX_NESTING: usize = 32;

/// Verifies the signed envelope `raw` (JSON as received) and every parent
/// it embeds; returns it typed.
///
/// # Errors
/// [`Refusal::Malformed`], [`Refusal::UnsupportedVersion`],
/// [`Refusal::UnknownKey`], [`Refusal::KeyNotUsable`],
/// [`Refusal::SignerMismatch`] or [`Refusal::BadSignature`] for the first
/// envelope of the chain (from the one received towards the root) that
/// fails.
pub fn verify_signatures(
    raw: &Value,
    pins: &impl KeyPins,
    now: DateTime<Utc>,
) -> Result<SignedEnvelope, Refusal> {
    let nesting = nesting(raw);
    if nesting > MAX_NESTING {
        return Err(Refusal::Malformed(format!(
            "the chain nests {nesting} envelopes; at most {MAX_NESTING} are read"
        )));
    }
    let signed: SignedEnvelope = serde_json::from_value(integral_numbers(raw.clone()))
        .map_err(|e| Refusal::Malformed(format!("not a signed task envelope: {e}")))?;
    let mut level = raw;
    for envelope in signed.chain().into_iter().rev() {
        let envelope_json = &level["envelope"];
        let signature: JwsSignature = serde_json::from_value(level["signature"].clone())
            .map_err(|e| Refusal::Malformed(format!("not a signature: {e}")))?;
        verify_one(envelope, envelope_json, &signature, pins, now)?;
        level = &envelope_json["parent"];
    }
    Ok(signed)
}

/// The largest integer a double holds exactly (2^53 - 1).
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_991.0;

/// RFC 8785 reads every number as an IEEE 754 double, and A2A SDKs that
/// carry metadata in protobuf's `Struct` send the 4 they were given as 4.0.
/// Both have the same canonical form, so the signature holds; for reading
/// the envelope into our types, an integral number within a double's exact
/// range is the integer it stands for.
pub(crate) fn integral_numbers(value: Value) -> Value {
    match value {
        Value::Number(number) => match number.as_f64() {
            Some(f) if number.is_f64() && f.fract() == 0.0 && f.abs() <= MAX_EXACT_INTEGER => {
                // Exact: |f| ≤ 2^53 - 1 and integral.
                #[allow(clippy::cast_possible_truncation)]
                Value::from(f as i64)
            }
            _ => Value::Number(number),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(integral_numbers).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| (key, integral_numbers(value)))
                .collect(),
        ),
        other => other,
    }
}

/// How many signed envelopes `raw` nests, counted without parsing them.
fn nesting(raw: &Value) -> usize {
    let mut count = 0;
    let mut level = raw;
    while level.is_object() {
        count += 1;
        if count > MAX_NESTING {
            break;
        }
        level = &level["envelope"]["parent"];
    }
    count
}

fn verify_one(
    envelope: &TaskEnvelope,
    envelope_json: &Value,
    signature: &JwsSignature,
    pins: &impl KeyPins,
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    if envelope.v != ENVELOPE_VERSION {
        return Err(Refusal::UnsupportedVersion(envelope.v));
    }
    let bad = |why: String| Refusal::BadSignature {
        task_key: envelope.task_key.clone(),
        why,
    };
    let header = jws::header(signature, jws::SIGNATURE_TYPE).map_err(bad)?;
    let signer = envelope.signer.to_string();
    if header.kid != signer || envelope.signer.group != envelope.from {
        return Err(Refusal::SignerMismatch {
            task_key: envelope.task_key.clone(),
            signer: header.kid,
            from: envelope.from.clone(),
        });
    }
    let key = pins
        .pinned(&envelope.signer)
        .ok_or_else(|| Refusal::UnknownKey(envelope.signer.clone()))?;
    if let Some(why) = key.unusable(envelope.created, now) {
        return Err(Refusal::KeyNotUsable {
            key: envelope.signer.clone(),
            why,
        });
    }
    jws::verify(envelope_json, signature, &key).map_err(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_a_protobuf_struct_turned_into_doubles_read_back_as_the_integers_they_were() {
        let read = integral_numbers(
            json!({ "depth": 1.0, "budget": { "tokens": 8000.0 }, "x": [2.0, 2.5] }),
        );
        assert_eq!(
            read,
            json!({ "depth": 1, "budget": { "tokens": 8000 }, "x": [2, 2.5] })
        );
        assert!(read["depth"].is_u64());
        // Beyond a double's exact range a number is left as it is (and then
        // fails to read as an integer field).
        assert!(integral_numbers(json!(1.0e300)).is_f64());
    }
}
