//! Typed settings: defaults, then `countersign.toml` (or the file named by
//! `COUNTERSIGN_CONFIG`), then `COUNTERSIGN_*` environment variables.
//! Every setting is documented in the README.

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::SocketAddr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// Where a group's gateway signing key is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum KeyBrokerKind {
    /// Sealed in the database under `gateway_master_key`.
    #[default]
    Embedded,
    /// In HashiCorp Vault's (or OpenBao's) transit engine.
    Vault,
}

/// Debug output is safe to log: URLs lose their passwords, secrets are redacted.
#[derive(Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Address to listen on (`COUNTERSIGN_LISTEN`).
    pub listen: SocketAddr,
    /// `sqlite://path` (embedded default) or `postgres://…`.
    pub database_url: String,
    /// The public origin, e.g. `https://countersign.example.com`. Used for
    /// Origin checks and printed links; `https` turns on Secure cookies.
    pub public_url: Option<String>,
    /// Where the built site (`pkg/`, favicon) lives.
    pub site_root: String,
    pub log_format: LogFormat,
    /// The token a Prometheus scraper sends to `GET /metrics` as
    /// `Authorization: Bearer …` (`COUNTERSIGN_METRICS_TOKEN`, at least 16
    /// characters). Unset: `/metrics` answers 404.
    #[serde(skip_serializing)]
    pub metrics_token: Option<SecretString>,
    /// Password for the demo users; a random one is generated and printed when unset.
    #[serde(skip_serializing)]
    pub demo_password: Option<SecretString>,
    /// Seed demo data on an empty database. Defaults to on for SQLite only.
    pub seed_demo: Option<bool>,
    /// A session ends after this long without a request.
    pub session_idle_minutes: i64,
    /// A session ends this long after sign-in, however active.
    pub session_absolute_hours: i64,
    /// Failed sign-ins for one account from one address within the window
    /// before that address may not try that account (others still may).
    pub login_max_failures_per_account: u64,
    pub login_max_failures_per_address: u64,
    pub login_window_minutes: i64,
    /// Take the client address from the last `X-Forwarded-For` entry, the one
    /// the proxy in front appended (only behind a single proxy you run).
    pub trust_forwarded_for: bool,
    /// `sandbox` (the embedded default) or `stripe`.
    pub payment_provider: PaymentProviderKind,
    /// The provider's base URL. Sandbox: defaults to the one this server
    /// mounts at `sandbox_path`; Stripe: `https://api.stripe.com`.
    pub payment_base_url: Option<String>,
    /// Stripe secret key (`sk_…`), required with `payment_provider = "stripe"`.
    #[serde(skip_serializing)]
    pub stripe_secret_key: Option<SecretString>,
    pub payment_connect_timeout_ms: u64,
    /// A provider call that takes longer has an unknown outcome.
    pub payment_timeout_ms: u64,
    /// Mount the sandbox payment provider in this server (empty: don't).
    pub sandbox_path: String,
    /// Fault plan for the mounted sandbox, as the JSON of `PUT /v1/faults`.
    pub sandbox_faults: Option<String>,
    /// The sandbox's secret key (`COUNTERSIGN_SANDBOX_SECRET_KEY`): required
    /// to talk to a sandbox elsewhere (`payment_base_url`); the mounted
    /// sandbox uses it when set, else a generated one.
    #[serde(skip_serializing)]
    pub sandbox_secret_key: Option<SecretString>,
    pub proposal_ttl_hours: i64,
    pub approval_ttl_hours: i64,
    /// Proposals one account (an agent's credential, a staff member, a
    /// customer through the assistant) may submit per window.
    pub max_proposals_per_submitter: u64,
    pub proposal_submission_window_minutes: i64,
    /// Refunds above this (minor units) need two approvers, unless an
    /// administrator stored a per-currency threshold.
    pub four_eyes_threshold_minor: i64,
    /// An approver's limit (minor units) unless one is stored for them; 0 means no limit.
    pub default_approval_limit_minor: i64,
    pub execution_lease_seconds: i64,
    /// How long the provider remembers idempotency keys.
    pub key_retention_hours: i64,
    /// Status checks of an unknown outcome before a person is told.
    pub max_unknown_checks: u32,
    /// Seconds between reconciliation sweeps (0: this process runs none of
    /// the scheduled sweeps; another replica does).
    pub reconcile_interval_seconds: u64,
    /// Whether this process runs the work runner's lanes (refund sends,
    /// checks, notifications, sweeps). `false` makes a web-only replica:
    /// what it commits is done by a replica that runs them.
    pub work_runner: bool,
    /// This instance's agent group (`support`, `returns`): when set, other
    /// groups may send it tasks over A2A (`POST /a2a`, the agent card at
    /// `/.well-known/agent-card.json`), checked against the keys and pairs
    /// an admin trusted. Unset: the gateway is off and those paths are 404.
    pub gateway_group: Option<String>,
    /// The key that seals this group's signing key in the database
    /// (base64url, 32 bytes; `countersign gateway new-master-key` makes
    /// one). Never stored with the keys; without it the group signs nothing.
    #[serde(skip_serializing)]
    pub gateway_master_key: Option<SecretString>,
    /// Where this group's signing key is kept: `embedded` (the default:
    /// sealed in the database under `gateway_master_key`) or `vault` (the
    /// transit engine of HashiCorp Vault or OpenBao, `gateway_vault_*`;
    /// Vault signs and the private key never leaves it).
    pub gateway_key_broker: KeyBrokerKind,
    /// Vault's address (`https://vault.example:8200`), with the `vault` broker.
    pub gateway_vault_address: Option<String>,
    /// A Vault token allowed to read the key, sign and verify with it and
    /// rotate it (`COUNTERSIGN_GATEWAY_VAULT_TOKEN`).
    #[serde(skip_serializing)]
    pub gateway_vault_token: Option<SecretString>,
    /// Where the transit engine is mounted (default `transit`).
    pub gateway_vault_mount: String,
    /// The transit key's name (default `countersign-<group>`); made as an
    /// ed25519 key on first use when Vault has none. It is the key id peers
    /// pin (`<group>/<name>/v<N>`).
    pub gateway_vault_key: Option<String>,
    /// Vault Enterprise / OpenBao namespace, if any.
    pub gateway_vault_namespace: Option<String>,
    /// The peer group the refund specialist asks about returned parcels
    /// (`returns.inspection`) before asking the customer. Needs the
    /// gateway group and master key (answers are taken only signed).
    pub gateway_returns_desk: Option<String>,
    /// Where this group passes on the tasks it has no record for: `kind=group`
    /// pairs, comma-separated (`returns.inspection=warehouse`). The task goes
    /// on as a signed child (route extended, one hop deeper, budget within
    /// the parent's); its answer is this group's answer. Needs the master key.
    pub gateway_forward: Option<String>,
    /// The longest chain of delegated tasks this group takes or passes on
    /// (hops from the first task; default 5; 0: only tasks sent straight
    /// from their root, and nothing passed on).
    pub gateway_max_depth: u32,
    /// This worker's name in claims, leases and the journal. It must stay
    /// the same across restarts (a restarted worker takes back at once what
    /// it held) and differ between replicas. Default: the host name.
    pub executor_name: Option<String>,
    /// The chat model: `offline` (the built-in rules, no network or key) or
    /// `openai` (any OpenAI-compatible chat-completions server).
    pub model_backend: ModelBackend,
    /// The OpenAI-compatible API root, e.g. `https://api.openai.com/v1` or
    /// `http://localhost:11434/v1` (Ollama); required with `openai`.
    pub model_base_url: Option<String>,
    /// Bearer key for the model server (local servers usually need none).
    #[serde(skip_serializing)]
    pub model_api_key: Option<SecretString>,
    /// The model id, e.g. `gpt-4o-mini` or `qwen2.5:7b`; required with `openai`.
    pub model_name: Option<String>,
    /// Limit for one model call attempt (transient failures are retried twice).
    pub model_timeout_seconds: u64,
    /// Sampling temperature sent with every model call (0 to 2). Low: the
    /// agents look facts up and cite them. Ollama and vLLM use 1.0 when
    /// none is sent.
    pub model_temperature: f64,
    /// Most tokens one model answer may have. A reply cut off there is
    /// never shown: the turn fails with a "could not finish" note.
    pub model_max_output_tokens: u32,
    /// The request field of that cap: `max_tokens` (Ollama, vLLM,
    /// llama.cpp, most OpenAI models) or `max_completion_tokens` (OpenAI's
    /// reasoning models, which refuse `max_tokens`).
    pub model_output_cap_field: ModelOutputCapField,
    /// Most subagents of one conversation that run at once (order
    /// investigators started by the refund specialist); the rest wait.
    pub subagents_per_conversation: usize,
    /// Mount the sandbox carrier's tracking pages here (empty: don't).
    pub carrier_path: String,
    /// The carrier whose tracking pages the specialist reads, as shipments
    /// name it (`parcelway`, the sandbox carrier): a shipment with another
    /// carrier is never looked up on its pages.
    pub carrier_name: String,
    /// The carrier's tracking page, `{tracking_number}` standing for the
    /// shipment's number (`COUNTERSIGN_CARRIER_TRACKING_URL`); default:
    /// the sandbox carrier this server mounts.
    pub carrier_tracking_url: Option<String>,
    /// The Chromium the browser lane drives (Debian's by default). Where
    /// it is missing, carrier checks answer "unknown" with that reason.
    pub browser_executable: String,
    /// The longest one page read may take, browser start included.
    pub browser_timeout_seconds: u64,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("listen", &self.listen)
            .field("database_url", &redact_url(&self.database_url))
            .field("public_url", &self.public_url.as_deref().map(redact_url))
            .field("site_root", &self.site_root)
            .field("log_format", &self.log_format)
            .field("metrics_token", &self.metrics_token)
            .field("demo_password", &self.demo_password)
            .field("seed_demo", &self.seed_demo)
            .field("session_idle_minutes", &self.session_idle_minutes)
            .field("session_absolute_hours", &self.session_absolute_hours)
            .field(
                "login_max_failures_per_account",
                &self.login_max_failures_per_account,
            )
            .field(
                "login_max_failures_per_address",
                &self.login_max_failures_per_address,
            )
            .field("login_window_minutes", &self.login_window_minutes)
            .field("trust_forwarded_for", &self.trust_forwarded_for)
            .field("payment_provider", &self.payment_provider)
            .field(
                "payment_base_url",
                &self.payment_base_url.as_deref().map(redact_url),
            )
            .field("stripe_secret_key", &self.stripe_secret_key)
            .field(
                "payment_connect_timeout_ms",
                &self.payment_connect_timeout_ms,
            )
            .field("payment_timeout_ms", &self.payment_timeout_ms)
            .field("sandbox_path", &self.sandbox_path)
            .field("sandbox_faults", &self.sandbox_faults)
            .field("sandbox_secret_key", &self.sandbox_secret_key)
            .field("proposal_ttl_hours", &self.proposal_ttl_hours)
            .field("approval_ttl_hours", &self.approval_ttl_hours)
            .field(
                "max_proposals_per_submitter",
                &self.max_proposals_per_submitter,
            )
            .field(
                "proposal_submission_window_minutes",
                &self.proposal_submission_window_minutes,
            )
            .field("four_eyes_threshold_minor", &self.four_eyes_threshold_minor)
            .field(
                "default_approval_limit_minor",
                &self.default_approval_limit_minor,
            )
            .field("execution_lease_seconds", &self.execution_lease_seconds)
            .field("key_retention_hours", &self.key_retention_hours)
            .field("max_unknown_checks", &self.max_unknown_checks)
            .field(
                "reconcile_interval_seconds",
                &self.reconcile_interval_seconds,
            )
            .field("executor_name", &self.executor_name)
            .field("model_backend", &self.model_backend)
            .field(
                "model_base_url",
                &self.model_base_url.as_deref().map(redact_url),
            )
            .field("model_api_key", &self.model_api_key)
            .field("model_name", &self.model_name)
            .field("model_timeout_seconds", &self.model_timeout_seconds)
            .field(
                "subagents_per_conversation",
                &self.subagents_per_conversation,
            )
            .field("carrier_path", &self.carrier_path)
            .field("carrier_name", &self.carrier_name)
            .field(
                "carrier_tracking_url",
                &self.carrier_tracking_url.as_deref().map(redact_url),
            )
            .field("browser_executable", &self.browser_executable)
            .field("browser_timeout_seconds", &self.browser_timeout_seconds)
            .field("model_temperature", &self.model_temperature)
            .field("model_max_output_tokens", &self.model_max_output_tokens)
            .field("model_output_cap_field", &self.model_output_cap_field)
            .field("gateway_group", &self.gateway_group)
            .field("gateway_master_key", &self.gateway_master_key)
            .field("gateway_key_broker", &self.gateway_key_broker)
            .field("gateway_vault_address", &self.gateway_vault_address)
            .field("gateway_vault_token", &self.gateway_vault_token)
            .field("gateway_vault_mount", &self.gateway_vault_mount)
            .field("gateway_vault_key", &self.gateway_vault_key)
            .field("gateway_vault_namespace", &self.gateway_vault_namespace)
            .field("gateway_returns_desk", &self.gateway_returns_desk)
            .field("gateway_forward", &self.gateway_forward)
            .field("gateway_max_depth", &self.gateway_max_depth)
            .finish()
    }
}

