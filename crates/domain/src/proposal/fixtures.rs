//! The flagship example (order 4821, 79.00 EUR) for unit tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::{
    ApprovalRef, Asker, Evidence, OpenQuestion, ProposalDraft, ProposalState, Provenance, Receipt,
    RefundProposal,
};
use crate::Timestamp;
use crate::money::{Currency, Money};
use crate::order::OrderSnapshot;
use chrono::{Duration, TimeZone, Utc};

pub(crate) fn t0() -> Timestamp {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
}

pub(crate) fn order() -> OrderSnapshot {
    OrderSnapshot {
        id: "4821".into(),
        customer_id: "usr_customer".into(),
        status: "delivered".into(),
        total: Money::new(7900, Currency::EUR),
        payment_reference: "pay_4821".into(),
        placed_at: t0() - Duration::days(14),
        delivered_at: Some(t0() - Duration::days(12)),
        version: 3,
        lines: Vec::new(),
        refunds: Vec::new(),
    }
}

pub(crate) fn policy_evidence() -> Evidence {
    Evidence::policy(
        "returns-policy:section-3",
        "Returns policy",
        Some("3. Unopened items".into()),
        "9f2c",
        "Unopened items may be returned within 30 days of delivery for a full refund.",
    )
}

pub(crate) fn draft() -> ProposalDraft {
    ProposalDraft {
        order_id: "4821".into(),
        payment_reference: "pay_4821".into(),
        amount: Money::new(7900, Currency::EUR),
        lines: Vec::new(),
        evidence: vec![
            Evidence::order(&order(), "Delivered 12 days ago; 79.00 EUR paid."),
            policy_evidence(),
        ],
        open_questions: vec![OpenQuestion::new("Was the parcel opened?", Asker::Customer)],
        recommendation: "Refund 79.00 EUR: delivered 12 days ago, within the 30-day window.".into(),
        provenance: Provenance {
            agent: "refund_specialist".into(),
            conversation_id: Some("cnv_1".into()),
            on_behalf_of: Some("usr_customer".into()),
            requested_by: "usr_customer".into(),
            submitted_by: None,
        },
    }
}

pub(crate) fn proposal() -> RefundProposal {
    RefundProposal::new(draft(), "prp_17", t0(), Duration::hours(24)).unwrap()
}

pub(crate) fn awaiting() -> ProposalState {
    ProposalState::initial(&proposal())
}

/// An approval given at `at`, counting for an hour.
pub(crate) fn approval_ref(approver: &str, at: Timestamp) -> ApprovalRef {
    ApprovalRef {
        approval_id: format!("apr_{approver}_{}", at.timestamp()),
        approver_id: approver.into(),
        at,
        expires_at: at + Duration::minutes(60),
    }
}

pub(crate) fn approved() -> ProposalState {
    ProposalState::Approved {
        approvals: vec![approval_ref("usr_anna", t0())],
        expires_at: t0() + Duration::minutes(60),
    }
}

/// Executing under `worker-1` until t0 + 5 minutes.
pub(crate) fn executing(sent: bool) -> ProposalState {
    ProposalState::Executing {
        attempt: 1,
        lease_until: t0() + Duration::minutes(5),
        executor: "worker-1".into(),
        sent,
        unknown: None,
    }
}

pub(crate) fn receipt(amount_minor: i64) -> Receipt {
    Receipt {
        provider: "sandbox".into(),
        provider_refund_id: "re_1".into(),
        amount: Money::new(amount_minor, Currency::EUR),
        status: "succeeded".into(),
        recorded_at: t0(),
    }
}
