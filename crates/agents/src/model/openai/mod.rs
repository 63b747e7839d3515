//! An OpenAI-compatible chat-completions client with tool calling. It sends
//! no provider-specific fields, so the same code talks to OpenAI, Ollama,
//! vLLM and the llama.cpp server.
//!
//! Transient failures (429, 5xx, timeouts, broken connections) are retried
//! with exponential backoff; a model call has no side effects, so a retry is
//! always safe. `Retry-After` is honoured, up to [`Backoff::max`]: a server
//! asking for a longer wait gets a [`ModelError::RateLimited`] back instead.

mod wire;

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use secrecy::{ExposeSecret, SecretString};

use super::{ChatModel, ModelError, ModelRequest, ModelResponse};

/// Exponential backoff between retries: `initial`, doubled each retry, never
/// more than `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    /// 500 ms, doubling, at most 20 s.
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(20),
        }
    }
}

impl Backoff {
    /// The wait before retry number `retry` (0-based).
    #[must_use]
    pub fn delay(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(16));
        self.initial.saturating_mul(factor).min(self.max)
    }
}

/// Where and how to reach the model.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or
    /// `http://localhost:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Sent as a bearer token when set (local servers usually need none).
    pub api_key: Option<SecretString>,
    /// The model id, e.g. `gpt-4o-mini` or `qwen2.5:7b`.
    pub model: String,
    /// Limit for one attempt, from sending to the last byte of the answer.
    pub timeout: Duration,
    /// Retries after the first attempt for transient failures.
    pub max_retries: u32,
    pub backoff: Backoff,
    /// Sampling temperature; `None` sends none (the server's default, which
    /// is 1.0 on Ollama's and vLLM's OpenAI endpoints).
    pub temperature: Option<f64>,
    /// Most tokens one answer may have; `None` sends no cap.
    pub max_output_tokens: Option<u32>,
    /// The field the cap goes in.
    pub output_cap_field: OutputCapField,
}

/// Which request field carries the output cap. `max_tokens` is what
/// Ollama, vLLM and llama.cpp read; OpenAI's reasoning models accept only
/// `max_completion_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputCapField {
    #[default]
    MaxTokens,
    MaxCompletionTokens,
}

impl OutputCapField {
    /// The JSON field name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxTokens => "max_tokens",
            Self::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// A low temperature: the agents look things up and cite them, so
/// consistent, literal answers beat varied ones.
pub const DEFAULT_TEMPERATURE: f64 = 0.2;
/// Room for a full reply or a batch of tool calls, small enough that a
/// model that rambles is stopped (and the turn fails cleanly).
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 1024;

impl OpenAiConfig {
    /// `model` at `base_url`, no key, 60 s per attempt, 2 retries,
    /// temperature 0.2 and at most 1024 output tokens (as `max_tokens`).
    #[must_use]
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            timeout: Duration::from_secs(60),
            max_retries: 2,
            backoff: Backoff::default(),
            temperature: Some(DEFAULT_TEMPERATURE),
            max_output_tokens: Some(DEFAULT_MAX_OUTPUT_TOKENS),
            output_cap_field: OutputCapField::default(),
        }
    }
}

impl fmt::Debug for OpenAiConfig {
    /// The key is never shown, nor any credentials or query in the URL.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base_url = reqwest::Url::parse(&self.base_url).map_or_else(
            |_| "<unparseable>".to_owned(),
            |url| {
                format!(
                    "{}://{}{}",
                    url.scheme(),
                    url.host_str().unwrap_or_default(),
                    url.port()
                        .map(|port| format!(":{port}"))
                        .unwrap_or_default()
                )
            },
        );
        f.debug_struct("OpenAiConfig")
            .field("base_url", &base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .field("temperature", &self.temperature)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("output_cap_field", &self.output_cap_field)
            .finish()
    }
}

/// The model could not be configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid model configuration: {message}")]
pub struct OpenAiConfigError {
    pub message: String,
}

/// A [`ChatModel`] speaking the OpenAI chat-completions protocol.
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    config: OpenAiConfig,
    endpoint: reqwest::Url,
    client: reqwest::Client,
}