/// Which chat model drives the agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ModelBackend {
    /// `countersign-offline-rules`: deterministic rules, the embedded default.
    #[default]
    Offline,
    /// An OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp).
    Openai,
}

/// Which request field carries the model's output cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ModelOutputCapField {
    #[default]
    MaxTokens,
    MaxCompletionTokens,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PaymentProviderKind {
    #[default]
    Sandbox,
    Stripe,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], 3000)),
            database_url: "sqlite://data/countersign.db".to_owned(),
            public_url: None,
            site_root: "target/site".to_owned(),
            log_format: LogFormat::Text,
            metrics_token: None,
            demo_password: None,
            seed_demo: None,
            session_idle_minutes: 30,
            session_absolute_hours: 12,
            login_max_failures_per_account: 5,
            login_max_failures_per_address: 20,
            login_window_minutes: 15,
            trust_forwarded_for: false,
            payment_provider: PaymentProviderKind::Sandbox,
            payment_base_url: None,
            stripe_secret_key: None,
            payment_connect_timeout_ms: 3_000,
            payment_timeout_ms: 10_000,
            sandbox_path: "/sandbox/payments".to_owned(),
            sandbox_faults: None,
            sandbox_secret_key: None,
            proposal_ttl_hours: 48,
            approval_ttl_hours: 24,
            max_proposals_per_submitter: 30,
            proposal_submission_window_minutes: 60,
            four_eyes_threshold_minor: 50_000,
            default_approval_limit_minor: 100_000,
            execution_lease_seconds: 60,
            key_retention_hours: 24,
            max_unknown_checks: 8,
            reconcile_interval_seconds: 5,
            work_runner: true,
            gateway_group: None,
            gateway_master_key: None,
            gateway_key_broker: KeyBrokerKind::Embedded,
            gateway_vault_address: None,
            gateway_vault_token: None,
            gateway_vault_mount: "transit".to_owned(),
            gateway_vault_key: None,
            gateway_vault_namespace: None,
            gateway_returns_desk: None,
            gateway_forward: None,
            gateway_max_depth: gateway::DEFAULT_MAX_DEPTH,
            executor_name: None,
            model_backend: ModelBackend::Offline,
            model_base_url: None,
            model_api_key: None,
            model_name: None,
            model_timeout_seconds: 60,
            model_temperature: 0.2,
            model_max_output_tokens: 1024,
            model_output_cap_field: ModelOutputCapField::MaxTokens,
            subagents_per_conversation: engine::assistant::DEFAULT_SUBAGENT_LIMIT,
            carrier_path: "/sandbox/carrier".to_owned(),
            carrier_name: connectors::carrier_sandbox::SANDBOX_CARRIER.to_owned(),
            carrier_tracking_url: None,
            browser_executable: connectors::browser::DEBIAN_CHROMIUM.to_owned(),
            browser_timeout_seconds: 20,
        }
    }
}

