//! A signed agent card (A2A 1.0 `AgentCard.signatures`): JWS over the RFC
//! 8785 form of the card without its `signatures`, one signature per key
//! version the group publishes (the current one and those retired within
//! the overlap). A peer's admin pins keys from it:
//!
//! - on first contact nothing on the card is trusted by itself: the card
//!   only proves that whoever serves it holds the keys it lists, and the
//!   admin confirms the current key's fingerprint out of band;
//! - once a version is pinned, a card it signed vouches for the versions
//!   next to it, so a rotation is learned from the card without a call.

use crate::envelope::{EXTENSION, JwsSignature};
use crate::jws::{self, Header};
use crate::keys::{PinnedKey, SigningKey};
use crate::names::{GroupName, KeyRef};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

/// The `typ` of a card signature, as A2A's examples write it.
pub const CARD_SIGNATURE_TYPE: &str = "JOSE";

/// `card` without its signatures, and what each of `keys` signs for it.
#[must_use]
pub fn card_to_sign(card: &Value, keys: &[KeyRef]) -> (Value, Vec<jws::ToSign>) {
    let mut unsigned = card.clone();
    if let Some(fields) = unsigned.as_object_mut() {
        fields.remove("signatures");
    }
    let to_sign = keys
        .iter()
        .map(|key| jws::to_sign_json(&unsigned, key, CARD_SIGNATURE_TYPE))
        .collect();
    (unsigned, to_sign)
}

/// The unsigned card with its `signatures`.
#[must_use]
pub fn with_signatures(unsigned: Value, signatures: Vec<JwsSignature>) -> Value {
    let mut signed = unsigned;
    signed["signatures"] = json!(signatures);
    signed
}

/// `card` with `signatures`, one per key in `keys`.
#[must_use]
pub fn sign_card(card: &Value, keys: &[SigningKey]) -> Value {
    let refs: Vec<KeyRef> = keys.iter().map(|key| key.key_ref().clone()).collect();
    let (unsigned, to_sign) = card_to_sign(card, &refs);
    let signatures = keys
        .iter()
        .zip(to_sign)
        .map(|(key, to_sign)| key.sign_detached(to_sign))
        .collect();
    with_signatures(unsigned, signatures)
}

/// SHA-256 of a public key, lowercase hex in groups of four: what two
/// admins read to each other before the first pin.
#[must_use]
pub fn fingerprint(public_key: &[u8; 32]) -> String {
    let hex = domain::digest::sha256_hex(public_key);
    hex.as_bytes()
        .chunks(4)
        .map(|chunk| String::from_utf8_lossy(chunk).into_owned())
        .collect::<Vec<_>>()
        .join(":")
}

/// What a card says, once its signatures checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardKeys {
    /// Every key version the card lists, newest last.
    pub keys: Vec<(KeyRef, PinnedKey)>,
    /// The versions whose signature over the card verified (every version
    /// listed: a card with a missing or bad signature is not read).
    pub signed_by: Vec<KeyRef>,
}

impl CardKeys {
    /// The version the group signs with now (the newest not retired).
    #[must_use]
    pub fn current(&self) -> Option<&(KeyRef, PinnedKey)> {
        self.keys
            .iter()
            .filter(|(_, pinned)| pinned.usable_until.is_none())
            .max_by_key(|(key, _)| key.version)
    }
}

fn listed_key(entry: &Value, group: &GroupName) -> Result<(KeyRef, PinnedKey), String> {
    let kid = entry["kid"].as_str().ok_or("a listed key has no kid")?;
    let key = KeyRef::from_kid(kid)
        .ok_or_else(|| format!("listed key {kid:?} is not group/key_id/vN"))?;
    if &key.group != group {
        return Err(format!(
            "the card lists {kid}, a key of another group than {group}"
        ));
    }
    if entry["alg"] != "EdDSA" {
        return Err(format!("{kid} is not an EdDSA key"));
    }
    let bytes = entry["publicKey"]
        .as_str()
        .and_then(|text| URL_SAFE_NO_PAD.decode(text).ok())
        .ok_or_else(|| format!("{kid} has no base64url publicKey"))?;
    let public_key: [u8; 32] = bytes
        .try_into()
        .map_err(|_| format!("{kid} is not a 32-byte Ed25519 key"))?;
    let time = |field: &str| -> Result<Option<DateTime<Utc>>, String> {
        match &entry[field] {
            Value::Null => Ok(None),
            Value::String(at) => DateTime::parse_from_rfc3339(at)
                .map(|at| Some(at.to_utc()))
                .map_err(|e| format!("{kid}'s {field} is not an RFC 3339 time: {e}")),
            _ => Err(format!("{kid}'s {field} is not a time")),
        }
    };
    let valid_from = time("validFrom")?.ok_or_else(|| format!("{kid} has no validFrom"))?;
    Ok((
        key,
        PinnedKey {
            public_key,
            valid_from,
            usable_until: time("usableUntil")?,
        },
    ))
}

