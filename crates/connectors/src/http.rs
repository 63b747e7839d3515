//! What the HTTP connectors share: timeouts, client construction, and the
//! reading of transport failures as "outcome unknown".

use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde::{Deserialize, Serialize};

use crate::ProviderError;

/// How long an HTTP connector waits. A request that runs past `request` is
/// [`ProviderError::Unknown`]: the provider may still have executed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpTimeouts {
    /// Time allowed to open the TCP (and TLS) connection.
    #[serde(rename = "connect_ms", with = "crate::duration_serde::millis")]
    pub connect: Duration,
    /// Time allowed for the whole request, from sending to the last body byte.
    #[serde(rename = "request_ms", with = "crate::duration_serde::millis")]
    pub request: Duration,
}

impl Default for HttpTimeouts {
    /// 3 s to connect, 10 s for the whole request.
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(3),
            request: Duration::from_secs(10),
        }
    }
}

/// A connector could not be built from its configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("connector configuration error: {message}")]
pub struct ConfigError {
    pub message: String,
}

impl ConfigError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// Parse and normalise a base URL (no trailing slash needed or kept).
pub(crate) fn parse_base_url(base_url: &str) -> Result<reqwest::Url, ConfigError> {
    let mut url = reqwest::Url::parse(base_url)
        .map_err(|err| ConfigError::new(format!("base URL {base_url:?} is invalid: {err}")))?;
    if url.cannot_be_a_base() || !matches!(url.scheme(), "http" | "https") {
        return Err(ConfigError::new(format!(
            "base URL {base_url:?} must be an http(s) URL"
        )));
    }
    let trimmed = url.path().trim_end_matches('/').to_owned();
    url.set_path(&trimmed);
    url.set_query(None);
    Ok(url)
}

/// `base` with extra path segments appended, each percent-encoded.
pub(crate) fn join_segments(base: &reqwest::Url, segments: &[&str]) -> reqwest::Url {
    let mut url = base.clone();
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(segments);
    }
    url
}

/// A client that never follows redirects: a redirected POST would be replayed
/// as a GET elsewhere, and a redirect means our base URL is wrong anyway.
pub(crate) fn build_client(timeouts: HttpTimeouts) -> Result<reqwest::Client, ConfigError> {
    reqwest::Client::builder()
        .connect_timeout(timeouts.connect)
        .timeout(timeouts.request)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|err| ConfigError::new(format!("cannot build HTTP client: {err}")))
}

/// Read a transport failure. Anything that happened after we started sending
/// may have reached the provider, so it is `Unknown`; only a request we could
/// not even build is definite.
pub(crate) fn transport_error(err: &reqwest::Error) -> ProviderError {
    if err.is_builder() {
        return ProviderError::InvalidRequest {
            message: format!("could not build the HTTP request: {err}"),
        };
    }
    let kind = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "could not connect"
    } else if err.is_body() || err.is_decode() {
        "response body was cut off"
    } else {
        "transport error"
    };
    ProviderError::Unknown {
        reason: format!("{kind}: {err}"),
    }
}

/// A success status whose body we could not read: the refund may exist.
pub(crate) fn unreadable_success(status: u16, detail: &str) -> ProviderError {
    ProviderError::Unknown {
        reason: format!("HTTP {status} with an unreadable body: {detail}"),
    }
}

/// `Retry-After` in seconds (the HTTP-date form is not used by payment APIs).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The body of a response, or an `Unknown` error when it cannot be read.
pub(crate) async fn read_body(response: reqwest::Response) -> Result<String, ProviderError> {
    response.text().await.map_err(|err| transport_error(&err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_loses_its_trailing_slash_and_segments_are_encoded() {
        let base = parse_base_url("http://127.0.0.1:9/sandbox/payments/").unwrap();
        let url = join_segments(&base, &["v1", "refunds", "by-key", "a/b c"]);
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9/sandbox/payments/v1/refunds/by-key/a%2Fb%20c"
        );
    }

    #[test]
    fn base_url_must_be_http() {
        assert!(parse_base_url("ftp://example.test").is_err());
        assert!(parse_base_url("not a url").is_err());
    }

    #[test]
    fn retry_after_reads_seconds() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
    }
}
