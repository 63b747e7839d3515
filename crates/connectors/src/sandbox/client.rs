//! `SandboxProvider`: the sandbox's HTTP client, a [`PaymentProvider`].

use async_trait::async_trait;
use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use tracing::instrument;

use super::answers::{
    decline, error_code, error_message, parse_charge, parse_refund, query_error, send_error,
    to_provider_refund_raw,
};
use super::server::{IDEMPOTENCY_KEY, check_reference};
use super::wire::{
    CreateChargeBody, CreateRefundBody, FaultStatus, FaultUpdate, LedgerView, SandboxCharge,
};
use crate::http::{
    build_client, join_segments, parse_base_url, read_body, transport_error, unreadable_success,
};
use crate::{
    ConfigError, HttpTimeouts, PaymentProvider, ProviderCharge, ProviderError, ProviderRefund,
    RefundLookup, RefundOutcome, RefundRequest,
};

/// Talks to a sandbox at `base_url` (the mount point, e.g.
/// `http://127.0.0.1:3000/sandbox/payments`), presenting its secret key on
/// every call. The key never appears in `Debug` output.
#[derive(Debug, Clone)]
pub struct SandboxProvider {
    base: reqwest::Url,
    secret_key: SecretString,
    client: reqwest::Client,
}

impl SandboxProvider {
    /// `secret_key` is the sandbox's key ([`SandboxState::secret_key`] of the
    /// sandbox this client talks to).
    ///
    /// [`SandboxState::secret_key`]: super::SandboxState::secret_key
    ///
    /// # Errors
    ///
    /// When `base_url` is not an http(s) URL, the key is empty, or the HTTP
    /// client cannot be built.
    pub fn new(
        base_url: &str,
        secret_key: SecretString,
        timeouts: HttpTimeouts,
    ) -> Result<Self, ConfigError> {
        if secret_key.expose_secret().trim().is_empty() {
            return Err(ConfigError::new("the sandbox secret key is empty"));
        }
        Ok(Self {
            base: parse_base_url(base_url)?,
            secret_key,
            client: build_client(timeouts)?,
        })
    }

    fn url(&self, segments: &[&str]) -> reqwest::Url {
        join_segments(&self.base, segments)
    }

    fn get(&self, segments: &[&str]) -> reqwest::RequestBuilder {
        self.client
            .get(self.url(segments))
            .bearer_auth(self.secret_key.expose_secret())
    }

    /// `GET /v1/ledger`: every refund grouped per key.
    ///
    /// # Errors
    ///
    /// As for [`PaymentProvider::lookup`].
    pub async fn ledger(&self) -> Result<LedgerView, ProviderError> {
        let response = self.get(&["v1", "ledger"]).send().await;
        read_query_json(response).await
    }

    /// `POST /v1/charges`: a customer's payment for refunds to draw on (what
    /// a test-mode payment is at Stripe). `id` is the payment reference;
    /// `None` lets the sandbox choose `pay_sbx_…`. Idempotent for the same
    /// amount and currency.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Rejected`] for an invalid charge or an id taken by
    /// another charge (409); otherwise as for [`PaymentProvider::refund`].
    pub async fn create_charge(
        &self,
        id: Option<&str>,
        amount_minor: i64,
        currency: &str,
    ) -> Result<SandboxCharge, ProviderError> {
        let body = CreateChargeBody {
            id: id.map(str::to_owned),
            amount_minor,
            currency: currency.to_owned(),
        };
        let response = self
            .client
            .post(self.url(&["v1", "charges"]))
            .bearer_auth(self.secret_key.expose_secret())
            .json(&body)
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        // Here a 409 is an id taken by another charge, not a request in flight.
        if response.status() == StatusCode::CONFLICT {
            let text = read_body(response).await?;
            return Err(ProviderError::Rejected {
                status: 409,
                message: error_message(StatusCode::CONFLICT, &text),
            });
        }
        read_send_json(Ok(response)).await
    }

    /// `PUT /v1/faults`: start a new fault run.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Rejected`] when the plan is invalid,
    /// [`ProviderError::Configuration`] for a wrong key; otherwise
    /// [`ProviderError::Unknown`].
    pub async fn set_faults(&self, update: &FaultUpdate) -> Result<FaultStatus, ProviderError> {
        let response = self
            .client
            .put(self.url(&["v1", "faults"]))
            .bearer_auth(self.secret_key.expose_secret())
            .json(update)
            .send()
            .await;
        read_send_json(response).await
    }

