//! A client for the transit secrets engine of HashiCorp Vault and OpenBao
//! (the same documented HTTP API): read, create and rotate one named key,
//! and sign and verify with one of its versions. The private key never
//! leaves Vault; what comes back is read the way the outside world
//! deserves: a signature that does not say `vault:vN:` for the version
//! asked, a public key of the wrong length, a body that is not the API's,
//! each is an error, never a guess.

use crate::ConfigError;
use crate::http::{HttpTimeouts, build_client, join_segments, parse_base_url};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

/// Where the key lives and who may use it.
#[derive(Clone)]
pub struct TransitConfig {
    /// Vault's address (`https://vault.example:8200`).
    pub address: String,
    /// The path the transit engine is mounted at (`transit`).
    pub mount: String,
    /// The key's name in that engine.
    pub key: String,
    /// A token whose policy allows `read` on `keys/<key>`, `update` on
    /// `sign/<key>`, `verify/<key>` and `keys/<key>/rotate` (and `create`
    /// on `keys/<key>` for a key Countersign makes on first use).
    pub token: SecretString,
    /// Vault Enterprise / OpenBao namespace, if any.
    pub namespace: Option<String>,
}

impl std::fmt::Debug for TransitConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("TransitConfig")
            .field("address", &self.address)
            .field("mount", &self.mount)
            .field("key", &self.key)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

/// What went wrong asking Vault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    /// No answer: unreachable, timed out, or a server error (5xx). Vault may
    /// answer the same request later.
    #[error("Vault did not answer: {0}")]
    Unavailable(String),
    /// Vault answered no (4xx other than a missing key): the token, its
    /// policy or the request is wrong, and asking again will not change it.
    #[error("Vault refused ({status}): {message}")]
    Refused { status: u16, message: String },
    /// The key does not exist in this transit engine.
    #[error("Vault's transit engine has no key {0:?}")]
    NoKey(String),
    /// An answer that does not read as the transit API's.
    #[error("Vault's answer does not read as the transit API's: {0}")]
    Malformed(String),
}

/// One version of a transit key: its public half and when it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitKeyVersion {
    pub version: u32,
    pub public_key: Vec<u8>,
    pub created_at: DateTime<Utc>,
}

/// A transit key as Vault reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitKey {
    /// `ed25519`, `ecdsa-p256`, `aes256-gcm96`, …
    pub key_type: String,
    pub latest_version: u32,
    /// Every version Vault still holds, oldest first.
    pub versions: Vec<TransitKeyVersion>,
}

/// A client for one transit key, with bounded timeouts and no redirects.
#[derive(Debug, Clone)]
pub struct TransitClient {
    http: reqwest::Client,
    base: reqwest::Url,
    config: TransitConfig,
}

fn unavailable(error: &reqwest::Error) -> VaultError {
    VaultError::Unavailable(error.to_string())
}

fn malformed(why: impl Into<String>) -> VaultError {
    VaultError::Malformed(why.into())
}

