//! Signing an envelope and verifying one signature: JWS (RFC 7515) with
//! EdDSA (RFC 8037) over the RFC 8785 canonical form of the envelope,
//! detached (the envelope travels once, next to its signature).
//!
//! Why this and not HTTP message signatures (RFC 9421): the signature
//! belongs to the task, not to one HTTP request. A re-delegated task embeds
//! its parent with the parent's signature, and a receiver two hops away
//! must verify it long after the request that carried it is gone. It is also
//! the scheme A2A uses for agent cards, so one verifier serves both.
//!
//! What is verified is the canonical form of the JSON as received, not of
//! a re-serialisation of our types: a peer written in another language may
//! spell a timestamp differently and still sign correctly.

use crate::envelope::{JwsSignature, SignedEnvelope, TaskEnvelope};
use crate::keys::{PinnedKey, SigningKey};
use crate::names::KeyRef;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

/// The `typ` of a task envelope's signature.
pub const SIGNATURE_TYPE: &str = "countersign-task+jws";
/// The `typ` of a signed answer's signature (see [`crate::answer`]).
pub const ANSWER_SIGNATURE_TYPE: &str = "countersign-answer+jws";

/// The protected header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Header {
    pub alg: String,
    pub kid: String,
    pub typ: String,
}

fn canonical<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    // Serialising our own types and JSON values cannot fail: no map has
    // non-string keys and no float is NaN.
    serde_jcs::to_vec(value).unwrap_or_default()
}

fn signing_input(protected: &str, envelope_json: &serde_json::Value) -> String {
    format!(
        "{protected}.{}",
        URL_SAFE_NO_PAD.encode(canonical(envelope_json))
    )
}

/// What a signature is made over, before any key signs it. The protected
/// header already names the key, so whoever holds that key (this process,
/// or a broker such as Vault transit that never hands it out) signs only
/// these bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToSign {
    key: KeyRef,
    protected: String,
    /// `protected.payload`, base64url both.
    input: String,
}

impl ToSign {
    /// The key the header names: the one that must sign.
    pub fn key(&self) -> &KeyRef {
        &self.key
    }

    /// The JWS signing input.
    pub fn message(&self) -> &[u8] {
        self.input.as_bytes()
    }

    /// The detached signature, once `signature` is made over
    /// [`ToSign::message`].
    #[must_use]
    pub fn detached(self, signature: &[u8]) -> JwsSignature {
        JwsSignature {
            protected: self.protected,
            signature: URL_SAFE_NO_PAD.encode(signature),
        }
    }

    /// The compact serialisation (`header.payload.signature`).
    #[must_use]
    pub fn compact(self, signature: &[u8]) -> String {
        format!("{}.{}", self.input, URL_SAFE_NO_PAD.encode(signature))
    }

    pub(crate) fn compact_from_parts(key: KeyRef, header: String, payload: &str) -> Self {
        let input = format!("{header}.{payload}");
        Self {
            key,
            protected: header,
            input,
        }
    }
}

/// What `key` signs to make a detached JWS of type `typ` over the canonical
/// form of `json`.
pub(crate) fn to_sign_json(json: &serde_json::Value, key: &KeyRef, typ: &str) -> ToSign {
    let header = Header {
        alg: "EdDSA".to_owned(),
        kid: key.to_string(),
        typ: typ.to_owned(),
    };
    let protected = URL_SAFE_NO_PAD.encode(canonical(&header));
    let input = signing_input(&protected, json);
    ToSign {
        key: key.clone(),
        protected,
        input,
    }
}

/// What the envelope's signer (the key it names) signs.
#[must_use]
pub fn envelope_to_sign(envelope: &TaskEnvelope) -> ToSign {
    let json = serde_json::to_value(envelope).unwrap_or_default();
    to_sign_json(&json, &envelope.signer, SIGNATURE_TYPE)
}

/// Signs `envelope` with `key`, which must be the key the envelope names as
/// its signer.
///
/// # Errors
/// [`SignError`] when `key` is not the envelope's signer.
pub fn sign(envelope: TaskEnvelope, key: &SigningKey) -> Result<SignedEnvelope, SignError> {
    check_signer(&envelope.signer, key)?;
    let to_sign = envelope_to_sign(&envelope);
    Ok(SignedEnvelope {
        signature: key.sign_detached(to_sign),
        envelope,
    })
}

pub(crate) fn check_signer(named: &KeyRef, key: &SigningKey) -> Result<(), SignError> {
    if named != key.key_ref() {
        return Err(SignError {
            named: named.to_string(),
            given: key.key_ref().to_string(),
        });
    }
    Ok(())
}

/// A detached JWS of type `typ` over the canonical form of `json`.
#[cfg(test)]
pub(crate) fn sign_json(json: &serde_json::Value, key: &SigningKey, typ: &str) -> JwsSignature {
    key.sign_detached(to_sign_json(json, key.key_ref(), typ))
}

/// The envelope names another key than the one asked to sign it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the envelope names {named} as its signer but was given {given} to sign with")]
pub struct SignError {
    pub named: String,
    pub given: String,
}

/// SHA-256 (hex) of the canonical form of a signed envelope as received:
/// the same envelope delivered again has the same digest, however its JSON
/// was spaced or ordered on the way.
pub fn envelope_digest(signed_json: &serde_json::Value) -> String {
    domain::digest::sha256_hex(&canonical(signed_json))
}

/// Reads the protected header of a signature of type `typ`.
///
/// # Errors
/// A sentence saying what is wrong with it.
pub(crate) fn header(signature: &JwsSignature, typ: &str) -> Result<Header, String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(&signature.protected)
        .map_err(|_| "the protected header is not base64url".to_owned())?;
    let header: Header = serde_json::from_slice(&bytes)
        .map_err(|e| format!("the protected header is not a task signature header: {e}"))?;
    if header.alg != "EdDSA" {
        return Err(format!(
            "algorithm {:?} is not accepted; only EdDSA",
            header.alg
        ));
    }
    if header.typ != typ {
        return Err(format!("typ {:?} is not {typ:?}", header.typ));
    }
    Ok(header)
}

/// Whether `signature` over `envelope_json` verifies with `key`.
///
/// # Errors
/// A sentence saying why not.
pub(crate) fn verify(
    envelope_json: &serde_json::Value,
    signature: &JwsSignature,
    key: &PinnedKey,
) -> Result<(), String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(&signature.signature)
        .map_err(|_| "the signature is not base64url".to_owned())?;
    if key.verifies(
        signing_input(&signature.protected, envelope_json).as_bytes(),
        &bytes,
    ) {
        Ok(())
    } else {
        Err("the signature does not match the envelope and the pinned key".to_owned())
    }
}