/// How long a retired key version still verifies: long enough for peers to
/// learn the new one from the agent card.
const KEY_OVERLAP: chrono::Duration = chrono::Duration::hours(24);

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration: {0}")]
    Load(#[from] Box<figment::Error>),
    #[error("configuration: {0}")]
    Invalid(String),
}

impl Settings {
    /// Where this group's signing key is kept; None when it has none (no
    /// group, or the embedded broker without a master key).
    ///
    /// # Errors
    /// A setting that cannot work (also refused by [`Settings::validate`]).
    pub fn key_source(&self) -> anyhow::Result<Option<engine::gateway::KeySource>> {
        let Some(group) = self.gateway_group.as_deref() else {
            return Ok(None);
        };
        match self.gateway_key_broker {
            KeyBrokerKind::Embedded => Ok(match &self.gateway_master_key {
                Some(key) => Some(engine::gateway::KeySource::Embedded(
                    gateway::MasterKey::parse(key.expose_secret())?,
                )),
                None => None,
            }),
            KeyBrokerKind::Vault => {
                let config = connectors::vault::TransitConfig {
                    address: self.gateway_vault_address.clone().unwrap_or_default(),
                    mount: self.gateway_vault_mount.clone(),
                    key: self
                        .gateway_vault_key
                        .clone()
                        .unwrap_or_else(|| format!("countersign-{group}")),
                    token: self
                        .gateway_vault_token
                        .clone()
                        .unwrap_or_else(|| SecretString::from(String::new())),
                    namespace: self.gateway_vault_namespace.clone(),
                };
                let client = connectors::vault::TransitClient::new(
                    config,
                    connectors::HttpTimeouts::default(),
                )?;
                Ok(Some(engine::gateway::KeySource::vault(client)?))
            }
        }
    }