/// Reads the keys `group`'s card lists and checks that each listed version
/// signed the card as served (`card`, the JSON as received).
///
/// # Errors
/// A sentence saying what is wrong: no keys, a key of another group, a
/// version that did not sign, a signature that does not verify.
pub fn read_card(card: &Value, group: &GroupName) -> Result<CardKeys, String> {
    let extension = card["capabilities"]["extensions"]
        .as_array()
        .and_then(|all| all.iter().find(|e| e["uri"] == EXTENSION))
        .ok_or("the card does not declare the signed-task extension")?;
    let keys = extension["params"]["keys"]
        .as_array()
        .filter(|keys| !keys.is_empty())
        .ok_or("the card lists no keys")?
        .iter()
        .map(|entry| listed_key(entry, group))
        .collect::<Result<Vec<_>, _>>()?;
    let signatures: Vec<JwsSignature> = serde_json::from_value(card["signatures"].clone())
        .map_err(|_| "the card is not signed (no signatures)".to_owned())?;
    let mut unsigned = card.clone();
    if let Some(fields) = unsigned.as_object_mut() {
        fields.remove("signatures");
    }
    let mut signed_by = Vec::new();
    for signature in &signatures {
        let Header { kid, .. } = jws::header(signature, CARD_SIGNATURE_TYPE)?;
        let (key, pinned) = keys
            .iter()
            .find(|(key, _)| key.to_string() == kid)
            .ok_or_else(|| format!("the card is signed by {kid}, which it does not list"))?;
        jws::verify(&unsigned, signature, pinned)
            .map_err(|_| format!("the card's signature by {kid} does not verify"))?;
        signed_by.push(key.clone());
    }
    if let Some((unsigned_key, _)) = keys.iter().find(|(key, _)| !signed_by.contains(key)) {
        return Err(format!(
            "{unsigned_key} is listed but did not sign the card"
        ));
    }
    Ok(CardKeys { keys, signed_by })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::KeyId;

    fn key(version: u32, seed: u8) -> SigningKey {
        let key = KeyRef {
            group: GroupName::parse("returns").unwrap(),
            key_id: KeyId::parse("gateway").unwrap(),
            version,
        };
        SigningKey::from_seed(key, &[seed; 32]).unwrap()
    }

    fn card(keys: &[&SigningKey]) -> Value {
        let listed: Vec<Value> = keys
            .iter()
            .enumerate()
            .map(|(n, key)| {
                json!({
                    "kid": key.key_ref().to_string(),
                    "alg": "EdDSA",
                    "publicKey": URL_SAFE_NO_PAD.encode(key.public_key()),
                    "validFrom": "2026-12-01T00:00:00Z",
                    "usableUntil": if n + 1 < keys.len() { json!("2026-12-03T00:00:00Z") } else { Value::Null },
                })
            })
            .collect();
        json!({
            "name": "Countersign returns",
            "capabilities": { "extensions": [{ "uri": EXTENSION, "params": { "keys": listed } }] },
        })
    }

    fn returns() -> GroupName {
        GroupName::parse("returns").unwrap()
    }

    #[test]
    fn a_card_signed_by_every_key_it_lists_is_read_with_its_current_key() {
        let (v1, v2) = (key(1, 1), key(2, 2));
        let signed = sign_card(&card(&[&v1, &v2]), &[key(1, 1), key(2, 2)]);
        let read = read_card(&signed, &returns()).unwrap();
        assert_eq!(read.signed_by, [v1.key_ref().clone(), v2.key_ref().clone()]);
        assert_eq!(read.current().unwrap().0, *v2.key_ref());
        assert_eq!(read.current().unwrap().1.public_key, v2.public_key());
    }

    #[test]
    fn a_card_changed_after_signing_or_listing_a_key_that_did_not_sign_is_not_read() {
        let (v1, v2) = (key(1, 1), key(2, 2));
        let mut changed = sign_card(&card(&[&v1]), &[key(1, 1)]);
        changed["name"] = json!("Countersign impostor");
        assert!(
            read_card(&changed, &returns())
                .unwrap_err()
                .contains("does not verify")
        );
        // A stranger's key slipped into the list, signed by the real one only.
        let swapped = sign_card(&card(&[&v1, &v2]), &[key(1, 1)]);
        assert!(
            read_card(&swapped, &returns())
                .unwrap_err()
                .contains("returns/gateway/v2 is listed but did not sign")
        );
        let unsigned = card(&[&v1]);
        assert!(
            read_card(&unsigned, &returns())
                .unwrap_err()
                .contains("not signed")
        );
        let other_group = GroupName::parse("billing").unwrap();
        let signed = sign_card(&card(&[&v1]), &[key(1, 1)]);
        assert!(
            read_card(&signed, &other_group)
                .unwrap_err()
                .contains("another group")
        );
    }

    #[test]
    fn a_fingerprint_is_the_keys_sha256_in_groups_of_four_hex_digits() {
        let print = fingerprint(&[0u8; 32]);
        assert_eq!(print.len(), 64 + 15);
        // SHA-256 of 32 zero bytes is 66687aadf862bd77…
        assert!(print.starts_with("6668:7aad:f862:bd77:"), "{print}");
        assert_eq!(print, fingerprint(&[0u8; 32]));
        assert_ne!(print, fingerprint(&[1u8; 32]));
    }
}
