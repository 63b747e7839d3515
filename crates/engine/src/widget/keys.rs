//! Signing keys for host sites, and signing a host token (what a host site's
//! server does; the CLI and tests use it too).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// The `aud` every host token must carry.
pub const TOKEN_AUDIENCE: &str = "countersign-widget";

/// PKCS#8 v1 prefix of an Ed25519 private key (RFC 8410): what OpenSSL,
/// Node's `crypto`, Python's `cryptography` and every JOSE library read.
const PKCS8_ED25519_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// A key pair just made: the private key leaves in this value and is never
/// stored.
#[derive(Debug, Clone)]
pub struct NewSigningKey {
    pub site_id: String,
    pub key_id: String,
    /// Ed25519 private key, PKCS#8 PEM.
    pub private_key_pem: String,
    /// Ed25519 public key, base64url (JWK `x`).
    pub public_key: String,
}

/// What a host token says.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct HostTokenClaims {
    /// The site id (`wst_…`).
    pub iss: String,
    /// The customer's Countersign user id.
    pub sub: String,
    /// Always [`TOKEN_AUDIENCE`].
    pub aud: String,
    /// Issued at, seconds since the epoch (UTC).
    pub iat: i64,
    /// Expires at, seconds since the epoch (UTC).
    pub exp: i64,
    /// Unique per token: a token opens at most one widget session.
    pub jti: String,
}

/// Generates a key pair; returns `(private key PEM, public key base64url)`.
pub(super) fn generate() -> Result<(String, String), ring::error::Unspecified> {
    let mut seed = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut seed);
    let pair = ring::signature::Ed25519KeyPair::from_seed_unchecked(&seed)?;
    let public = ring::signature::KeyPair::public_key(&pair);
    let mut der = PKCS8_ED25519_PREFIX.to_vec();
    der.extend_from_slice(&seed);
    let pem = pem::encode(&pem::Pem::new("PRIVATE KEY", der));
    Ok((pem, URL_SAFE_NO_PAD.encode(public.as_ref())))
}

/// Signs a host token as a host site's server would.
///
/// # Errors
/// The PEM is not an Ed25519 private key.
pub fn sign_host_token(
    private_key_pem: &str,
    key_id: &str,
    claims: &HostTokenClaims,
) -> Result<String, jsonwebtoken::errors::Error> {
    let key = EncodingKey::from_ed_pem(private_key_pem.as_bytes())?;
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(key_id.to_owned());
    jsonwebtoken::encode(&header, claims, &key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_private_key_signs_tokens_its_public_key_verifies() {
        let (pem, public) = generate().expect("key");
        let claims = HostTokenClaims {
            iss: "wst_1".into(),
            sub: "usr_1".into(),
            aud: TOKEN_AUDIENCE.into(),
            iat: 1_700_000_000,
            exp: 4_000_000_000,
            jti: "t1".into(),
        };
        let token = sign_host_token(&pem, "wsk_1", &claims).expect("sign");
        let key = jsonwebtoken::DecodingKey::from_ed_components(&public).expect("public key");
        let mut validation = jsonwebtoken::Validation::new(Algorithm::EdDSA);
        validation.set_audience(&[TOKEN_AUDIENCE]);
        let decoded =
            jsonwebtoken::decode::<HostTokenClaims>(&token, &key, &validation).expect("verifies");
        assert_eq!(decoded.claims, claims);
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    }

    #[test]
    fn two_generated_keys_differ() {
        let (a, _) = generate().expect("key");
        let (b, _) = generate().expect("key");
        assert_ne!(a, b);
    }
}