    /// Whether this group can sign (and so send, answer signed and pass
    /// tasks on).
    fn signs(&self) -> bool {
        match self.gateway_key_broker {
            KeyBrokerKind::Embedded => self.gateway_master_key.is_some(),
            KeyBrokerKind::Vault => true,
        }
    }

    /// This group's own signing keys, when the group and its key are set
    /// (both were checked by [`Settings::validate`]).
    pub fn own_keys(
        &self,
        db: &storage::Database,
        clock: engine::Clock,
    ) -> Option<engine::gateway::Keys> {
        let group = gateway::GroupName::parse(self.gateway_group.as_deref()?).ok()?;
        let source = self.key_source().ok()??;
        Some(source.open(db, &clock, &group, KEY_OVERLAP))
    }

    /// What the engine's gateway is made of, when a group is set.
    ///
    /// # Errors
    /// The kinds' schemas or the peer client cannot be built (a bug, not a
    /// setting: the values were checked by [`Settings::validate`]).
    pub fn gateway_parts(&self) -> anyhow::Result<Option<engine::gateway::GatewayParts>> {
        let Some(group) = self.gateway_group.as_deref() else {
            return Ok(None);
        };
        Ok(Some(engine::gateway::GatewayParts {
            group: gateway::GroupName::parse(group)?,
            keys: self.key_source()?,
            key_overlap: KEY_OVERLAP,
            kinds: std::sync::Arc::new(engine::gateway::catalogue()?),
            client: connectors::a2a::A2aClient::new(connectors::HttpTimeouts::default())?,
            returns_desk: self
                .gateway_returns_desk
                .as_deref()
                .map(gateway::GroupName::parse)
                .transpose()?,
            forwards: forwards(self.gateway_forward.as_deref().unwrap_or_default())?,
            max_depth: self.gateway_max_depth,
        }))
    }

    /// Loads settings from the defaults, the TOML file and the environment.
    ///
    /// # Errors
    /// A malformed file or variable, or a value out of range.
    pub fn load() -> Result<Self, ConfigError> {
        let file =
            std::env::var("COUNTERSIGN_CONFIG").unwrap_or_else(|_| "countersign.toml".into());
        let settings: Settings = Figment::from(Serialized::defaults(Settings::default()))
            .merge(Toml::file(file))
            .merge(Env::prefixed("COUNTERSIGN_").ignore(&["config"]))
            .extract()
            .map_err(Box::new)?;
        settings.validate()?;
        Ok(settings)
    }

    fn validate_key_broker(&self) -> Result<(), ConfigError> {
        if self.gateway_key_broker != KeyBrokerKind::Vault {
            return Ok(());
        }
        let invalid = |why: &str| {
            ConfigError::Invalid(format!(
                "gateway_key_broker = \"vault\" (COUNTERSIGN_GATEWAY_KEY_BROKER): {why}"
            ))
        };
        if self.gateway_group.is_none() {
            return Err(invalid("needs COUNTERSIGN_GATEWAY_GROUP"));
        }
        if self.gateway_vault_address.is_none() {
            return Err(invalid(
                "needs COUNTERSIGN_GATEWAY_VAULT_ADDRESS (Vault's address)",
            ));
        }
        if self
            .gateway_vault_token
            .as_ref()
            .is_none_or(|token| token.expose_secret().trim().is_empty())
        {
            return Err(invalid(
                "needs COUNTERSIGN_GATEWAY_VAULT_TOKEN (a token allowed to sign with the key)",
            ));
        }
        self.key_source().map_err(|e| invalid(&e.to_string()))?;
        Ok(())
    }

