//! `SandboxProvider`: the sandbox's HTTP client, a [`PaymentProvider`].

use async_trait::async_trait;
use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use tracing::instrument;

use super::server::IDEMPOTENCY_KEY;
use super::wire::{
    CreateRefundBody, ErrorBody, FaultStatus, FaultUpdate, LedgerView, SandboxRefund,
    SandboxRefundStatus,
};
use crate::http::{
    build_client, join_segments, parse_base_url, read_body, retry_after, transport_error,
    unreadable_success,
};
use crate::{
    ConfigError, HttpTimeouts, PaymentProvider, ProviderError, ProviderRefund,
    ProviderRefundStatus, RefundLookup, RefundOutcome, RefundRequest,
};

/// Talks to a sandbox at `base_url` (the mount point, e.g.
/// `http://127.0.0.1:3000/sandbox/payments`).
#[derive(Debug, Clone)]
pub struct SandboxProvider {
    base: reqwest::Url,
    client: reqwest::Client,
}

impl SandboxProvider {
    /// # Errors
    ///
    /// When `base_url` is not an http(s) URL or the HTTP client cannot be
    /// built.
    pub fn new(base_url: &str, timeouts: HttpTimeouts) -> Result<Self, ConfigError> {
        Ok(Self {
            base: parse_base_url(base_url)?,
            client: build_client(timeouts)?,
        })
    }

    fn url(&self, segments: &[&str]) -> reqwest::Url {
        join_segments(&self.base, segments)
    }

    /// `GET /v1/ledger`: every refund grouped per key.
    ///
    /// # Errors
    ///
    /// As for [`PaymentProvider::lookup`].
    pub async fn ledger(&self) -> Result<LedgerView, ProviderError> {
        let response = self.client.get(self.url(&["v1", "ledger"])).send().await;
        read_ok_json(response).await
    }

    /// `PUT /v1/faults`: start a new fault run.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Rejected`] when the plan is invalid; otherwise as for
    /// [`PaymentProvider::lookup`].
    pub async fn set_faults(&self, update: &FaultUpdate) -> Result<FaultStatus, ProviderError> {
        let response = self
            .client
            .put(self.url(&["v1", "faults"]))
            .json(update)
            .send()
            .await;
        read_ok_json(response).await
    }

    /// `GET /v1/faults`: the plan in force and its decisions so far.
    ///
    /// # Errors
    ///
    /// As for [`PaymentProvider::lookup`].
    pub async fn fault_status(&self) -> Result<FaultStatus, ProviderError> {
        let response = self.client.get(self.url(&["v1", "faults"])).send().await;
        read_ok_json(response).await
    }
}

#[async_trait]
impl PaymentProvider for SandboxProvider {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "sandbox", refund.key = %request.idempotency_key))]
    async fn refund(&self, request: &RefundRequest) -> Result<RefundOutcome, ProviderError> {
        let body = CreateRefundBody {
            payment_reference: request.payment_reference.clone(),
            amount_minor: request.amount_minor,
            currency: request.currency.clone(),
            metadata: [("proposal_id".to_owned(), request.proposal_id.clone())].into(),
        };
        let response = self
            .client
            .post(self.url(&["v1", "refunds"]))
            .header(IDEMPOTENCY_KEY, &request.idempotency_key)
            .json(&body)
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = read_body(response).await?;
        match status {
            StatusCode::OK => parse_refund(status, &text).map(RefundOutcome::from_refund),
            StatusCode::PAYMENT_REQUIRED => Ok(declined(&text)),
            _ => Err(error_for(status, &headers, &text)),
        }
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "sandbox", refund.key = %key.idempotency_key))]
    async fn lookup(&self, key: &RefundLookup) -> Result<Option<ProviderRefund>, ProviderError> {
        let response = self
            .client
            .get(self.url(&["v1", "refunds", "by-key", &key.idempotency_key]))
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = read_body(response).await?;
        match status {
            StatusCode::OK => parse_refund(status, &text).map(Some),
            // Only the sandbox's own "no such refund" means none; a bare 404
            // (wrong base URL) must not be read as "nothing happened".
            StatusCode::NOT_FOUND if error_code(&text).as_deref() == Some("refund_not_found") => {
                Ok(None)
            }
            _ => Err(error_for(status, &headers, &text)),
        }
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "sandbox", refund.key = %key.idempotency_key))]
    async fn refunds_for_key(
        &self,
        key: &RefundLookup,
    ) -> Result<Vec<ProviderRefund>, ProviderError> {
        let response = self
            .client
            .get(self.url(&["v1", "refunds"]))
            .query(&[("idempotency_key", key.idempotency_key.as_str())])
            .send()
            .await;
        let list: RawList = read_ok_json(response).await?;
        list.data
            .into_iter()
            .map(|raw| {
                let refund: SandboxRefund = serde_json::from_value(raw.clone())
                    .map_err(|err| unreadable_success(200, &err.to_string()))?;
                Ok(to_provider_refund(refund, raw))
            })
            .collect()
    }
    fn check_reference(&self, _payment_reference: &str) -> Result<(), ProviderError> {
        Ok(())
    }

    async fn charge(
        &self,
        _payment_reference: &str,
    ) -> Result<crate::ProviderCharge, ProviderError> {
        Err(ProviderError::Unknown {
            reason: "charge query not implemented yet".to_owned(),
        })
    }
}

