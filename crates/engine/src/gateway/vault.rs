//! This group's signing key in the transit engine of HashiCorp Vault or
//! OpenBao: Vault holds the private half and signs (`vault:vN:`
//! signatures), its key versions are this key's versions, and a rotation is
//! Vault's. A version's retirement is when the next one was made; it still
//! verifies for the overlap after that, as with the embedded broker.
//!
//! Vault is part of the outside world: each signature it returns is checked
//! against the public key it publishes for that version before anything
//! signed with it leaves, and every failure is an error for the caller to
//! retry, never a task sent unsigned.

use super::keys::{KeyBroker, PROBE, verifies};
use super::own_keys::{OwnKeyError, journal_new_version};
use crate::clock::Clock;
use crate::settings::ChangedBy;
use chrono::Duration;
use connectors::vault::{TransitClient, TransitKey, VaultError};
use gateway::key_ring::published;
use gateway::{GroupName, KeyId, KeyRef, PinnedKey, PublicVersion};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use storage::Database;

/// This group's key, kept by Vault's transit engine.
pub struct VaultKeys {
    client: TransitClient,
    db: Database,
    clock: Clock,
    group: GroupName,
    key_id: KeyId,
    overlap: Duration,
    /// Public halves by version: a version's key never changes.
    public: Mutex<HashMap<u32, [u8; 32]>>,
}

fn malformed(why: String) -> OwnKeyError {
    OwnKeyError::Vault(VaultError::Malformed(why))
}

impl VaultKeys {
    /// `key_id` is the transit key's name (see [`super::KeySource::vault`]),
    /// so a peer's pins say where the key lives.
    pub fn new(
        client: TransitClient,
        key_id: KeyId,
        db: Database,
        clock: Clock,
        group: GroupName,
        overlap: Duration,
    ) -> Self {
        Self {
            client,
            key_id,
            db,
            clock,
            group,
            overlap,
            public: Mutex::new(HashMap::new()),
        }
    }

    /// The public halves read so far.
    fn known(&self) -> MutexGuard<'_, HashMap<u32, [u8; 32]>> {
        self.public.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn key_ref(&self, version: u32) -> KeyRef {
        KeyRef {
            group: self.group.clone(),
            key_id: self.key_id.clone(),
            version,
        }
    }

    /// The key's versions as Vault lists them, each retired when the next
    /// was made; the latest version.
    fn versions(&self, key: &TransitKey) -> Result<(Vec<PublicVersion>, u32), OwnKeyError> {
        if key.key_type != "ed25519" {
            return Err(malformed(format!(
                "{} is of type {:?}; the gateway signs with ed25519",
                self.client.describe(),
                key.key_type
            )));
        }
        let mut versions = Vec::with_capacity(key.versions.len());
        for (i, version) in key.versions.iter().enumerate() {
            let public_key: [u8; 32] = version.public_key.as_slice().try_into().map_err(|_| {
                malformed(format!(
                    "the public key of version {} is {} bytes, not 32",
                    version.version,
                    version.public_key.len()
                ))
            })?;
            self.known().insert(version.version, public_key);
            versions.push(PublicVersion {
                key: self.key_ref(version.version),
                public_key,
                created_at: version.created_at,
                retired_at: key.versions.get(i + 1).map(|next| next.created_at),
            });
        }
        Ok((versions, key.latest_version))
    }

    /// The key, made as a first version when Vault has none (journaled as
    /// the embedded broker journals its first version).
    async fn read(&self) -> Result<(Vec<PublicVersion>, u32), OwnKeyError> {
        match self.client.read_key().await {
            Ok(key) => self.versions(&key),
            Err(VaultError::NoKey(_)) => {
                self.client.create_ed25519_key().await?;
                let (versions, latest) = self.versions(&self.client.read_key().await?)?;
                self.journal(&versions, latest, &ChangedBy::system("gateway"))
                    .await?;
                Ok((versions, latest))
            }
            Err(other) => Err(other.into()),
        }
    }

    async fn journal(
        &self,
        versions: &[PublicVersion],
        latest: u32,
        by: &ChangedBy,
    ) -> Result<(), OwnKeyError> {
        let Some(version) = versions.iter().find(|v| v.key.version == latest) else {
            return Ok(());
        };
        let tx = self.db.begin_write().await?;
        journal_new_version(
            &*tx,
            by,
            &version.key,
            &version.public_key,
            self.clock.now(),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn public_key(&self, version: u32) -> Result<[u8; 32], OwnKeyError> {
        if let Some(key) = self.known().get(&version) {
            return Ok(*key);
        }
        self.read().await?;
        self.known()
            .get(&version)
            .copied()
            .ok_or_else(|| malformed(format!("Vault lists no version {version} of the key")))
    }
}

#[async_trait::async_trait]
impl KeyBroker for VaultKeys {
    async fn current(&self) -> Result<KeyRef, OwnKeyError> {
        let (_, latest) = self.read().await?;
        Ok(self.key_ref(latest))
    }

    async fn sign(&self, key: &KeyRef, message: &[u8]) -> Result<Vec<u8>, OwnKeyError> {
        if key.group != self.group || key.key_id != self.key_id {
            return Err(OwnKeyError::Broker(gateway::BrokerError::NoSuchVersion(
                key.to_string(),
            )));
        }
        let public_key = self.public_key(key.version).await?;
        let signature = self.client.sign(key.version, message).await?;
        if !verifies(&public_key, message, &signature) {
            return Err(OwnKeyError::BadSignature(key.to_string()));
        }
        Ok(signature)
    }

    async fn published(&self) -> Result<Vec<(KeyRef, PinnedKey)>, OwnKeyError> {
        let (versions, _) = self.read().await?;
        Ok(published(versions, self.overlap, self.clock.now()))
    }

    async fn rotate(&self, by: &ChangedBy) -> Result<KeyRef, OwnKeyError> {
        self.read().await?;
        self.client.rotate().await?;
        let (versions, latest) = self.versions(&self.client.read_key().await?)?;
        self.journal(&versions, latest, by).await?;
        Ok(self.key_ref(latest))
    }

    fn overlap(&self) -> Duration {
        self.overlap
    }

    async fn check(&self) -> Result<String, OwnKeyError> {
        let key = self.current().await?;
        let signature = self.sign(&key, PROBE).await?;
        if !self.client.verify(key.version, PROBE, &signature).await? {
            return Err(OwnKeyError::BadSignature(key.to_string()));
        }
        Ok(format!(
            "{}: {key} signs, the signature verifies with its published public key, and Vault \
             verifies it too",
            self.client.describe()
        ))
    }
}