    /// # Errors
    /// [`ConfigError::Invalid`] naming the setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(group) = &self.gateway_group {
            gateway::GroupName::parse(group).map_err(|e| {
                ConfigError::Invalid(format!("gateway_group (COUNTERSIGN_GATEWAY_GROUP): {e}"))
            })?;
        }
        if let Some(master) = &self.gateway_master_key {
            gateway::MasterKey::parse(master.expose_secret()).map_err(|e| {
                ConfigError::Invalid(format!(
                    "gateway_master_key (COUNTERSIGN_GATEWAY_MASTER_KEY): {e}"
                ))
            })?;
        }
        self.validate_key_broker()?;
        if let Some(desk) = &self.gateway_returns_desk {
            let invalid = |why: String| {
                ConfigError::Invalid(format!(
                    "gateway_returns_desk (COUNTERSIGN_GATEWAY_RETURNS_DESK): {why}"
                ))
            };
            gateway::GroupName::parse(desk).map_err(|e| invalid(e.to_string()))?;
            if self.gateway_group.is_none() || !self.signs() {
                return Err(invalid(
                    "asking another group needs COUNTERSIGN_GATEWAY_GROUP and a signing key \
                     (COUNTERSIGN_GATEWAY_MASTER_KEY, or the Vault broker): the task is signed \
                     with this group's key"
                        .to_owned(),
                ));
            }
            if self.gateway_group.as_deref() == Some(desk.as_str()) {
                return Err(invalid("a group does not send tasks to itself".to_owned()));
            }
        }
        if let Some(forward) = &self.gateway_forward {
            let invalid = |why: String| {
                ConfigError::Invalid(format!(
                    "gateway_forward (COUNTERSIGN_GATEWAY_FORWARD): {why}"
                ))
            };
            let forwards = forwards(forward).map_err(|e| invalid(e.to_string()))?;
            if !self.signs() {
                return Err(invalid(
                    "passing tasks on needs a signing key (COUNTERSIGN_GATEWAY_MASTER_KEY, or \
                     the Vault broker): the child task is signed with this group's key"
                        .to_owned(),
                ));
            }
            let me = self.gateway_group.as_deref().unwrap_or_default();
            if let Some(kind) = forwards
                .iter()
                .find(|(_, to)| to.as_str() == me)
                .map(|(k, _)| k)
            {
                return Err(invalid(format!("{kind} is passed on to this group itself")));
            }
        }
        if self.session_idle_minutes < 1 || self.session_absolute_hours < 1 {
            return Err(ConfigError::Invalid(
                "session_idle_minutes and session_absolute_hours must be at least 1".into(),
            ));
        }
        if self.login_window_minutes < 1 {
            return Err(ConfigError::Invalid(
                "login_window_minutes must be at least 1".into(),
            ));
        }
        if self.payment_provider == PaymentProviderKind::Stripe && self.stripe_secret_key.is_none()
        {
            return Err(ConfigError::Invalid(
                "payment_provider = \"stripe\" needs stripe_secret_key".into(),
            ));
        }
        if self.payment_provider == PaymentProviderKind::Sandbox
            && self.payment_base_url.is_none()
            && self.sandbox_path.is_empty()
        {
            return Err(ConfigError::Invalid(
                "the sandbox provider needs payment_base_url or a sandbox_path to mount it".into(),
            ));
        }
        if self.payment_provider == PaymentProviderKind::Sandbox
            && self.payment_base_url.is_some()
            && self.sandbox_secret_key.is_none()
        {
            return Err(ConfigError::Invalid(
                "a sandbox at payment_base_url needs sandbox_secret_key (COUNTERSIGN_SANDBOX_SECRET_KEY)".into(),
            ));
        }
        if !self.sandbox_path.is_empty() && !self.sandbox_path.starts_with('/') {
            return Err(ConfigError::Invalid(
                "sandbox_path must start with /".into(),
            ));
        }
        if self.proposal_ttl_hours < 1
            || self.approval_ttl_hours < 1
            || self.execution_lease_seconds < 5
        {
            return Err(ConfigError::Invalid(
                "proposal_ttl_hours and approval_ttl_hours must be at least 1, execution_lease_seconds at least 5".into(),
            ));
        }
        if self.max_proposals_per_submitter < 1 || self.proposal_submission_window_minutes < 1 {
            return Err(ConfigError::Invalid(
                "max_proposals_per_submitter and proposal_submission_window_minutes must be at least 1".into(),
            ));
        }
        if self.model_backend == ModelBackend::Openai {
            let base_ok = self
                .model_base_url
                .as_deref()
                .is_some_and(|url| url.starts_with("http://") || url.starts_with("https://"));
            if !base_ok {
                return Err(ConfigError::Invalid(
                    "model_backend = \"openai\" needs model_base_url, an http(s) URL".into(),
                ));
            }
            if self
                .model_name
                .as_deref()
                .is_none_or(|name| name.trim().is_empty())
            {
                return Err(ConfigError::Invalid(
                    "model_backend = \"openai\" needs model_name".into(),
                ));
            }
        }
        if !(1..=32).contains(&self.subagents_per_conversation) {
            return Err(ConfigError::Invalid(
                "subagents_per_conversation must be between 1 and 32".into(),
            ));
        }
        self.validate_carrier()?;
        if self.model_timeout_seconds < 1 {
            return Err(ConfigError::Invalid(
                "model_timeout_seconds must be at least 1".into(),
            ));
        }
        if !(0.0..=2.0).contains(&self.model_temperature) {
            return Err(ConfigError::Invalid(
                "model_temperature must be between 0 and 2".into(),
            ));
        }
        if self.model_max_output_tokens < 16 {
            return Err(ConfigError::Invalid(
                "model_max_output_tokens must be at least 16".into(),
            ));
        }
        if let Some(token) = &self.metrics_token
            && token.expose_secret().trim().len() < 16
        {
            return Err(ConfigError::Invalid(
                "metrics_token must be at least 16 characters (a guessable token would publish the metrics)".into(),
            ));
        }
        if let Some(url) = &self.public_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ConfigError::Invalid(
                "public_url must start with http:// or https://".into(),
            ));
        }
        Ok(())
    }

    fn validate_carrier(&self) -> Result<(), ConfigError> {
        if !self.carrier_path.is_empty() && !self.carrier_path.starts_with('/') {
            return Err(ConfigError::Invalid(
                "carrier_path must start with /".into(),
            ));
        }
        if !engine::orders::is_carrier_name(&self.carrier_name) {
            return Err(ConfigError::Invalid(format!(
                "carrier_name must be 1 to {} lowercase letters, digits, '-' or '_' (as shipments name the carrier)",
                engine::orders::MAX_CARRIER_LEN
            )));
        }
        if let Some(url) = &self.carrier_tracking_url
            && (!(url.starts_with("http://") || url.starts_with("https://"))
                || !url.contains("{tracking_number}"))
        {
            return Err(ConfigError::Invalid(
                "carrier_tracking_url must be an http(s) URL containing {tracking_number}".into(),
            ));
        }
        let longest = engine::assistant::carrier::MAX_BROWSER_TIMEOUT.as_secs();
        if !(1..=longest).contains(&self.browser_timeout_seconds) {
            return Err(ConfigError::Invalid(format!(
                "browser_timeout_seconds must be between 1 and {longest}"
            )));
        }
        Ok(())
    }

    /// Whether the specialist reads a carrier's tracking pages: one is
    /// configured, or the sandbox carrier is mounted.
    pub fn carrier_enabled(&self) -> bool {
        self.carrier_tracking_url.is_some() || !self.carrier_path.is_empty()
    }

    /// Whether this server serves the sandbox carrier's pages: only while
    /// no real carrier is configured, so a production server never exposes
    /// a stand-in carrier (or its page-holding control) next to the real one.
    pub fn sandbox_carrier_mounted(&self) -> bool {
        !self.carrier_path.is_empty() && self.carrier_tracking_url.is_none()
    }

    /// The browser lane's carrier, for a server bound to `bound`: the
    /// configured tracking page, or the mounted sandbox carrier's.
    pub fn carrier_parts(&self, bound: std::net::SocketAddr) -> Option<engine::CarrierParts> {
        let tracking_url = match &self.carrier_tracking_url {
            Some(url) => url.clone(),
            None if self.sandbox_carrier_mounted() => {
                // The browser runs on this machine: the loopback address
                // reaches this server whatever interface it listens on.
                let host = if bound.ip().is_unspecified() {
                    std::net::SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), bound.port())
                } else {
                    bound
                };
                format!(
                    "http://{host}{}/track/{{tracking_number}}",
                    self.carrier_path
                )
            }
            None => return None,
        };
        Some(engine::CarrierParts {
            carrier: self.carrier_name.clone(),
            browser: self.browser_executable.clone().into(),
            timeout: std::time::Duration::from_secs(self.browser_timeout_seconds),
            tracking_url,
        })
    }

    pub fn is_sqlite(&self) -> bool {
        self.database_url.starts_with("sqlite:")
    }

    pub fn secure_cookies(&self) -> bool {
        self.public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"))
    }

    /// The origin browsers send for this server, if configured.
    pub fn public_origin(&self) -> Option<String> {
        self.public_url
            .as_deref()
            .map(|url| url.trim_end_matches('/').to_owned())
    }

    /// The URL people should open.
    pub fn display_url(&self) -> String {
        self.public_origin()
            .unwrap_or_else(|| format!("http://{}", self.listen))
    }

    pub fn should_seed_demo(&self) -> bool {
        self.seed_demo.unwrap_or_else(|| self.is_sqlite())
    }

    /// The rules for proposals, approvals and execution.
    pub fn engine_settings(&self) -> engine::EngineSettings {
        let defaults = engine::EngineSettings::default();
        engine::EngineSettings {
            proposal_ttl: chrono::Duration::hours(self.proposal_ttl_hours),
            approval_ttl: chrono::Duration::hours(self.approval_ttl_hours),
            four_eyes_threshold_minor: self.four_eyes_threshold_minor,
            default_approval_limit_minor: (self.default_approval_limit_minor > 0)
                .then_some(self.default_approval_limit_minor),
            lease: chrono::Duration::seconds(self.execution_lease_seconds),
            key_retention: chrono::Duration::hours(self.key_retention_hours),
            max_unknown_checks: self.max_unknown_checks,
            submission_limit: engine::proposals::SubmissionLimit {
                max_per_window: self.max_proposals_per_submitter,
                window: chrono::Duration::minutes(self.proposal_submission_window_minutes),
            },
            executor_name: self.executor_name.clone().unwrap_or_else(host_name),
            sign_in: engine::accounts::ThrottlePolicy {
                max_failures_per_account_and_address: self.login_max_failures_per_account,
                max_failures_per_address: self.login_max_failures_per_address,
                window: chrono::Duration::minutes(self.login_window_minutes),
                ..engine::accounts::ThrottlePolicy::default()
            },
            ..defaults
        }
    }

    /// A database URL safe to log (password removed).
    pub fn redacted_database_url(&self) -> String {
        redact_url(&self.database_url)
    }
}

