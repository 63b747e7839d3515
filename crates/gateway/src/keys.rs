//! Ed25519 keys: a group's signing key (the private half never leaves this
//! value) and the public keys a receiver has pinned for its peers, each
//! with the time it may be used in.

use crate::envelope::JwsSignature;
use crate::jws::ToSign;
use crate::names::KeyRef;
use chrono::{DateTime, Utc};
use rand::RngCore;
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use std::collections::HashMap;

/// A key that could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an Ed25519 key could not be made from these 32 bytes")]
pub struct KeyError;

/// One version of a group's signing key.
pub struct SigningKey {
    key: KeyRef,
    pair: Ed25519KeyPair,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the private half.
        f.debug_struct("SigningKey")
            .field("key", &self.key)
            .finish()
    }
}

impl SigningKey {
    /// A fresh key from the operating system's random source.
    ///
    /// # Errors
    /// [`KeyError`] if the platform cannot make Ed25519 keys.
    pub fn generate(key: KeyRef) -> Result<Self, KeyError> {
        let mut seed = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut seed);
        Self::from_seed(key, &seed)
    }

    /// The key whose RFC 8032 private key is `seed`.
    ///
    /// # Errors
    /// [`KeyError`] if the platform cannot make Ed25519 keys.
    pub fn from_seed(key: KeyRef, seed: &[u8; 32]) -> Result<Self, KeyError> {
        let pair = Ed25519KeyPair::from_seed_unchecked(seed).map_err(|_| KeyError)?;
        Ok(Self { key, pair })
    }

    pub fn key_ref(&self) -> &KeyRef {
        &self.key
    }

    /// The public half, to pin at peers.
    pub fn public_key(&self) -> [u8; 32] {
        let mut public = [0u8; 32];
        public.copy_from_slice(self.pair.public_key().as_ref());
        public
    }

    /// A raw Ed25519 signature over `message`.
    #[must_use]
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        self.pair.sign(message).as_ref().to_vec()
    }

    /// `to_sign` signed with this key (the caller checked it is the key
    /// its header names).
    pub(crate) fn sign_detached(&self, to_sign: ToSign) -> JwsSignature {
        let signature = self.sign(to_sign.message());
        to_sign.detached(&signature)
    }
}

/// A peer's public key as an admin pinned it, and when it may be used:
/// from `valid_from` (envelopes created earlier are refused) until
/// `usable_until` (its retirement plus the rotation overlap; None while it
/// is current).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedKey {
    pub public_key: [u8; 32],
    pub valid_from: DateTime<Utc>,
    pub usable_until: Option<DateTime<Utc>>,
}

impl PinnedKey {
    /// Why this key may not verify an envelope created at `created`,
    /// checked at `now`; None when it may.
    pub(crate) fn unusable(&self, created: DateTime<Utc>, now: DateTime<Utc>) -> Option<String> {
        if created < self.valid_from {
            return Some(format!(
                "the envelope was created at {} before the key was valid (from {})",
                created.to_rfc3339(),
                self.valid_from.to_rfc3339()
            ));
        }
        match self.usable_until {
            Some(until) if now > until => Some(format!(
                "the key was retired and its overlap window ended at {}",
                until.to_rfc3339()
            )),
            _ => None,
        }
    }

    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ED25519, &self.public_key)
            .verify(message, signature)
            .is_ok()
    }
}

/// Where a receiver finds the keys it trusts.
pub trait KeyPins {
    fn pinned(&self, key: &KeyRef) -> Option<PinnedKey>;
}

/// Pinned keys held in memory (loaded from the database by the caller).
#[derive(Debug, Clone, Default)]
pub struct PinnedKeys(HashMap<KeyRef, PinnedKey>);

impl PinnedKeys {
    pub fn pin(&mut self, key: KeyRef, pinned: PinnedKey) {
        self.0.insert(key, pinned);
    }
}

impl KeyPins for PinnedKeys {
    fn pinned(&self, key: &KeyRef) -> Option<PinnedKey> {
        self.0.get(key).cloned()
    }
}
