//! Every payment provider call counted by operation and outcome, and timed:
//! a decorator around whichever provider the server talks to.

use super::{PROVIDER_CALL_SECONDS, PROVIDER_CALLS};
use async_trait::async_trait;
use connectors::{
    PaymentProvider, ProviderCharge, ProviderError, ProviderRefund, RefundLookup, RefundOutcome,
    RefundRequest,
};
use std::sync::Arc;
use std::time::Instant;

/// The provider, measured.
pub struct MeteredProvider {
    inner: Arc<dyn PaymentProvider>,
}

impl MeteredProvider {
    pub fn wrap(inner: Arc<dyn PaymentProvider>) -> Arc<dyn PaymentProvider> {
        Arc::new(MeteredProvider { inner })
    }
}

/// Records one call: its latency by operation, and the call by operation
/// and outcome. The outcome is a closed set of words, never an id.
fn record<T>(
    operation: &'static str,
    started: Instant,
    result: &Result<T, ProviderError>,
    outcome_of: impl FnOnce(&T) -> &'static str,
) {
    let outcome = match result {
        Ok(value) => outcome_of(value),
        Err(error) => error_outcome(error),
    };
    metrics::histogram!(PROVIDER_CALL_SECONDS, "operation" => operation).record(started.elapsed());
    metrics::counter!(PROVIDER_CALLS, "operation" => operation, "outcome" => outcome).increment(1);
    tracing::debug!(
        provider.operation = operation,
        provider.outcome = outcome,
        elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "payment provider call"
    );
}

fn error_outcome(error: &ProviderError) -> &'static str {
    match error {
        ProviderError::Unknown { .. } => "unknown",
        ProviderError::InFlight => "in_flight",
        ProviderError::KeyReusedWithDifferentParameters { .. } => "key_reused",
        ProviderError::RateLimited { .. } => "rate_limited",
        ProviderError::Rejected { .. } => "rejected",
        ProviderError::InvalidRequest { .. } => "invalid_request",
        ProviderError::Configuration { .. } => "configuration",
        ProviderError::ReplayedError { .. } => "replayed_error",
    }
}

fn refund_outcome(outcome: &RefundOutcome) -> &'static str {
    match outcome {
        RefundOutcome::Succeeded(_) => "succeeded",
        RefundOutcome::Pending(_) => "pending",
        RefundOutcome::Failed(_) => "failed",
        RefundOutcome::Declined { .. } => "declined",
    }
}

#[async_trait]
impl PaymentProvider for MeteredProvider {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn refund(&self, request: &RefundRequest) -> Result<RefundOutcome, ProviderError> {
        let started = Instant::now();
        let result = self.inner.refund(request).await;
        record("refund", started, &result, refund_outcome);
        result
    }

    async fn lookup(&self, key: &RefundLookup) -> Result<Option<ProviderRefund>, ProviderError> {
        let started = Instant::now();
        let result = self.inner.lookup(key).await;
        record("lookup", started, &result, |found| {
            if found.is_some() {
                "found"
            } else {
                "not_found"
            }
        });
        result
    }

    async fn refunds_for_key(
        &self,
        key: &RefundLookup,
    ) -> Result<Vec<ProviderRefund>, ProviderError> {
        let started = Instant::now();
        let result = self.inner.refunds_for_key(key).await;
        record("refunds_for_key", started, &result, |_| "ok");
        result
    }

    fn check_reference(&self, payment_reference: &str) -> Result<(), ProviderError> {
        // No I/O: nothing to time or count.
        self.inner.check_reference(payment_reference)
    }

    async fn charge(&self, payment_reference: &str) -> Result<ProviderCharge, ProviderError> {
        let started = Instant::now();
        let result = self.inner.charge(payment_reference).await;
        record("charge", started, &result, |_| "ok");
        result
    }
}
