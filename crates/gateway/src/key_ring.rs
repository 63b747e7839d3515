//! The embedded secrets broker's keys: a group's signing key in versions,
//! each private half sealed at rest under a master key (ChaCha20-Poly1305,
//! bound to its key reference so a sealed seed moved to another row does not
//! open), rotated with an overlap window in which the retired version still
//! verifies. The private half is only ever opened into a [`SigningKey`],
//! which signs and never hands it out.

use crate::keys::{KeyError, PinnedKey, SigningKey};
use crate::names::{GroupName, KeyId, KeyRef};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Duration, Utc};
use rand::RngCore;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

/// Why a key could not be sealed, opened or made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokerError {
    #[error("the master key must be 32 bytes, base64url without padding (43 characters)")]
    BadMasterKey,
    #[error("the sealed private key of {0} does not open with this master key")]
    WrongMasterKey(String),
    #[error("{0} has no current version")]
    NoCurrentVersion(String),
    #[error("there is no key version {0}")]
    NoSuchVersion(String),
    #[error(transparent)]
    Key(#[from] KeyError),
}

/// The key that seals every private key at rest; given by file or
/// environment, never stored in the database.
#[derive(Clone)]
pub struct MasterKey([u8; 32]);

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(…)")
    }
}

impl MasterKey {
    /// Reads a master key written as base64url (surrounding whitespace, as
    /// in a file, is ignored).
    ///
    /// # Errors
    /// [`BrokerError::BadMasterKey`] for anything but 32 bytes.
    pub fn parse(text: &str) -> Result<Self, BrokerError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(text.trim())
            .map_err(|_| BrokerError::BadMasterKey)?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| BrokerError::BadMasterKey)?;
        Ok(Self(bytes))
    }

    /// A new random master key, written as [`MasterKey::parse`] reads it.
    pub fn generate() -> String {
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    fn aead(&self) -> Result<LessSafeKey, BrokerError> {
        let key =
            UnboundKey::new(&CHACHA20_POLY1305, &self.0).map_err(|_| BrokerError::BadMasterKey)?;
        Ok(LessSafeKey::new(key))
    }

    /// Seals `seed` under a fresh random nonce, bound to `key`.
    fn seal(&self, key: &KeyRef, seed: &[u8; 32]) -> Result<SealedSeed, BrokerError> {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let mut ciphertext = seed.to_vec();
        self.aead()?
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(key.to_string().as_bytes()),
                &mut ciphertext,
            )
            .map_err(|_| BrokerError::BadMasterKey)?;
        Ok(SealedSeed { nonce, ciphertext })
    }

    fn open(&self, key: &KeyRef, sealed: &SealedSeed) -> Result<[u8; 32], BrokerError> {
        let mut buffer = sealed.ciphertext.clone();
        let plain = self
            .aead()?
            .open_in_place(
                Nonce::assume_unique_for_key(sealed.nonce),
                Aad::from(key.to_string().as_bytes()),
                &mut buffer,
            )
            .map_err(|_| BrokerError::WrongMasterKey(key.to_string()))?;
        plain
            .try_into()
            .map_err(|_| BrokerError::WrongMasterKey(key.to_string()))
    }
}

/// A private key as stored: sealed, with its nonce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedSeed {
    pub nonce: [u8; NONCE_LEN],
    pub ciphertext: Vec<u8>,
}

/// One version of a group's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyVersion {
    pub key: KeyRef,
    pub public_key: [u8; 32],
    pub sealed: SealedSeed,
    pub created_at: DateTime<Utc>,
    /// When a newer version replaced it; it verifies for the overlap after.
    pub retired_at: Option<DateTime<Utc>>,
}

/// A group's signing key with all its versions, the newest current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRing {
    pub versions: Vec<KeyVersion>,
    /// How long a retired version still verifies.
    pub overlap: Duration,
}

impl KeyRing {
    /// A ring with a first version, made now.
    ///
    /// # Errors
    /// [`BrokerError::Key`] if the platform cannot make Ed25519 keys.
    pub fn create(
        group: GroupName,
        key_id: KeyId,
        overlap: Duration,
        master: &MasterKey,
        now: DateTime<Utc>,
    ) -> Result<Self, BrokerError> {
        let key = KeyRef {
            group,
            key_id,
            version: 1,
        };
        Ok(Self {
            versions: vec![new_version(key, master, now)?],
            overlap,
        })
    }

    /// Makes a new current version and retires the one before: it still
    /// verifies for the overlap window, so tasks signed a moment ago stay
    /// good while peers learn the new key.
    ///
    /// # Errors
    /// [`BrokerError::NoCurrentVersion`] for an empty ring, or
    /// [`BrokerError::Key`].
    pub fn rotate(
        &mut self,
        master: &MasterKey,
        now: DateTime<Utc>,
    ) -> Result<&KeyRef, BrokerError> {
        let current = self.current()?.key.clone();
        let next = KeyRef {
            version: current.version + 1,
            ..current
        };
        let version = new_version(next, master, now)?;
        if let Some(previous) = self.versions.last_mut() {
            previous.retired_at = Some(now);
        }
        self.versions.push(version);
        Ok(&self.current()?.key)
    }

    /// The version that signs.
    ///
    /// # Errors
    /// [`BrokerError::NoCurrentVersion`] for an empty ring.
    pub fn current(&self) -> Result<&KeyVersion, BrokerError> {
        self.versions
            .last()
            .ok_or_else(|| BrokerError::NoCurrentVersion("this key ring".to_owned()))
    }