impl OpenAiCompatible {
    /// A client for `config`.
    ///
    /// # Errors
    ///
    /// [`OpenAiConfigError`] when the base URL is not an http(s) URL, the
    /// model id is empty, or the HTTP client cannot be built.
    pub fn new(config: OpenAiConfig) -> Result<Self, OpenAiConfigError> {
        let invalid = |message: String| OpenAiConfigError { message };
        if config.model.trim().is_empty() {
            return Err(invalid("the model id is empty".to_owned()));
        }
        let mut endpoint = reqwest::Url::parse(&config.base_url)
            .map_err(|err| invalid(format!("the base URL is invalid: {err}")))?;
        if endpoint.cannot_be_a_base() || !matches!(endpoint.scheme(), "http" | "https") {
            return Err(invalid("the base URL must be an http(s) URL".to_owned()));
        }
        let path = format!("{}/chat/completions", endpoint.path().trim_end_matches('/'));
        endpoint.set_path(&path);
        // No redirects: a redirected POST is replayed as a GET elsewhere.
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| invalid(format!("cannot build the HTTP client: {err}")))?;
        Ok(Self {
            config,
            endpoint,
            client,
        })
    }

    /// The URL requests go to.
    #[must_use]
    pub fn endpoint(&self) -> &reqwest::Url {
        &self.endpoint
    }

    async fn attempt(&self, body: &serde_json::Value) -> Result<ModelResponse, ModelError> {
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .timeout(self.config.timeout)
            .json(body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key.expose_secret());
        }
        let response = request.send().await.map_err(|err| self.transport(&err))?;
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let text = response.text().await.map_err(|err| self.transport(&err))?;
        if status.is_success() {
            wire::parse_response(&text)
        } else {
            Err(wire::error_from_status(status.as_u16(), retry_after, &text))
        }
    }

    fn transport(&self, err: &reqwest::Error) -> ModelError {
        if err.is_timeout() {
            ModelError::Timeout {
                after: self.config.timeout,
            }
        } else {
            ModelError::Unavailable {
                message: err.to_string(),
            }
        }
    }

    /// How long to wait before retry number `retry`, or `None` to give up.
    fn retry_delay(&self, error: &ModelError, retry: u32) -> Option<Duration> {
        if retry >= self.config.max_retries || !error.is_transient() {
            return None;
        }
        let backoff = self.config.backoff.delay(retry);
        match error {
            ModelError::RateLimited {
                retry_after: Some(wait),
                ..
            } if *wait > self.config.backoff.max => None,
            ModelError::RateLimited {
                retry_after: Some(wait),
                ..
            } => Some((*wait).max(backoff)),
            _ => Some(backoff),
        }
    }
}

#[async_trait]
impl ChatModel for OpenAiCompatible {
    fn name(&self) -> &str {
        &self.config.model
    }

    #[tracing::instrument(skip_all, fields(model = %self.config.model, agent = %request.agent))]
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = wire::request_body(&self.config, &request);
        let mut retry = 0;
        loop {
            match self.attempt(&body).await {
                Ok(response) => return Ok(response),
                Err(error) => match self.retry_delay(&error, retry) {
                    Some(delay) => {
                        tracing::warn!(
                            error.kind = error.kind(),
                            %error,
                            retry = retry + 1,
                            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                            "model call failed; retrying"
                        );
                        tokio::time::sleep(delay).await;
                        retry += 1;
                    }
                    None => return Err(error),
                },
            }
        }
    }
}

/// `Retry-After` as seconds (possibly fractional); the HTTP-date form is not
/// used by model APIs.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_maximum() {
        let backoff = Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(350),
        };
        assert_eq!(backoff.delay(0), Duration::from_millis(100));
        assert_eq!(backoff.delay(1), Duration::from_millis(200));
        assert_eq!(backoff.delay(2), Duration::from_millis(350));
        assert_eq!(backoff.delay(40), Duration::from_millis(350));
    }

    #[test]
    fn endpoint_appends_chat_completions_once() {
        for base in ["http://localhost:11434/v1", "http://localhost:11434/v1/"] {
            let model = OpenAiCompatible::new(OpenAiConfig::new(base, "m"));
            assert_eq!(
                model.map(|m| m.endpoint().to_string()).ok().as_deref(),
                Some("http://localhost:11434/v1/chat/completions")
            );
        }
        assert!(OpenAiCompatible::new(OpenAiConfig::new("ftp://x", "m")).is_err());
        assert!(OpenAiCompatible::new(OpenAiConfig::new("http://x/v1", " ")).is_err());
    }

    #[test]
    fn debug_hides_the_key_and_url_credentials() {
        let mut config = OpenAiConfig::new("https://user:pw@api.example/v1?k=s", "m");
        config.api_key = Some(SecretString::from("sk-secret".to_owned()));
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-secret"));
        assert!(!shown.contains("pw"));
        assert!(shown.contains("api.example"));
    }
}