    /// `GET /v1/faults`: the plan in force and its decisions so far.
    ///
    /// # Errors
    ///
    /// As for [`PaymentProvider::lookup`].
    pub async fn fault_status(&self) -> Result<FaultStatus, ProviderError> {
        let response = self.get(&["v1", "faults"]).send().await;
        read_query_json(response).await
    }
}

#[async_trait]
impl PaymentProvider for SandboxProvider {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "sandbox", refund.key = %request.idempotency_key))]
    async fn refund(&self, request: &RefundRequest) -> Result<RefundOutcome, ProviderError> {
        self.check_reference(&request.payment_reference)?;
        let body = CreateRefundBody {
            payment_reference: request.payment_reference.clone(),
            amount_minor: request.amount_minor,
            currency: request.currency.clone(),
            metadata: [("proposal_id".to_owned(), request.proposal_id.clone())].into(),
        };
        let response = self
            .client
            .post(self.url(&["v1", "refunds"]))
            .bearer_auth(self.secret_key.expose_secret())
            .header(IDEMPOTENCY_KEY, &request.idempotency_key)
            .json(&body)
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = read_body(response).await?;
        if status == StatusCode::OK {
            return parse_refund(status, &text).map(RefundOutcome::from_refund);
        }
        match decline(status, &text) {
            Some(declined) => Ok(declined),
            None => Err(send_error(status, &headers, &text)),
        }
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "sandbox", refund.key = %key.idempotency_key))]
    async fn lookup(&self, key: &RefundLookup) -> Result<Option<ProviderRefund>, ProviderError> {
        let response = self
            .get(&["v1", "refunds", "by-key", &key.idempotency_key])
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
            _ => Err(query_error(status, &headers, &text)),
        }
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "sandbox", refund.key = %key.idempotency_key))]
    async fn refunds_for_key(
        &self,
        key: &RefundLookup,
    ) -> Result<Vec<ProviderRefund>, ProviderError> {
        let response = self
            .get(&["v1", "refunds"])
            .query(&[("idempotency_key", key.idempotency_key.as_str())])
            .send()
            .await;
        let list: RawList = read_query_json(response).await?;
        list.data
            .into_iter()
            .map(|raw| to_provider_refund_raw(raw).map_err(|err| unreadable_success(200, &err)))
            .collect()
    }

    fn check_reference(&self, payment_reference: &str) -> Result<(), ProviderError> {
        check_reference(payment_reference).map_err(|message| ProviderError::InvalidRequest {
            message: format!("the sandbox cannot hold this payment: {message}"),
        })
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "sandbox", payment = %payment_reference))]
    async fn charge(&self, payment_reference: &str) -> Result<ProviderCharge, ProviderError> {
        self.check_reference(payment_reference)?;
        let response = self
            .get(&["v1", "charges", payment_reference])
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = read_body(response).await?;
        if status != StatusCode::OK {
            return Err(query_error(status, &headers, &text));
        }
        parse_charge(&text)
    }
}

/// `GET /v1/refunds`, each refund kept as the provider sent it.
#[derive(Debug, serde::Deserialize)]
struct RawList {
    data: Vec<serde_json::Value>,
}

/// A status query's JSON answer; any failure leaves the answer unknown.
async fn read_query_json<T: DeserializeOwned>(
    response: Result<reqwest::Response, reqwest::Error>,
) -> Result<T, ProviderError> {
    let response = response.map_err(|err| transport_error(&err))?;
    let status = response.status();
    let headers = response.headers().clone();
    let text = read_body(response).await?;
    if status != StatusCode::OK {
        return Err(query_error(status, &headers, &text));
    }
    serde_json::from_str(&text).map_err(|err| unreadable_success(status.as_u16(), &err.to_string()))
}

/// The JSON answer to a request that changes something.
async fn read_send_json<T: DeserializeOwned>(
    response: Result<reqwest::Response, reqwest::Error>,
) -> Result<T, ProviderError> {
    let response = response.map_err(|err| transport_error(&err))?;
    let status = response.status();
    let headers = response.headers().clone();
    let text = read_body(response).await?;
    if status != StatusCode::OK {
        return Err(send_error(status, &headers, &text));
    }
    serde_json::from_str(&text).map_err(|err| unreadable_success(status.as_u16(), &err.to_string()))
}