/// `url` with the password in its authority (`user:***@`) and any
/// `password=` query parameter (libpq style) replaced by `***`.
fn redact_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut redacted = match base.find("://") {
        Some(scheme_end) => {
            let rest = &base[scheme_end + 3..];
            let authority_end = rest.find('/').unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => {
                    let user = rest[..at].split(':').next().unwrap_or_default();
                    format!("{}://{user}:***@{}", &base[..scheme_end], &rest[at + 1..])
                }
                None => base.to_owned(),
            }
        }
        None => base.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        redacted.push('?');
        redacted.push_str(&pairs.join("&"));
    }
    redacted
}

/// The default worker name: the host's, which survives a restart of the
/// process and differs between machines and containers.
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .map_or_else(|| "countersign".to_owned(), |name| format!("worker-{name}"))
}

/// `kind=group` pairs, comma-separated: each kind known here, named once.
///
/// # Errors
/// A pair without `=`, a kind this build does not know, a malformed group,
/// a kind named twice.
fn forwards(text: &str) -> anyhow::Result<engine::gateway::Forwards> {
    let known = engine::gateway::catalogue()?;
    let mut forwards = engine::gateway::Forwards::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (kind, group) = pair
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("`{pair}` is not `kind=group`"))?;
        let kind = gateway::TaskKind::parse(kind.trim())?;
        if !known.knows(&kind) {
            anyhow::bail!("{kind} is not a task kind this build knows");
        }
        let group = gateway::GroupName::parse(group.trim())?;
        if forwards.insert(kind.clone(), group).is_some() {
            anyhow::bail!("{kind} is named twice");
        }
    }
    Ok(forwards)
}