/// The `errors` Vault gives with a refusal, joined; the status's reason
/// when it gives none.
fn errors_of(status: StatusCode, body: &Value) -> String {
    let errors: Vec<&str> = body["errors"]
        .as_array()
        .map(|errors| errors.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if errors.is_empty() {
        status.canonical_reason().unwrap_or("no reason").to_owned()
    } else {
        errors.join("; ")
    }
}

impl TransitClient {
    /// # Errors
    /// An address that is not an http(s) URL, or an HTTP client that cannot
    /// be built.
    pub fn new(config: TransitConfig, timeouts: HttpTimeouts) -> Result<Self, ConfigError> {
        let address = parse_base_url(&config.address)?;
        let mut base = address;
        let mount: Vec<&str> = config.mount.split('/').filter(|s| !s.is_empty()).collect();
        if mount.is_empty() {
            return Err(ConfigError::new("the transit mount path is empty"));
        }
        base = join_segments(&base, &["v1"]);
        base = join_segments(&base, &mount);
        Ok(Self {
            http: build_client(timeouts)?,
            base,
            config,
        })
    }

    pub fn key_name(&self) -> &str {
        &self.config.key
    }

    /// Where the key lives, for people (never the token).
    pub fn describe(&self) -> String {
        format!("Vault transit key {:?} at {}", self.config.key, self.base)
    }

    /// The `data` of Vault's answer to `method path` with `body`; None for
    /// an answer with no content (204).
    async fn call(
        &self,
        method: Method,
        path: &[&str],
        body: Option<Value>,
    ) -> Result<Option<Value>, VaultError> {
        let mut request = self
            .http
            .request(method, join_segments(&self.base, path))
            .header("X-Vault-Token", self.config.token.expose_secret());
        if let Some(namespace) = &self.config.namespace {
            request = request.header("X-Vault-Namespace", namespace);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|e| unavailable(&e))?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| unavailable(&e))?;
        if status == StatusCode::NO_CONTENT {
            return Ok(None);
        }
        let body: Value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| {
                if status.is_server_error() {
                    VaultError::Unavailable(format!("HTTP {status}"))
                } else {
                    malformed(format!("HTTP {status} with a body that is not JSON: {e}"))
                }
            })?
        };
        if status.is_server_error() {
            return Err(VaultError::Unavailable(format!(
                "HTTP {status}: {}",
                errors_of(status, &body)
            )));
        }
        if status == StatusCode::NOT_FOUND && path.first() == Some(&"keys") {
            return Err(VaultError::NoKey(self.config.key.clone()));
        }
        if !status.is_success() {
            return Err(VaultError::Refused {
                status: status.as_u16(),
                message: errors_of(status, &body),
            });
        }
        match body.get("data") {
            Some(data) if data.is_object() => Ok(Some(data.clone())),
            // Rotation and creation answer 200 with the key, or nothing.
            _ => Ok(None),
        }
    }

    async fn data(&self, path: &[&str], body: Value) -> Result<Value, VaultError> {
        self.call(Method::POST, path, Some(body))
            .await?
            .ok_or_else(|| malformed("the answer has no data"))
    }

    /// The key with every version Vault holds.
    ///
    /// # Errors
    /// [`VaultError::NoKey`] when there is none; the others as they come.
    pub async fn read_key(&self) -> Result<TransitKey, VaultError> {
        let data = self
            .call(Method::GET, &["keys", &self.config.key], None)
            .await?
            .ok_or_else(|| malformed("reading the key answered no data"))?;
        read_key_data(&data)
    }

    /// Makes the key as an Ed25519 signing key (not exportable).
    ///
    /// # Errors
    /// As Vault answers.
    pub async fn create_ed25519_key(&self) -> Result<(), VaultError> {
        self.call(
            Method::POST,
            &["keys", &self.config.key],
            Some(json!({ "type": "ed25519", "exportable": false })),
        )
        .await?;
        Ok(())
    }

    /// Adds a version; new signatures use it.
    ///
    /// # Errors
    /// As Vault answers.
    pub async fn rotate(&self) -> Result<(), VaultError> {
        self.call(
            Method::POST,
            &["keys", &self.config.key, "rotate"],
            Some(json!({})),
        )
        .await?;
        Ok(())
    }

    /// A raw signature over `message` by `version` of the key.
    ///
    /// # Errors
    /// [`VaultError::Malformed`] for a signature not made by that version
    /// (its `vault:vN:` prefix names another) or not base64; the others as
    /// Vault answers.
    pub async fn sign(&self, version: u32, message: &[u8]) -> Result<Vec<u8>, VaultError> {
        let data = self
            .data(
                &["sign", &self.config.key],
                json!({ "input": STANDARD.encode(message), "key_version": version }),
            )
            .await?;
        let signature = data["signature"]
            .as_str()
            .ok_or_else(|| malformed("the answer has no signature"))?;
        parse_signature(signature, version)
    }

    /// Whether Vault finds `signature` (by `version`) valid for `message`.
    ///
    /// # Errors
    /// As Vault answers.
    pub async fn verify(
        &self,
        version: u32,
        message: &[u8],
        signature: &[u8],
    ) -> Result<bool, VaultError> {
        let data = self
            .data(
                &["verify", &self.config.key],
                json!({
                    "input": STANDARD.encode(message),
                    "signature": format!("vault:v{version}:{}", STANDARD.encode(signature)),
                }),
            )
            .await?;
        data["valid"]
            .as_bool()
            .ok_or_else(|| malformed("the answer does not say whether it is valid"))
    }
}

