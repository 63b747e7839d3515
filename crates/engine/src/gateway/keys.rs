//! This group's signing key behind a secrets broker: whoever holds the
//! private half (the embedded broker, sealed in the database under the
//! master key; or Vault's transit engine, which never hands it out) only
//! ever signs bytes prepared here. Envelopes, answers, peer tokens and the
//! agent card are all signed through [`Keys`].

use super::own_keys::OwnKeyError;
use crate::settings::ChangedBy;
use gateway::{JwsSignature, KeyRef, PinnedKey, ToSign};
use serde_json::Value;
use std::sync::Arc;

/// A secrets broker holding one group's signing key and its versions.
#[async_trait::async_trait]
pub trait KeyBroker: Send + Sync {
    /// The version new signatures are made with (a first version is made
    /// when there is none yet, where the broker may make one).
    async fn current(&self) -> Result<KeyRef, OwnKeyError>;

    /// A raw Ed25519 signature by version `key` over `message`.
    async fn sign(&self, key: &KeyRef, message: &[u8]) -> Result<Vec<u8>, OwnKeyError>;

    /// The versions peers may pin now, with the time each may be used in.
    async fn published(&self) -> Result<Vec<(KeyRef, PinnedKey)>, OwnKeyError>;

    /// Adds a version and retires the current one (it verifies for the
    /// overlap). Returns the new current version.
    async fn rotate(&self, by: &ChangedBy) -> Result<KeyRef, OwnKeyError>;

    /// Signs a probe with the current version and checks it the way a peer
    /// would (and, where the broker verifies, the way it does): a sentence
    /// for people saying where the key is and that it signs.
    async fn check(&self) -> Result<String, OwnKeyError>;

    /// How long a retired version still verifies after a rotation.
    fn overlap(&self) -> chrono::Duration;
}

/// This group's key, whichever broker holds it.
#[derive(Clone)]
pub struct Keys(Arc<dyn KeyBroker>);

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys")
    }
}

impl Keys {
    pub fn new(broker: impl KeyBroker + 'static) -> Self {
        Self(Arc::new(broker))
    }

    /// # Errors
    /// As the broker answers.
    pub async fn current(&self) -> Result<KeyRef, OwnKeyError> {
        self.0.current().await
    }

    /// The detached JWS once the key `to_sign` names has signed it.
    ///
    /// # Errors
    /// As the broker answers.
    pub async fn detached(&self, to_sign: ToSign) -> Result<JwsSignature, OwnKeyError> {
        let signature = self.0.sign(to_sign.key(), to_sign.message()).await?;
        Ok(to_sign.detached(&signature))
    }

    /// The compact JWS (a token) once the key `to_sign` names has signed it.
    ///
    /// # Errors
    /// As the broker answers.
    pub async fn compact(&self, to_sign: ToSign) -> Result<String, OwnKeyError> {
        let signature = self.0.sign(to_sign.key(), to_sign.message()).await?;
        Ok(to_sign.compact(&signature))
    }

    /// `card` signed by every version peers may pin now (so a peer that
    /// pinned one learns the rest from it).
    ///
    /// # Errors
    /// As the broker answers.
    pub async fn sign_card(&self, card: &Value) -> Result<Value, OwnKeyError> {
        let keys: Vec<KeyRef> = self
            .published()
            .await?
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        let (unsigned, to_sign) = gateway::card::card_to_sign(card, &keys);
        let mut signatures = Vec::with_capacity(to_sign.len());
        for one in to_sign {
            signatures.push(self.detached(one).await?);
        }
        Ok(gateway::card::with_signatures(unsigned, signatures))
    }

    /// # Errors
    /// As the broker answers.
    pub async fn published(&self) -> Result<Vec<(KeyRef, PinnedKey)>, OwnKeyError> {
        self.0.published().await
    }

    /// # Errors
    /// As the broker answers.
    pub async fn rotate(&self, by: &ChangedBy) -> Result<KeyRef, OwnKeyError> {
        self.0.rotate(by).await
    }

    /// What a person who rotated the key is told: the version that signs
    /// now and how long the one before still verifies.
    #[must_use]
    pub fn rotated_in_words(&self, key: &KeyRef) -> String {
        format!(
            "signing with {key} now; the previous version verifies for {} hours",
            self.0.overlap().num_hours()
        )
    }

    /// # Errors
    /// As the broker answers.
    pub async fn check(&self) -> Result<String, OwnKeyError> {
        self.0.check().await
    }
}

/// Whether `signature` over `message` verifies with `public_key`: how a
/// broker's answer is checked before anything signed with it leaves.
pub(super) fn verifies(public_key: &[u8; 32], message: &[u8], signature: &[u8]) -> bool {
    ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, public_key)
        .verify(message, signature)
        .is_ok()
}

/// The probe a broker check signs.
pub(super) const PROBE: &[u8] = b"countersign gateway key check";