#[cfg(test)]
#[allow(
    clippy::result_large_err,
    reason = "figment's Jail API returns its own large error"
)]
mod tests {
    use super::*;

    #[test]
    fn the_browser_lane_reads_the_mounted_sandbox_carrier_over_loopback_unless_a_carrier_is_named()
    {
        let bound: SocketAddr = "0.0.0.0:3000".parse().unwrap();
        let default = Settings::default().carrier_parts(bound).unwrap();
        assert_eq!(
            default.tracking_url,
            "http://127.0.0.1:3000/sandbox/carrier/track/{tracking_number}"
        );
        assert_eq!(
            default.browser,
            std::path::PathBuf::from("/usr/bin/chromium")
        );
        assert_eq!(default.carrier, "parcelway");
        let named = Settings {
            carrier_tracking_url: Some("https://track.example/{tracking_number}".into()),
            ..Settings::default()
        };
        assert_eq!(
            named.carrier_parts(bound).unwrap().tracking_url,
            "https://track.example/{tracking_number}"
        );
        let none = Settings {
            carrier_path: String::new(),
            ..Settings::default()
        };
        assert!(!none.carrier_enabled() && none.carrier_parts(bound).is_none());
    }

    #[test]
    fn a_carrier_or_browser_setting_that_cannot_work_is_refused_at_start() {
        for (bad, says) in [
            (
                Settings {
                    carrier_tracking_url: Some("https://track.example/".into()),
                    ..Settings::default()
                },
                "{tracking_number}",
            ),
            (
                Settings {
                    carrier_path: "sandbox/carrier".into(),
                    ..Settings::default()
                },
                "carrier_path",
            ),
            (
                Settings {
                    carrier_name: "Parcel Way".into(),
                    ..Settings::default()
                },
                "carrier_name",
            ),
            (
                Settings {
                    browser_timeout_seconds: 0,
                    ..Settings::default()
                },
                "browser_timeout_seconds",
            ),
        ] {
            let refused = bad.validate().unwrap_err().to_string();
            assert!(refused.contains(says), "{refused}");
        }
        assert!(Settings::default().validate().is_ok());
    }

    #[test]
    fn database_passwords_are_redacted_for_logs() {
        assert_eq!(
            redact_url("postgres://cs:secret@localhost:5432/cs"),
            "postgres://cs:***@localhost:5432/cs"
        );
        assert_eq!(redact_url("sqlite://data/x.db"), "sqlite://data/x.db");
    }

    #[test]
    fn debugging_the_settings_never_prints_the_database_password() {
        let settings = Settings {
            database_url: "postgres://u:pw-s3cr3t@h/db".to_owned(),
            payment_base_url: Some("https://k:hunter2@pay.example/v1".to_owned()),
            ..Settings::default()
        };
        for shown in [format!("{settings:?}"), format!("{settings:#?}")] {
            assert!(!shown.contains("pw-s3cr3t"), "{shown}");
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(shown.contains("postgres://u:***@h/db"), "{shown}");
            assert!(shown.contains("session_idle_minutes"), "{shown}");
        }
        let in_query = Settings {
            database_url: "postgres://h/db?user=u&password=pw-s3cr3t&sslmode=require".to_owned(),
            ..Settings::default()
        };
        let shown = format!("{in_query:?}");
        assert!(!shown.contains("pw-s3cr3t"), "{shown}");
        assert!(shown.contains("sslmode=require"), "{shown}");
    }