/// The raw signature in `vault:v<version>:<base64>`.
fn parse_signature(text: &str, version: u32) -> Result<Vec<u8>, VaultError> {
    let prefix = format!("vault:v{version}:");
    let encoded = text.strip_prefix(&prefix).ok_or_else(|| {
        malformed(format!(
            "the signature does not start with {prefix:?}: version {version} was asked for"
        ))
    })?;
    STANDARD
        .decode(encoded)
        .map_err(|_| malformed("the signature is not base64"))
}

fn read_key_data(data: &Value) -> Result<TransitKey, VaultError> {
    let key_type = data["type"]
        .as_str()
        .ok_or_else(|| malformed("the key has no type"))?
        .to_owned();
    let latest_version = data["latest_version"]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| malformed("the key has no latest_version"))?;
    let keys = data["keys"]
        .as_object()
        .ok_or_else(|| malformed("the key lists no versions"))?;
    let mut versions = keys
        .iter()
        .map(|(version, entry)| {
            let version: u32 = version
                .parse()
                .map_err(|_| malformed(format!("version {version:?} is not a number")))?;
            // Symmetric keys list only a creation time: no public half.
            let public_key = entry["public_key"]
                .as_str()
                .ok_or_else(|| malformed(format!("version {version} has no public key")))?;
            let public_key = STANDARD.decode(public_key).map_err(|_| {
                malformed(format!("the public key of version {version} is not base64"))
            })?;
            let created_at = entry["creation_time"]
                .as_str()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .ok_or_else(|| malformed(format!("version {version} has no creation time")))?
                .with_timezone(&Utc);
            Ok(TransitKeyVersion {
                version,
                public_key,
                created_at,
            })
        })
        .collect::<Result<Vec<_>, VaultError>>()?;
    versions.sort_by_key(|v| v.version);
    if !versions.iter().any(|v| v.version == latest_version) {
        return Err(malformed(format!(
            "the latest version {latest_version} is not among the versions listed"
        )));
    }
    Ok(TransitKey {
        key_type,
        latest_version,
        versions,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_signature_from_another_version_than_the_one_asked_for_is_not_taken() {
        let raw = STANDARD.encode([7u8; 64]);
        assert_eq!(
            parse_signature(&format!("vault:v2:{raw}"), 2).unwrap(),
            vec![7u8; 64]
        );
        for bad in [
            format!("vault:v1:{raw}"),
            format!("vault:v22:{raw}"),
            raw.clone(),
            "vault:v2:not base64!".to_owned(),
        ] {
            assert!(
                matches!(parse_signature(&bad, 2), Err(VaultError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_key_read_lists_its_versions_oldest_first_and_a_symmetric_key_is_malformed_here() {
        let data = json!({
            "type": "ed25519",
            "latest_version": 2,
            "keys": {
                "2": { "public_key": STANDARD.encode([2u8; 32]), "creation_time": "2026-12-02T10:00:00Z", "name": "ed25519" },
                "1": { "public_key": STANDARD.encode([1u8; 32]), "creation_time": "2026-12-01T10:00:00.123456789Z", "name": "ed25519" }
            }
        });
        let key = read_key_data(&data).unwrap();
        assert_eq!(key.latest_version, 2);
        assert_eq!(
            key.versions.iter().map(|v| v.version).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(key.versions[1].public_key, vec![2u8; 32]);

        let symmetric =
            json!({ "type": "aes256-gcm96", "latest_version": 1, "keys": { "1": 1_764_000_000 } });
        assert!(matches!(
            read_key_data(&symmetric),
            Err(VaultError::Malformed(_))
        ));
        let missing_latest =
            json!({ "type": "ed25519", "latest_version": 3, "keys": data["keys"].clone() });
        assert!(matches!(
            read_key_data(&missing_latest),
            Err(VaultError::Malformed(_))
        ));
    }
}
