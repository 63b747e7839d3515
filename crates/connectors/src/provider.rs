//! The payment-provider port and the values that cross it.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ProviderError;

/// A payment provider that can refund a payment exactly once per
/// idempotency key.
///
/// Implementations must be safe to call again with the same request: the
/// provider treats a resend under the same key and parameters as a status
/// query, never as a second refund.
#[async_trait]
pub trait PaymentProvider: Send + Sync {
    /// A short stable name for logs and receipts (`"sandbox"`, `"stripe"`).
    fn name(&self) -> &'static str;

    /// Issue a refund. Same key and same parameters are safe to resend.
    ///
    /// A definite business refusal is `Ok(RefundOutcome::Declined { .. })`,
    /// not an error.
    ///
    /// # Errors
    ///
    /// - [`ProviderError::Unknown`] when the outcome cannot be known (timeout,
    ///   connection reset, 5xx, unreadable success body): the refund may exist.
    ///   Query [`PaymentProvider::lookup`]; never report it as a failure.
    /// - [`ProviderError::InFlight`] when a request under the same key is
    ///   still being processed.
    /// - [`ProviderError::KeyReusedWithDifferentParameters`] when the key was
    ///   already used for a different refund.
    /// - [`ProviderError::RateLimited`] when the provider asks us to slow down;
    ///   nothing was executed.
    /// - [`ProviderError::Rejected`] / [`ProviderError::InvalidRequest`] when
    ///   the request itself is wrong (bug or configuration); nothing executed.
    async fn refund(&self, request: &RefundRequest) -> Result<RefundOutcome, ProviderError>;

    /// Look up the refund made under this idempotency key. A status query:
    /// it never creates anything. `Ok(None)` means the provider definitely
    /// holds no refund for the key.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Unknown`] when the provider could not be asked or did
    /// not answer readably (then "none" is *not* known);
    /// [`ProviderError::RateLimited`]; [`ProviderError::Rejected`] /
    /// [`ProviderError::InvalidRequest`] for a bug or configuration error.
    async fn lookup(&self, key: &RefundLookup) -> Result<Option<ProviderRefund>, ProviderError>;

    /// Every refund the provider holds for this key, oldest first. Used by
    /// verification, which expects exactly one.
    ///
    /// # Errors
    ///
    /// As for [`PaymentProvider::lookup`].
    async fn refunds_for_key(
        &self,
        key: &RefundLookup,
    ) -> Result<Vec<ProviderRefund>, ProviderError>;

    /// Whether this provider can address the payment reference at all
    /// (syntax only, no I/O): Stripe takes `pi_`/`ch_`/`py_`, the sandbox
    /// takes references it could hold (non-empty, printable ASCII, no
    /// whitespace, at most 255 bytes).
    ///
    /// # Errors
    ///
    /// [`ProviderError::InvalidRequest`] with a precise message naming the
    /// accepted forms.
    fn check_reference(&self, payment_reference: &str) -> Result<(), ProviderError>;

    /// The charge (payment) as the provider holds it now: amount, currency,
    /// what is already refunded, and every refund on it. A status query:
    /// never creates anything.
    ///
    /// # Errors
    ///
    /// As for [`PaymentProvider::lookup`]: any failure to get a readable
    /// answer is [`ProviderError::Unknown`] (or
    /// [`ProviderError::RateLimited`]), never a refusal.
    async fn charge(&self, payment_reference: &str) -> Result<ProviderCharge, ProviderError>;
}

/// A charge (the customer's payment) as the provider holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderCharge {
    pub payment_reference: String,
    pub amount_minor: i64,
    /// ISO 4217, upper case.
    pub currency: String,
    /// What the provider counts as refunded (succeeded + pending refunds, as
    /// Stripe counts `amount_refunded`).
    pub amount_refunded_minor: i64,
    /// Every refund on the charge, oldest first (for each: `idempotency_key`
    /// is the key it was made under when the provider tells, else `""`).
    pub refunds: Vec<ProviderRefund>,
    /// The provider's own JSON, for the audit trail.
    pub raw: serde_json::Value,
}

impl ProviderCharge {
    /// What can still be refunded: amount minus refunded, never below 0.
    #[must_use]
    pub fn remaining_minor(&self) -> i64 {
        self.amount_minor
            .saturating_sub(self.amount_refunded_minor)
            .max(0)
    }

    /// The refunds on this charge made under `key`, oldest first.
    #[must_use]
    pub fn refunds_under_key(&self, key: &str) -> Vec<&ProviderRefund> {
        self.refunds
            .iter()
            .filter(|refund| refund.idempotency_key == key)
            .collect()
    }
}

/// A refund to issue. The idempotency key is the proposal id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundRequest {
    /// Sent as the `Idempotency-Key` header; the proposal id.
    pub idempotency_key: String,
    /// The provider's id of the payment to refund (`pi_…`, `ch_…`, `pay_…`).
    pub payment_reference: String,
    /// Amount in minor units (cents), greater than zero.
    pub amount_minor: i64,
    /// ISO 4217 code, upper case (`EUR`).
    pub currency: String,
    /// Recorded in the provider's metadata so a refund can be traced back.
    pub proposal_id: String,
}

impl RefundRequest {
    /// The lookup key for the refund this request creates.
    #[must_use]
    pub fn lookup_key(&self) -> RefundLookup {
        RefundLookup {
            idempotency_key: self.idempotency_key.clone(),
            payment_reference: self.payment_reference.clone(),
        }
    }
}

/// What identifies a refund for a status query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundLookup {
    pub idempotency_key: String,
    /// Some providers (Stripe) can only list refunds per payment.
    pub payment_reference: String,
}

/// A refund as the provider holds it: the receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderRefund {
    pub provider_refund_id: String,
    pub idempotency_key: String,
    pub payment_reference: String,
    pub amount_minor: i64,
    /// ISO 4217 code, upper case.
    pub currency: String,
    pub status: ProviderRefundStatus,
    pub created_at: DateTime<Utc>,
    /// The provider's own JSON for the refund, kept for the audit trail.
    pub raw: serde_json::Value,
}

/// Where a refund that exists at the provider stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderRefundStatus {
    /// Money has moved.
    Succeeded,
    /// Accepted; the provider will settle it later (query again).
    Pending,
    /// The refund object exists but the money did not move.
    Failed { reason: String },
}

/// A definite answer to [`PaymentProvider::refund`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RefundOutcome {
    /// The refund exists and has succeeded.
    Succeeded(ProviderRefund),
    /// The refund exists and is still being settled.
    Pending(ProviderRefund),
    /// The refund object was created but failed at once (Stripe can do this);
    /// no money moved. Kept apart from `Declined` because there is a refund id
    /// to show in the receipt.
    Failed(ProviderRefund),
    /// The provider refused to refund (already refunded, disputed, …); no
    /// refund object exists and no money moved.
    Declined { code: String, message: String },
}

impl RefundOutcome {
    /// Sort a refund the provider holds into the matching outcome.
    #[must_use]
    pub fn from_refund(refund: ProviderRefund) -> Self {
        match refund.status {
            ProviderRefundStatus::Succeeded => Self::Succeeded(refund),
            ProviderRefundStatus::Pending => Self::Pending(refund),
            ProviderRefundStatus::Failed { .. } => Self::Failed(refund),
        }
    }

    /// The refund object, when the provider created one.
    #[must_use]
    pub fn refund(&self) -> Option<&ProviderRefund> {
        match self {
            Self::Succeeded(refund) | Self::Pending(refund) | Self::Failed(refund) => Some(refund),
            Self::Declined { .. } => None,
        }
    }
}