/// `GET /v1/refunds`, each refund kept as the provider sent it.
#[derive(Debug, serde::Deserialize)]
struct RawList {
    data: Vec<serde_json::Value>,
}

async fn read_ok_json<T: DeserializeOwned>(
    response: Result<reqwest::Response, reqwest::Error>,
) -> Result<T, ProviderError> {
    let response = response.map_err(|err| transport_error(&err))?;
    let status = response.status();
    let headers = response.headers().clone();
    let text = read_body(response).await?;
    if status != StatusCode::OK {
        return Err(error_for(status, &headers, &text));
    }
    serde_json::from_str(&text).map_err(|err| unreadable_success(status.as_u16(), &err.to_string()))
}

fn parse_refund(status: StatusCode, text: &str) -> Result<ProviderRefund, ProviderError> {
    let raw: serde_json::Value = serde_json::from_str(text)
        .map_err(|err| unreadable_success(status.as_u16(), &err.to_string()))?;
    let refund: SandboxRefund = serde_json::from_value(raw.clone())
        .map_err(|err| unreadable_success(status.as_u16(), &err.to_string()))?;
    Ok(to_provider_refund(refund, raw))
}

fn to_provider_refund(refund: SandboxRefund, raw: serde_json::Value) -> ProviderRefund {
    let status = match refund.status {
        SandboxRefundStatus::Succeeded => ProviderRefundStatus::Succeeded,
        SandboxRefundStatus::Pending => ProviderRefundStatus::Pending,
        SandboxRefundStatus::Failed => ProviderRefundStatus::Failed {
            reason: refund
                .failure_reason
                .unwrap_or_else(|| "unknown".to_owned()),
        },
    };
    ProviderRefund {
        provider_refund_id: refund.id,
        idempotency_key: refund.idempotency_key,
        payment_reference: refund.payment_reference,
        amount_minor: refund.amount_minor,
        currency: refund.currency,
        status,
        created_at: refund.created_at,
        raw,
    }
}

fn parse_error(text: &str) -> Option<ErrorBody> {
    serde_json::from_str(text).ok()
}

fn error_code(text: &str) -> Option<String> {
    parse_error(text).map(|body| body.error.code)
}

fn error_message(status: StatusCode, text: &str) -> String {
    parse_error(text).map_or_else(
        || {
            format!(
                "HTTP {status}: {}",
                text.chars().take(200).collect::<String>()
            )
        },
        |body| body.error.message,
    )
}

fn declined(text: &str) -> RefundOutcome {
    match parse_error(text) {
        Some(body) => RefundOutcome::Declined {
            code: body.error.code,
            message: body.error.message,
        },
        None => RefundOutcome::Declined {
            code: "declined".to_owned(),
            message: text.chars().take(200).collect(),
        },
    }
}

fn error_for(
    status: StatusCode,
    headers: &reqwest::header::HeaderMap,
    text: &str,
) -> ProviderError {
    match status.as_u16() {
        409 => ProviderError::InFlight,
        422 => ProviderError::KeyReusedWithDifferentParameters {
            message: error_message(status, text),
        },
        429 => ProviderError::RateLimited {
            retry_after: retry_after(headers),
        },
        400..=499 => ProviderError::Rejected {
            status: status.as_u16(),
            message: error_message(status, text),
        },
        // 5xx, and anything else we did not ask for (1xx, 2xx other than
        // 200, 3xx): the request may have executed.
        _ => ProviderError::Unknown {
            reason: format!("HTTP {status}: {}", error_message(status, text)),
        },
    }
}
