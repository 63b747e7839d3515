//! How a sandbox run is set up.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::faults::FaultPlan;

/// Settings for one sandbox run. Faults, seed and durations can also be
/// changed at runtime with `PUT /v1/faults`; retention cannot.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// Faults injected into `POST /v1/refunds`. Default: none.
    pub faults: FaultPlan,
    /// Seed of the RNG behind fault probabilities. Default: 0.
    pub seed: u64,
    /// How long the timeout faults hang before answering. Set it above the
    /// client's request timeout. Default: 15 s.
    #[serde(rename = "hang_ms", with = "crate::duration_serde::millis")]
    pub hang: Duration,
    /// How long an idempotency key is remembered for replay. Default: 24 h.
    #[serde(rename = "retention_secs", with = "crate::duration_serde::secs")]
    pub retention: Duration,
    /// Delay added to every status query and listing. Default: none.
    #[serde(rename = "lookup_latency_ms", with = "crate::duration_serde::millis")]
    pub lookup_latency: Duration,
    /// The key every request must present (`Authorization: Bearer <key>`).
    /// `None`: a random `sk_sbx_…` key is generated; read it with
    /// [`SandboxState::secret_key`](super::SandboxState::secret_key). Never
    /// serialised.
    #[serde(skip_serializing)]
    pub secret_key: Option<SecretString>,
}

/// By hand because `SecretString` has no `PartialEq` (on purpose: secrets
/// are compared in constant time where it matters, which is not here).
impl PartialEq for SandboxConfig {
    fn eq(&self, other: &Self) -> bool {
        self.faults == other.faults
            && self.seed == other.seed
            && self.hang == other.hang
            && self.retention == other.retention
            && self.lookup_latency == other.lookup_latency
            && self.secret_key.as_ref().map(ExposeSecret::expose_secret)
                == other.secret_key.as_ref().map(ExposeSecret::expose_secret)
    }
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            faults: FaultPlan::default(),
            seed: 0,
            hang: Duration::from_secs(15),
            retention: Duration::from_secs(24 * 60 * 60),
            lookup_latency: Duration::ZERO,
            secret_key: None,
        }
    }
}

impl SandboxConfig {
    #[must_use]
    pub fn with_faults(mut self, faults: FaultPlan) -> Self {
        self.faults = faults;
        self
    }

    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    #[must_use]
    pub fn with_hang(mut self, hang: Duration) -> Self {
        self.hang = hang;
        self
    }

    #[must_use]
    pub fn with_retention(mut self, retention: Duration) -> Self {
        self.retention = retention;
        self
    }

    #[must_use]
    pub fn with_secret_key(mut self, secret_key: SecretString) -> Self {
        self.secret_key = Some(secret_key);
        self
    }

    #[must_use]
    pub fn with_lookup_latency(mut self, lookup_latency: Duration) -> Self {
        self.lookup_latency = lookup_latency;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_reads_from_json_with_defaults_for_what_is_missing() {
        let config: SandboxConfig = serde_json::from_str(
            r#"{"seed": 9, "hang_ms": 300, "faults": [{"mode": "server_error"}]}"#,
        )
        .unwrap_or_default();
        assert_eq!(config.seed, 9);
        assert_eq!(config.hang, Duration::from_millis(300));
        assert_eq!(config.retention, Duration::from_secs(86_400));
        assert_eq!(config.faults.rules.len(), 1);
    }
}
