//! This group's own signing key, kept by the embedded broker (the default):
//! versions sealed under the master key in the database, opened only to
//! sign the bytes they are given.
//! The first version is made when the gateway first needs it; a rotation
//! adds a version and retires the one before, which peers may still verify
//! for the overlap window.

use super::keys::{KeyBroker, PROBE, verifies};
use crate::clock::Clock;
use crate::settings::{ChangedBy, record};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Duration;
use connectors::vault::VaultError;
use domain::{SettingChange, SettingKind};
use gateway::{
    BrokerError, GroupName, KeyId, KeyRef, KeyRing, KeyVersion, MasterKey, PinnedKey, SealedSeed,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use storage::gateway::own_keys::{self, OwnKeyRow};
use storage::{Database, StorageError};

/// Why the group's key could not be read, made or used.
#[derive(Debug, thiserror::Error)]
pub enum OwnKeyError {
    #[error(transparent)]
    Broker(#[from] BrokerError),
    #[error("a stored version of this group's key does not read back: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Vault(#[from] VaultError),
    /// The broker signed, but not with the key it publishes: nothing
    /// signed this way may leave.
    #[error("the key broker's signature by {0} does not verify with that version's public key")]
    BadSignature(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// The key id of the gateway's signing key.
pub const GATEWAY_KEY_ID: &str = "gateway";

/// This group's key, with what opens it.
#[derive(Clone)]
pub struct OwnKeys {
    db: Database,
    clock: Clock,
    group: GroupName,
    master: MasterKey,
    overlap: Duration,
    /// Sealed versions as last read: a version's sealed seed never
    /// changes, so signing with one named a moment ago needs no read.
    sealed: Arc<Mutex<HashMap<KeyRef, KeyVersion>>>,
}

fn corrupt(why: impl Into<String>) -> OwnKeyError {
    OwnKeyError::Corrupt(why.into())
}

fn version_of(row: &OwnKeyRow, group: &GroupName) -> Result<KeyVersion, OwnKeyError> {
    let decode = |text: &str| {
        URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| corrupt(format!("v{} is not base64url", row.version)))
    };
    let key = KeyRef {
        group: group.clone(),
        key_id: KeyId::parse(&row.key_id).map_err(|e| corrupt(e.to_string()))?,
        version: u32::try_from(row.version).map_err(|_| corrupt("a negative version"))?,
    };
    Ok(KeyVersion {
        public_key: decode(&row.public_key)?
            .try_into()
            .map_err(|_| corrupt("a public key of the wrong length"))?,
        sealed: SealedSeed {
            nonce: decode(&row.seal_nonce)?
                .try_into()
                .map_err(|_| corrupt("a seal nonce of the wrong length"))?,
            ciphertext: decode(&row.sealed)?,
        },
        created_at: row.created_at,
        retired_at: row.retired_at,
        key,
    })
}

impl OwnKeys {
    pub fn new(
        db: Database,
        clock: Clock,
        group: GroupName,
        master: MasterKey,
        overlap: Duration,
    ) -> Self {
        Self {
            db,
            clock,
            group,
            master,
            overlap,
            sealed: Arc::default(),
        }
    }

    async fn load(&self) -> Result<KeyRing, OwnKeyError> {
        let rows = own_keys::versions(self.db.conn(), self.group.as_str(), GATEWAY_KEY_ID).await?;
        let versions = rows
            .iter()
            .map(|row| version_of(row, &self.group))
            .collect::<Result<Vec<_>, _>>()?;
        let mut sealed = self.sealed.lock().unwrap_or_else(PoisonError::into_inner);
        for version in &versions {
            sealed.insert(version.key.clone(), version.clone());
        }
        drop(sealed);
        Ok(KeyRing {
            versions,
            overlap: self.overlap,
        })
    }

    /// Writes `version` (the ring's newest) with its journal event; false
    /// when another process wrote that version first.
    async fn store(&self, version: &KeyVersion, by: &ChangedBy) -> Result<bool, OwnKeyError> {
        let encode = |bytes: &[u8]| URL_SAFE_NO_PAD.encode(bytes);
        let tx = self.db.begin_write().await?;
        let written = own_keys::add_version(
            &*tx,
            OwnKeyRow {
                group_name: self.group.to_string(),
                key_id: version.key.key_id.to_string(),
                version: i32::try_from(version.key.version)
                    .map_err(|_| corrupt("version overflow"))?,
                public_key: encode(&version.public_key),
                seal_nonce: encode(&version.sealed.nonce),
                sealed: encode(&version.sealed.ciphertext),
                created_at: version.created_at,
                retired_at: None,
            },
        )
        .await?;
        if !written {
            tx.rollback().await?;
            return Ok(false);
        }
        journal_new_version(
            &*tx,
            by,
            &version.key,
            &version.public_key,
            version.created_at,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The key ring, made with a first version if there is none yet.
    ///
    /// # Errors
    /// [`OwnKeyError`]: the master key does not fit, a stored version is
    /// unreadable, or the database failed.
    pub async fn ring(&self) -> Result<KeyRing, OwnKeyError> {
        let ring = self.load().await?;
        if !ring.versions.is_empty() {
            return Ok(ring);
        }
        let key_id = KeyId::parse(GATEWAY_KEY_ID).map_err(|e| corrupt(e.to_string()))?;
        let first = KeyRing::create(
            self.group.clone(),
            key_id,
            self.overlap,
            &self.master,
            self.clock.now(),
        )?;
        self.store(first.current()?, &ChangedBy::system("gateway"))
            .await?;
        // Whoever wrote version 1, it is what the database holds now.
        self.load().await
    }

    /// Adds a version and retires the current one (it verifies for the
    /// overlap). Returns the new current key.
    ///
    /// # Errors
    /// As [`OwnKeys::ring`].
    pub async fn rotate(&self, by: &ChangedBy) -> Result<KeyRef, OwnKeyError> {
        let mut ring = self.ring().await?;
        ring.signer(&self.master)?;
        let key = ring.rotate(&self.master, self.clock.now())?.clone();
        if !self.store(ring.current()?, by).await? {
            // Another process rotated at the same moment: its version stands.
            return Ok(self.load().await?.current()?.key.clone());
        }
        Ok(key)
    }

    /// Signs `message` with version `key`, opened for this one use.
    async fn sign_with(&self, key: &KeyRef, message: &[u8]) -> Result<Vec<u8>, OwnKeyError> {
        let known = self
            .sealed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned();
        let ring = match known {
            Some(version) => KeyRing {
                versions: vec![version],
                overlap: self.overlap,
            },
            None => self.load().await?,
        };
        Ok(ring.signer_for(key, &self.master)?.sign(message))
    }
}

/// The journal event of a new version of this group's key (its public half),
/// in the transaction `tx`.
pub(super) async fn journal_new_version(
    tx: &impl storage::ConnectionTrait,
    by: &ChangedBy,
    key: &KeyRef,
    public_key: &[u8],
    at: domain::Timestamp,
) -> Result<(), StorageError> {
    let change = SettingChange {
        subject: format!("gateway_own_key:{key}"),
        before: None,
        after: Some(format!("Ed25519 {}", URL_SAFE_NO_PAD.encode(public_key))),
    };
    record(tx, by, SettingKind::GatewayOwnKeyAdded, change, at).await
}

#[async_trait::async_trait]
impl KeyBroker for OwnKeys {
    async fn current(&self) -> Result<KeyRef, OwnKeyError> {
        Ok(self.ring().await?.current()?.key.clone())
    }

    async fn sign(&self, key: &KeyRef, message: &[u8]) -> Result<Vec<u8>, OwnKeyError> {
        self.sign_with(key, message).await
    }

    async fn published(&self) -> Result<Vec<(KeyRef, PinnedKey)>, OwnKeyError> {
        Ok(self.ring().await?.published(self.clock.now()))
    }

    async fn rotate(&self, by: &ChangedBy) -> Result<KeyRef, OwnKeyError> {
        OwnKeys::rotate(self, by).await
    }

    fn overlap(&self) -> Duration {
        self.overlap
    }

    async fn check(&self) -> Result<String, OwnKeyError> {
        let ring = self.ring().await?;
        let current = ring.current()?;
        let signature = self.sign_with(&current.key, PROBE).await?;
        if !verifies(&current.public_key, PROBE, &signature) {
            return Err(OwnKeyError::BadSignature(current.key.to_string()));
        }
        Ok(format!(
            "embedded broker: {} opens with the master key and signs",
            current.key
        ))
    }
}
