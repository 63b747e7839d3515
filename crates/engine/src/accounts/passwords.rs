//! Password hashing with argon2id at OWASP's recommended parameters
//! (19 MiB memory, 2 iterations, 1 lane), stored as PHC strings.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use std::sync::OnceLock;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("password must be at least {min} characters")]
    TooShort { min: usize },
    #[error("password must be at most {max} characters")]
    TooLong { max: usize },
    #[error("password hashing failed: {0}")]
    Hashing(String),
}

pub const MIN_LENGTH: usize = 8;
pub const MAX_LENGTH: usize = 256;

fn hasher() -> Argon2<'static> {
    // OWASP Password Storage Cheat Sheet: m=19456 KiB, t=2, p=1.
    let params = Params::new(19 * 1024, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Hashes a new password after checking its length.
///
/// # Errors
/// [`PasswordError::TooShort`] / [`PasswordError::TooLong`], or a hashing failure.
pub fn hash_password(password: &str) -> Result<String, PasswordError> {
    let length = password.chars().count();
    if length < MIN_LENGTH {
        return Err(PasswordError::TooShort { min: MIN_LENGTH });
    }
    if length > MAX_LENGTH {
        return Err(PasswordError::TooLong { max: MAX_LENGTH });
    }
    let salt = SaltString::generate(&mut OsRng);
    hasher()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| PasswordError::Hashing(e.to_string()))
}

/// True when `password` matches the stored PHC hash. A malformed hash never matches.
pub fn verify_password(password: &str, stored: &str) -> bool {
    if password.len() > MAX_LENGTH * 4 {
        return false;
    }
    match PasswordHash::new(stored) {
        Ok(parsed) => hasher()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// Spends the same effort as a real verification, so the response time does
/// not tell an attacker whether an account name exists.
pub fn verify_against_dummy(password: &str) {
    static DUMMY: OnceLock<String> = OnceLock::new();
    let dummy =
        DUMMY.get_or_init(|| hash_password("countersign-dummy-password").unwrap_or_default());
    let _ = verify_password(password, dummy);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hashed_password_verifies_and_a_wrong_one_does_not() {
        let hash = hash_password("correct horse battery").unwrap();
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{hash}"
        );
        assert!(verify_password("correct horse battery", &hash));
        assert!(!verify_password("correct horse batterY", &hash));
    }

    #[test]
    fn the_same_password_hashes_differently_each_time() {
        assert_ne!(
            hash_password("same password").unwrap(),
            hash_password("same password").unwrap()
        );
    }

    #[test]
    fn short_passwords_are_refused() {
        assert!(matches!(
            hash_password("short"),
            Err(PasswordError::TooShort { min: 8 })
        ));
    }

    #[test]
    fn a_malformed_stored_hash_never_matches() {
        assert!(!verify_password("anything", "not-a-phc-string"));
        assert!(!verify_password("", ""));
    }
}