    /// The current version, opened to sign.
    ///
    /// # Errors
    /// [`BrokerError::WrongMasterKey`] when the seal does not open.
    pub fn signer(&self, master: &MasterKey) -> Result<SigningKey, BrokerError> {
        let current = self.current()?;
        let seed = master.open(&current.key, &current.sealed)?;
        Ok(SigningKey::from_seed(current.key.clone(), &seed)?)
    }

    /// The version `key` of this ring, opened to sign (a card is signed by
    /// every published version, so a peer that pinned one learns the rest).
    ///
    /// # Errors
    /// [`BrokerError::NoSuchVersion`] when the ring has no such version;
    /// [`BrokerError::WrongMasterKey`] when its seal does not open.
    pub fn signer_for(&self, key: &KeyRef, master: &MasterKey) -> Result<SigningKey, BrokerError> {
        let version = self
            .versions
            .iter()
            .find(|version| &version.key == key)
            .ok_or_else(|| BrokerError::NoSuchVersion(key.to_string()))?;
        let seed = master.open(&version.key, &version.sealed)?;
        Ok(SigningKey::from_seed(version.key.clone(), &seed)?)
    }

    /// The versions a peer may pin at `now`, with the time each may be
    /// used in: the current one, and retired ones until their overlap ends.
    pub fn published(&self, now: DateTime<Utc>) -> Vec<(KeyRef, PinnedKey)> {
        published(
            self.versions.iter().map(|version| PublicVersion {
                key: version.key.clone(),
                public_key: version.public_key,
                created_at: version.created_at,
                retired_at: version.retired_at,
            }),
            self.overlap,
            now,
        )
    }
}

/// The public half of one version of a group's key, wherever the private
/// half is kept (sealed here, or in a broker that never hands it out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicVersion {
    pub key: KeyRef,
    pub public_key: [u8; 32],
    pub created_at: DateTime<Utc>,
    /// When a newer version replaced it.
    pub retired_at: Option<DateTime<Utc>>,
}

/// The versions a peer may pin at `now`, with the time each may be used
/// in: the current one, and retired ones until `overlap` after their
/// retirement.
pub fn published(
    versions: impl IntoIterator<Item = PublicVersion>,
    overlap: Duration,
    now: DateTime<Utc>,
) -> Vec<(KeyRef, PinnedKey)> {
    versions
        .into_iter()
        .filter_map(|version| {
            let usable_until = version.retired_at.map(|retired| retired + overlap);
            if usable_until.is_some_and(|until| now > until) {
                return None;
            }
            Some((
                version.key,
                PinnedKey {
                    public_key: version.public_key,
                    valid_from: version.created_at,
                    usable_until,
                },
            ))
        })
        .collect()
}

fn new_version(
    key: KeyRef,
    master: &MasterKey,
    now: DateTime<Utc>,
) -> Result<KeyVersion, BrokerError> {
    let mut seed = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut seed);
    let signing = SigningKey::from_seed(key.clone(), &seed)?;
    let sealed = master.seal(&key, &seed)?;
    Ok(KeyVersion {
        public_key: signing.public_key(),
        key,
        sealed,
        created_at: now,
        retired_at: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 0).unwrap()
    }

    fn ring(master: &MasterKey) -> KeyRing {
        KeyRing::create(
            GroupName::parse("support").unwrap(),
            KeyId::parse("gateway").unwrap(),
            Duration::minutes(10),
            master,
            t0(),
        )
        .unwrap()
    }

    #[test]
    fn a_private_key_is_stored_sealed_and_opens_only_with_its_master_key() {
        let master = MasterKey::parse(&MasterKey::generate()).unwrap();
        let ring = ring(&master);
        let sealed = &ring.current().unwrap().sealed;
        assert_eq!(
            sealed.ciphertext.len(),
            32 + 16,
            "seed and tag, nothing in clear"
        );
        let signer = ring.signer(&master).unwrap();
        assert_eq!(signer.public_key(), ring.current().unwrap().public_key);

        let other = MasterKey::parse(&MasterKey::generate()).unwrap();
        assert_eq!(
            ring.signer(&other).unwrap_err(),
            BrokerError::WrongMasterKey("support/gateway/v1".to_owned())
        );
    }

    #[test]
    fn a_sealed_key_moved_to_another_version_does_not_open() {
        let master = MasterKey::parse(&MasterKey::generate()).unwrap();
        let mut ring = ring(&master);
        ring.rotate(&master, t0() + Duration::minutes(1)).unwrap();
        // Someone with database access copies v1's sealed seed over v2's.
        ring.versions[1].sealed = ring.versions[0].sealed.clone();
        assert!(matches!(
            ring.signer(&master),
            Err(BrokerError::WrongMasterKey(_))
        ));
    }

    #[test]
    fn after_a_rotation_the_new_version_signs_and_the_old_one_is_published_until_its_overlap_ends()
    {
        let master = MasterKey::parse(&MasterKey::generate()).unwrap();
        let mut ring = ring(&master);
        let rotated_at = t0() + Duration::hours(1);
        assert_eq!(ring.rotate(&master, rotated_at).unwrap().version, 2);
        assert_eq!(ring.signer(&master).unwrap().key_ref().version, 2);

        let versions =
            |now| -> Vec<u32> { ring.published(now).iter().map(|(k, _)| k.version).collect() };
        assert_eq!(versions(rotated_at + Duration::minutes(10)), [1, 2]);
        assert_eq!(versions(rotated_at + Duration::minutes(11)), [2]);
        let (_, old) = &ring.published(rotated_at)[0];
        assert_eq!(old.usable_until, Some(rotated_at + Duration::minutes(10)));
    }

    #[test]
    fn a_master_key_of_the_wrong_length_is_refused_with_how_to_write_one() {
        let error = MasterKey::parse("c2hvcnQ").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the master key must be 32 bytes, base64url without padding (43 characters)"
        );
    }
}
