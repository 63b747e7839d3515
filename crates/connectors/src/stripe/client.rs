//! `StripeProvider`: refunds through Stripe's REST API.

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use tracing::instrument;

use super::errors::{Failure, ResponseMeta, classify, classify_query};
use super::payments::{PaymentTotals, charge_totals, counted_refunds, payment_intent_totals};
use super::wire::{PaymentTarget, StripeList, made_under_key, parse_refund, refund_form};
use crate::http::{
    build_client, join_segments, parse_base_url, read_body, retry_after, transport_error,
    unreadable_success,
};
use crate::{
    ConfigError, HttpTimeouts, PaymentProvider, ProviderCharge, ProviderError, ProviderRefund,
    RefundLookup, RefundOutcome, RefundRequest,
};

/// Stripe's API root.
pub const STRIPE_API_BASE: &str = "https://api.stripe.com";
/// The API version sent as `Stripe-Version` on every call: the shapes this
/// connector reads (refund, charge, PaymentIntent with `latest_charge`) are
/// those of this version, whatever the account's default.
pub const STRIPE_VERSION: &str = "2024-06-20";
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

    fn url(&self, segments: &[&str]) -> reqwest::Url {
        join_segments(&self.base, segments)
    }

    /// Every call carries the key and the pinned API version, so the shape
    /// of what we read cannot change when the account's default moves.
    fn authed(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        builder
            .bearer_auth(self.secret_key.expose_secret())
            .header("Stripe-Version", STRIPE_VERSION)
    }

    /// `GET` a Stripe object or list as JSON. Any failure is a failed status
    /// query (see [`classify_query`]).
    async fn get_json(
        &self,
        segments: &[&str],
        query: &[(&str, String)],
    ) -> Result<serde_json::Value, ProviderError> {
        let response = self
            .authed(self.client.get(self.url(segments)))
            .query(query)
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        let status = response.status().as_u16();
        let meta = response_meta(response.headers());
        let text = read_body(response).await?;
        if status != 200 {
            return Err(classify_query(status, meta, &text));
        }
        serde_json::from_str(&text).map_err(|err| unreadable_success(status, &err.to_string()))
    }

    /// Every refund on the payment, as Stripe lists them (newest first),
    /// following `has_more`/`starting_after`.
    async fn list_refunds(
        &self,
        target: &PaymentTarget,
    ) -> Result<Vec<serde_json::Value>, ProviderError> {
        let mut all = Vec::new();
        let mut starting_after: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![
                (target.field, target.id.clone()),
                ("limit", PAGE_SIZE.to_owned()),
            ];
            if let Some(last) = &starting_after {
                query.push(("starting_after", last.clone()));
            }
            let page: StripeList =
                serde_json::from_value(self.get_json(&["v1", "refunds"], &query).await?)
                    .map_err(|err| unreadable_success(200, &err.to_string()))?;
            starting_after = page
                .data
                .last()
                .and_then(|refund| refund.get("id"))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned);
            all.extend(page.data);
            if !page.has_more || starting_after.is_none() {
                return Ok(all);
            }
        }
        Err(ProviderError::Unknown {
            reason: format!(
                "more than {MAX_PAGES} pages of refunds on {}; cannot tell which exist",
                target.id
            ),
        })
    }

    /// Every refund on the payment made under `key`, oldest first.
    async fn list_for_key(&self, key: &RefundLookup) -> Result<Vec<ProviderRefund>, ProviderError> {
        let target = PaymentTarget::parse(&key.payment_reference)?;
        let mut found = self
            .list_refunds(&target)
            .await?
            .into_iter()
            .filter(|raw| made_under_key(raw, &key.idempotency_key))
            .map(|raw| {
                parse_refund(raw, &key.idempotency_key).map_err(|err| unreadable_success(200, &err))
            })
            .collect::<Result<Vec<_>, _>>()?;
        found.sort_by_key(|refund| refund.created_at);
        Ok(found)
    }

    /// The payment object and its totals.
    async fn payment(
        &self,
        target: &PaymentTarget,
    ) -> Result<(serde_json::Value, PaymentTotals), ProviderError> {
        let (raw, totals) = if target.field == "payment_intent" {
            let raw = self
                .get_json(
                    &["v1", "payment_intents", &target.id],
                    &[("expand[]", "latest_charge".to_owned())],
                )
                .await?;
            let totals = payment_intent_totals(&raw);
            (raw, totals)
        } else {
            let raw = self.get_json(&["v1", "charges", &target.id], &[]).await?;
            let totals = charge_totals(&raw);
            (raw, totals)
        };
        let totals = totals.map_err(|err| unreadable_success(200, &err))?;
        Ok((raw, totals))
    }
}

fn response_meta(headers: &reqwest::header::HeaderMap) -> ResponseMeta {
    ResponseMeta {
        retry_after: retry_after(headers),
        replayed: headers
            .get("idempotent-replayed")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.eq_ignore_ascii_case("true")),
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
            .authed(self.client.post(self.url(&["v1", "refunds"])))
            .header("Idempotency-Key", &request.idempotency_key)
            .form(&refund_form(request, &target))
            .send()
            .await
            .map_err(|err| transport_error(&err))?;
        let status = response.status().as_u16();
        let meta = response_meta(response.headers());
        let text = read_body(response).await?;
        if status == 200 {
            let raw: serde_json::Value = serde_json::from_str(&text)
                .map_err(|err| unreadable_success(status, &err.to_string()))?;
            let refund = parse_refund(raw, &request.idempotency_key)
                .map_err(|err| unreadable_success(status, &err))?;
            return Ok(RefundOutcome::from_refund(refund));
        }
        match classify(status, meta, &text) {
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

    fn check_reference(&self, payment_reference: &str) -> Result<(), ProviderError> {
        PaymentTarget::parse(payment_reference).map(|_| ())
    }

    #[instrument(skip_all, err(level = "debug"), fields(provider = "stripe", payment = %payment_reference))]
    async fn charge(&self, payment_reference: &str) -> Result<ProviderCharge, ProviderError> {
        let target = PaymentTarget::parse(payment_reference)?;
        let (raw, totals) = self.payment(&target).await?;
        let mut refunds = self
            .list_refunds(&target)
            .await?
            .into_iter()
            .map(|raw| parse_refund(raw, "").map_err(|err| unreadable_success(200, &err)))
            .collect::<Result<Vec<_>, _>>()?;
        refunds.sort_by_key(|refund| refund.created_at);
        // A PaymentIntent that was paid more than once (a failed first
        // charge, then another) has refunds its latest charge does not
        // count; the listing covers them all. Taking the larger figure never
        // lets a refund that exists go unseen.
        let amount_refunded_minor = totals.amount_refunded_minor.max(counted_refunds(&refunds));
        Ok(ProviderCharge {
            payment_reference: payment_reference.to_owned(),
            amount_minor: totals.amount_minor,
            currency: totals.currency,
            amount_refunded_minor,
            refunds,
            raw,
        })
    }
}
