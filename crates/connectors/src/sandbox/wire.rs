//! The sandbox's JSON on the wire, shared by the server and its client.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::faults::{FaultDecision, FaultPlan};

/// Body of `POST /v1/refunds`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRefundBody {
    pub payment_reference: String,
    pub amount_minor: i64,
    pub currency: String,
    /// Free-form; the executor sends `proposal_id`.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

/// Where a sandbox refund stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxRefundStatus {
    Succeeded,
    Pending,
    Failed,
}

/// A refund in the sandbox ledger, as every endpoint returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxRefund {
    /// `re_sbx_…`
    pub id: String,
    pub idempotency_key: String,
    pub payment_reference: String,
    pub amount_minor: i64,
    /// Upper case.
    pub currency: String,
    pub status: SandboxRefundStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    pub created_at: DateTime<Utc>,
}

/// Body of `POST /v1/charges`: a customer's payment, as a test-mode payment
/// at Stripe stands for one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateChargeBody {
    /// The payment reference; `pay_sbx_<random>` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub amount_minor: i64,
    pub currency: String,
}

/// A charge as `GET /v1/charges/{id}` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxCharge {
    /// The payment reference refunds name.
    pub id: String,
    pub amount_minor: i64,
    /// Upper case.
    pub currency: String,
    /// Succeeded and pending refunds, as Stripe counts `amount_refunded`; a
    /// failed refund does not count.
    pub amount_refunded_minor: i64,
    /// Whether nothing is left to refund.
    pub refunded: bool,
    /// Every refund made on the charge here, oldest first (failed ones too).
    pub refunds: Vec<SandboxRefund>,
}

/// `{"data": [...]}` from `GET /v1/refunds`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundList {
    pub data: Vec<SandboxRefund>,
}

/// The refunds held for one idempotency key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub idempotency_key: String,
    /// Exactly one is the only correct number.
    pub count: usize,
    pub refunds: Vec<SandboxRefund>,
}

/// `GET /v1/ledger`: every refund, grouped per key in order of first refund.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerView {
    pub total_refunds: usize,
    pub keys: Vec<LedgerEntry>,
    /// Keys holding more than one refund. Empty unless retention expired and
    /// a key was reused, or something is badly wrong.
    pub duplicated_keys: Vec<String>,
}

impl LedgerView {
    /// How many refunds the ledger holds for `key`.
    #[must_use]
    pub fn count_for(&self, key: &str) -> usize {
        self.keys
            .iter()
            .find(|entry| entry.idempotency_key == key)
            .map_or(0, |entry| entry.count)
    }
}

/// Body of `PUT /v1/faults`: a new plan for the run. Counters, attempt
/// numbers and history restart; the RNG is reseeded (with `seed`, or the
/// current seed when absent). Absent durations keep their current values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultUpdate {
    #[serde(default)]
    pub faults: FaultPlan,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(
        default,
        rename = "hang_ms",
        with = "crate::duration_serde::option_millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub hang: Option<Duration>,
    #[serde(
        default,
        rename = "lookup_latency_ms",
        with = "crate::duration_serde::option_millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub lookup_latency: Option<Duration>,
}

/// `GET /v1/faults` (and the answer to `PUT`): the plan in force and what it
/// decided so far (the last 1,000 decisions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultStatus {
    pub faults: FaultPlan,
    pub seed: u64,
    #[serde(rename = "hang_ms", with = "crate::duration_serde::millis")]
    pub hang: Duration,
    #[serde(rename = "lookup_latency_ms", with = "crate::duration_serde::millis")]
    pub lookup_latency: Duration,
    pub requests_seen: u64,
    pub history: Vec<FaultDecision>,
}

/// `{"error": {"type", "code", "message"}}`, the one error shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ApiError,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// `invalid_request_error`, `idempotency_error`, `card_error`,
    /// `rate_limit_error` or `api_error`.
    #[serde(rename = "type")]
    pub kind: String,
    pub code: String,
    pub message: String,
}

impl ErrorBody {
    #[must_use]
    pub fn new(kind: &str, code: &str, message: impl Into<String>) -> Self {
        Self {
            error: ApiError {
                kind: kind.to_owned(),
                code: code.to_owned(),
                message: message.into(),
            },
        }
    }
}
