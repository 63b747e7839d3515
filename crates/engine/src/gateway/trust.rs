//! What this group trusts, read from storage into the gateway's types. A
//! stored row that no longer parses (a name or key edited by hand) trusts
//! nothing: it is left out and logged, never guessed at.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gateway::{Allowlist, GroupName, KeyId, KeyRef, PinnedKey, PinnedKeys, TaskKind};
use storage::gateway::trust::{self, PairRow, PinnedKeyRow};
use storage::{ConnectionTrait, StorageError};

/// The pinned keys and the allowlist, as of now.
pub(super) struct Trust {
    pub pins: PinnedKeys,
    pub allowlist: Allowlist,
}

pub(super) async fn load(db: &impl ConnectionTrait) -> Result<Trust, StorageError> {
    let mut pins = PinnedKeys::default();
    for row in trust::pinned_keys(db).await? {
        match pinned(&row) {
            Some((key, pinned)) => pins.pin(key, pinned),
            None => tracing::warn!(
                group = %row.group_name, key_id = %row.key_id, version = row.version,
                "a pinned key does not parse; it verifies nothing"
            ),
        }
    }
    let mut allowlist = Allowlist::default();
    for row in trust::pairs(db).await? {
        match pair(&row) {
            Some((from, to, kind)) => allowlist.allow(from, to, kind),
            None => tracing::warn!(
                from = %row.from_group, to = %row.to_group, kind = %row.kind,
                "an allowed pair does not parse; it allows nothing"
            ),
        }
    }
    Ok(Trust { pins, allowlist })
}

fn pinned(row: &PinnedKeyRow) -> Option<(KeyRef, PinnedKey)> {
    let key = KeyRef {
        group: GroupName::parse(&row.group_name).ok()?,
        key_id: KeyId::parse(&row.key_id).ok()?,
        version: u32::try_from(row.version).ok()?,
    };
    let public_key: [u8; 32] = URL_SAFE_NO_PAD
        .decode(&row.public_key)
        .ok()?
        .try_into()
        .ok()?;
    Some((
        key,
        PinnedKey {
            public_key,
            valid_from: row.valid_from,
            usable_until: row.usable_until,
        },
    ))
}

fn pair(row: &PairRow) -> Option<(GroupName, GroupName, TaskKind)> {
    Some((
        GroupName::parse(&row.from_group).ok()?,
        GroupName::parse(&row.to_group).ok()?,
        TaskKind::parse(&row.kind).ok()?,
    ))
}
