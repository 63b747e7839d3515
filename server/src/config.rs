//! Typed settings: defaults, then `countersign.toml` (or the file named by
//! `COUNTERSIGN_CONFIG`), then `COUNTERSIGN_*` environment variables.
//! Every setting is documented in the README.

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// Password for the demo users; a random one is generated and printed when unset.
    #[serde(skip_serializing)]
    pub demo_password: Option<SecretString>,
    /// Seed demo data on an empty database. Defaults to on for SQLite only.
    pub seed_demo: Option<bool>,
    /// A session ends after this long without a request.
    pub session_idle_minutes: i64,
    /// A session ends this long after sign-in, however active.
    pub session_absolute_hours: i64,
    pub login_max_failures_per_account: u64,
    pub login_max_failures_per_address: u64,
    pub login_window_minutes: i64,
    /// Take the client address from `X-Forwarded-For` (only behind a proxy you run).
    pub trust_forwarded_for: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], 3000)),
            database_url: "sqlite://data/countersign.db".to_owned(),
            public_url: None,
            site_root: "target/site".to_owned(),
            log_format: LogFormat::Text,
            demo_password: None,
            seed_demo: None,
            session_idle_minutes: 30,
            session_absolute_hours: 12,
            login_max_failures_per_account: 5,
            login_max_failures_per_address: 20,
            login_window_minutes: 15,
            trust_forwarded_for: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration: {0}")]
    Load(#[from] Box<figment::Error>),
    #[error("configuration: {0}")]
    Invalid(String),
}

impl Settings {
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

    /// # Errors
    /// [`ConfigError::Invalid`] naming the setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
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
        if let Some(url) = &self.public_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Invalid(
                    "public_url must start with http:// or https://".into(),
                ));
            }
        }
        Ok(())
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

    /// A database URL safe to log (password removed).
    pub fn redacted_database_url(&self) -> String {
        redact_url(&self.database_url)
    }
}

fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{}://{}:***@{}", &url[..scheme_end], user, &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_passwords_are_redacted_for_logs() {
        assert_eq!(
            redact_url("postgres://cs:secret@localhost:5432/cs"),
            "postgres://cs:***@localhost:5432/cs"
        );
        assert_eq!(redact_url("sqlite://data/x.db"), "sqlite://data/x.db");
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
    fn out_of_range_settings_are_refused_with_their_name() {
        let settings = Settings {
            session_idle_minutes: 0,
            ..Settings::default()
        };
        let error = settings.validate().unwrap_err().to_string();
        assert!(error.contains("session_idle_minutes"), "{error}");
    }
}