    #[test]
    fn environment_variables_override_the_defaults() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("COUNTERSIGN_DATABASE_URL", "postgres://u:p@h/db");
            jail.set_env("COUNTERSIGN_LISTEN", "0.0.0.0:8080");
            jail.create_file("countersign.toml", "session_idle_minutes = 5")?;
            let settings = Settings::load().map_err(|e| e.to_string())?;
            assert_eq!(settings.database_url, "postgres://u:p@h/db");
            assert_eq!(settings.listen.port(), 8080);
            assert_eq!(settings.session_idle_minutes, 5);
            assert!(!settings.should_seed_demo());
            Ok(())
        });
    }

    #[test]
    fn a_gateway_group_or_master_key_that_cannot_work_is_refused_at_start_and_the_key_never_printed()
     {
        let bad_group = Settings {
            gateway_group: Some("Support Team".to_owned()),
            ..Settings::default()
        };
        let error = bad_group.validate().unwrap_err().to_string();
        assert!(error.contains("COUNTERSIGN_GATEWAY_GROUP"), "{error}");
        let short_key = Settings {
            gateway_group: Some("support".to_owned()),
            gateway_master_key: Some("c2hvcnQ".to_owned().into()),
            ..Settings::default()
        };
        let error = short_key.validate().unwrap_err().to_string();
        assert!(error.contains("COUNTERSIGN_GATEWAY_MASTER_KEY"), "{error}");
        let master = gateway::MasterKey::generate();
        let good = Settings {
            gateway_group: Some("support".to_owned()),
            gateway_master_key: Some(master.clone().into()),
            ..Settings::default()
        };
        good.validate().unwrap();
        assert!(!format!("{good:?}").contains(&master));
    }

    #[test]
    fn a_vault_broker_without_its_address_or_token_or_with_a_bad_key_name_is_refused_at_start() {
        let vault = |address: Option<&str>, token: Option<&str>, key: Option<&str>| Settings {
            gateway_group: Some("support".to_owned()),
            gateway_key_broker: KeyBrokerKind::Vault,
            gateway_vault_address: address.map(str::to_owned),
            gateway_vault_token: token.map(|t| t.to_owned().into()),
            gateway_vault_key: key.map(str::to_owned),
            ..Settings::default()
        };
        let address = Some("https://vault.example:8200");
        for (settings, expected) in [
            (
                vault(None, Some("hvs.x"), None),
                "COUNTERSIGN_GATEWAY_VAULT_ADDRESS",
            ),
            (
                vault(address, None, None),
                "COUNTERSIGN_GATEWAY_VAULT_TOKEN",
            ),
            (
                vault(address, Some("  "), None),
                "COUNTERSIGN_GATEWAY_VAULT_TOKEN",
            ),
            (
                vault(Some("vault.example"), Some("hvs.x"), None),
                "is invalid",
            ),
            (
                vault(address, Some("hvs.x"), Some("a key")),
                "key id \"a key\" is not valid",
            ),
            (
                Settings {
                    gateway_group: None,
                    ..vault(address, Some("hvs.x"), None)
                },
                "needs COUNTERSIGN_GATEWAY_GROUP",
            ),
        ] {
            let error = settings.validate().unwrap_err().to_string();
            assert!(error.contains("COUNTERSIGN_GATEWAY_KEY_BROKER"), "{error}");
            assert!(error.contains(expected), "{error}");
            assert!(!error.contains("hvs.x"), "never the token: {error}");
        }
        // With Vault holding the key, the group signs: it may ask the
        // returns desk without a master key, and its key id is the
        // transit key's name.
        let good = Settings {
            gateway_returns_desk: Some("returns".to_owned()),
            ..vault(address, Some("hvs.secret"), None)
        };
        good.validate().unwrap();
        assert!(!format!("{good:?}").contains("hvs.secret"));
        match good.key_source().unwrap().unwrap() {
            engine::gateway::KeySource::Vault(client, key_id) => {
                assert_eq!(key_id.as_str(), "countersign-support");
                assert!(
                    client
                        .describe()
                        .contains("https://vault.example:8200/v1/transit")
                );
            }
            engine::gateway::KeySource::Embedded(_) => panic!("the embedded broker was chosen"),
        }
    }

    #[test]
    fn a_forward_that_cannot_work_is_refused_at_start_with_what_is_wrong() {
        let master = gateway::MasterKey::generate();
        let with = |forward: &str, master: Option<String>| Settings {
            gateway_group: Some("returns".to_owned()),
            gateway_master_key: master.map(Into::into),
            gateway_forward: Some(forward.to_owned()),
            ..Settings::default()
        };
        let key = || Some(master.clone());
        for (forward, master, expected) in [
            ("returns.inspection", key(), "is not `kind=group`"),
            (
                "returns.teleport=warehouse",
                key(),
                "not a task kind this build knows",
            ),
            (
                "returns.inspection=returns",
                key(),
                "passed on to this group itself",
            ),
            (
                "returns.inspection=warehouse,returns.inspection=dock",
                key(),
                "named twice",
            ),
            (
                "returns.inspection=warehouse",
                None,
                "needs a signing key (COUNTERSIGN_GATEWAY_MASTER_KEY, or the Vault broker)",
            ),
        ] {
            let error = with(forward, master).validate().unwrap_err().to_string();
            assert!(error.contains("COUNTERSIGN_GATEWAY_FORWARD"), "{error}");
            assert!(error.contains(expected), "{forward}: {error}");
        }
        let good = with(" returns.inspection = warehouse ", key());
        good.validate().unwrap();
        let parts = good.gateway_parts().unwrap().unwrap();
        assert_eq!(
            parts.forwards[&gateway::TaskKind::parse("returns.inspection").unwrap()].as_str(),
            "warehouse"
        );
    }

    #[test]
    fn out_of_range_settings_are_refused_with_their_name() {
        let settings = Settings {
            session_idle_minutes: 0,
            ..Settings::default()
        };
        let error = settings.validate().unwrap_err().to_string();
        assert!(error.contains("session_idle_minutes"), "{error}");
    }

    #[test]
    fn the_openai_model_backend_needs_a_base_url_and_a_model_name() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("COUNTERSIGN_MODEL_BACKEND", "openai");
            let error = Settings::load().map(|_| ()).unwrap_err().to_string();
            assert!(error.contains("model_base_url"), "{error}");
            jail.set_env("COUNTERSIGN_MODEL_BASE_URL", "http://localhost:11434/v1");
            jail.set_env("COUNTERSIGN_MODEL_NAME", "qwen2.5:7b");
            jail.set_env("COUNTERSIGN_MODEL_API_KEY", "sk-test");
            let settings = Settings::load().map_err(|e| e.to_string())?;
            assert_eq!(settings.model_backend, ModelBackend::Openai);
            assert_eq!(settings.model_name.as_deref(), Some("qwen2.5:7b"));
            assert!(settings.model_api_key.is_some());
            assert_eq!(settings.model_temperature, 0.2);
            assert_eq!(settings.model_max_output_tokens, 1024);
            jail.set_env("COUNTERSIGN_MODEL_TEMPERATURE", "0");
            jail.set_env("COUNTERSIGN_MODEL_MAX_OUTPUT_TOKENS", "2048");
            jail.set_env(
                "COUNTERSIGN_MODEL_OUTPUT_CAP_FIELD",
                "max_completion_tokens",
            );
            let tuned = Settings::load().map_err(|e| e.to_string())?;
            assert_eq!(tuned.model_temperature, 0.0);
            assert_eq!(tuned.model_max_output_tokens, 2048);
            assert_eq!(
                tuned.model_output_cap_field,
                ModelOutputCapField::MaxCompletionTokens
            );
            jail.set_env("COUNTERSIGN_MODEL_TEMPERATURE", "3");
            let error = Settings::load().map(|_| ()).unwrap_err().to_string();
            assert!(error.contains("model_temperature"), "{error}");
            Ok(())
        });
        assert_eq!(Settings::default().model_backend, ModelBackend::Offline);
    }
}
