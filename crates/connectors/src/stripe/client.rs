//! `StripeProvider`: refunds through Stripe's REST API.

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use tracing::instrument;

use super::errors::{Failure, classify, classify_query};
use super::wire::{PaymentTarget, StripeList, made_under_key, parse_refund, refund_form};
use crate::http::{
    build_client, join_segments, parse_base_url, read_body, retry_after, transport_error,
    unreadable_success,
};
use crate::{
    ConfigError, HttpTimeouts, PaymentProvider, ProviderError, ProviderRefund, RefundLookup,
    RefundOutcome, RefundRequest,
};

/// Stripe's API root.
pub const STRIPE_API_BASE: &str = "https://api.stripe.com";
/// Refunds per list page (Stripe's maximum).
const PAGE_SIZE: &str = "100";
/// Pages scanned before a lookup gives up as "unknown" (10,000 refunds on
/// one payment is not a case we can conclude anything from).
const MAX_PAGES: usize = 100;

/// How to reach Stripe. The secret key never appears in `Debug` output or
/// logs.
#[derive(Debug, Clone, Deserialize)]
pub struct StripeConfig {
    /// Default [`STRIPE_API_BASE`]; tests point it at a mock server.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// `sk_…` or a restricted `rk_…` key with refund write access.
    pub secret_key: SecretString,
    #[serde(default)]
    pub timeouts: HttpTimeouts,
}

fn default_base_url() -> String {
    STRIPE_API_BASE.to_owned()
}

/// Refunds Stripe PaymentIntents (`pi_…`) and charges (`ch_…`, `py_…`).
#[derive(Debug, Clone)]
pub struct StripeProvider {
    base: reqwest::Url,
    secret_key: SecretString,
    client: reqwest::Client,
}

impl StripeProvider {
    /// # Errors
    ///
    /// When the base URL is invalid, the secret key is empty, or the HTTP
    /// client cannot be built.
    pub fn new(config: StripeConfig) -> Result<Self, ConfigError> {
        if config.secret_key.expose_secret().trim().is_empty() {
            return Err(ConfigError::new("the Stripe secret key is empty"));
        }
        Ok(Self {
            base: parse_base_url(&config.base_url)?,
            secret_key: config.secret_key,
            client: build_client(config.timeouts)?,
        })
    }

    fn refunds_url(&self) -> reqwest::Url {
        join_segments(&self.base, &["v1", "refunds"])
    }

    /// Every refund on the payment made under `key`, oldest first.
    async fn list_for_key(&self, key: &RefundLookup) -> Result<Vec<ProviderRefund>, ProviderError> {
        let target = PaymentTarget::parse(&key.payment_reference)?;
        let mut found = Vec::new();
        let mut starting_after: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![
                (target.field, target.id.clone()),
                ("limit", PAGE_SIZE.to_owned()),
            ];
            if let Some(last) = &starting_after {
                query.push(("starting_after", last.clone()));
            }
            let page = self.list_page(&query).await?;
            starting_after = page
                .data
                .last()
                .and_then(|refund| refund.get("id"))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned);
            for raw in page.data {
                if made_under_key(&raw, &key.idempotency_key) {
                    let refund = parse_refund(raw, &key.idempotency_key)
                        .map_err(|err| unreadable_success(200, &err))?;
                    found.push(refund);
                }
            }
            if !page.has_more || starting_after.is_none() {
                // Stripe lists newest first.
                found.sort_by_key(|refund| refund.created_at);
                return Ok(found);
            }
        }
        Err(ProviderError::Unknown {
            reason: format!(
                "more than {MAX_PAGES} pages of refunds on {}; cannot tell which exist",
                key.payment_reference
            ),
        })
    }

    async fn list_page(&self, query: &[(&str, String)]) -> Result<StripeList, ProviderError> {
        let response = self
            .client
            .get(self.refunds_url())
            .bearer_auth(self.secret_key.expose_secret())
            .query(query)
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        let status = response.status().as_u16();
        let wait = retry_after(response.headers());
        let text = read_body(response).await?;
        if status != 200 {
            return Err(classify_query(status, wait, &text));
        }
        serde_json::from_str(&text).map_err(|err| unreadable_success(status, &err.to_string()))
    }
}

#[async_trait]
impl PaymentProvider for StripeProvider {
    fn name(&self) -> &'static str {
        "stripe"
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "stripe", refund.key = %request.idempotency_key))]
    async fn refund(&self, request: &RefundRequest) -> Result<RefundOutcome, ProviderError> {
        let target = PaymentTarget::parse(&request.payment_reference)?;
        if request.amount_minor <= 0 {
            return Err(ProviderError::InvalidRequest {
                message: format!(
                    "amount_minor must be greater than 0, got {}",
                    request.amount_minor
                ),
            });
        }
        let response = self
            .client
            .post(self.refunds_url())
            .bearer_auth(self.secret_key.expose_secret())
            .header("Idempotency-Key", &request.idempotency_key)
            .form(&refund_form(request, &target))
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        let status = response.status().as_u16();
        let wait = retry_after(response.headers());
        let text = read_body(response).await?;
        if status == 200 {
            let raw: serde_json::Value = serde_json::from_str(&text)
                .map_err(|err| unreadable_success(status, &err.to_string()))?;
            let refund = parse_refund(raw, &request.idempotency_key)
                .map_err(|err| unreadable_success(status, &err))?;
            return Ok(RefundOutcome::from_refund(refund));
        }
        match classify(status, wait, &text) {
            Failure::Declined { code, message } => Ok(RefundOutcome::Declined { code, message }),
            Failure::Error(err) => Err(err),
        }
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "stripe", refund.key = %key.idempotency_key))]
    async fn lookup(&self, key: &RefundLookup) -> Result<Option<ProviderRefund>, ProviderError> {
        Ok(self.list_for_key(key).await?.into_iter().next())
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "stripe", refund.key = %key.idempotency_key))]
    async fn refunds_for_key(
        &self,
        key: &RefundLookup,
    ) -> Result<Vec<ProviderRefund>, ProviderError> {
        self.list_for_key(key).await
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
