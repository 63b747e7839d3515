//! Canonical hashes. serde_json writes struct fields in declaration order and
//! our maps are BTreeMaps, so the JSON of a value is stable and can be hashed.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Hex SHA-256 of the value's canonical JSON.
pub fn sha256_json<T: Serialize>(value: &T) -> String {
    // Serialising plain data structs cannot fail; an empty hash would never
    // match a stored one, so a failure is still caught downstream.
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    sha256_hex(&bytes)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
