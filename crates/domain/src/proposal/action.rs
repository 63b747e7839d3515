//! The exact action a proposal would execute, and its digest.
//!
//! An approver signs off on this digest. Because it covers the proposal id,
//! the order, the payment and the amount, "yes" authorises one thing only:
//! a different amount or order gives a different digest, and so needs a new
//! proposal and a new approval.

use crate::digest::sha256_json;
use crate::money::{Currency, Money};
use serde::{Deserialize, Serialize};

/// What kind of action; only refunds exist today. An enum (not a string) so
/// the digest's first field can never be misspelt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    Refund,
}

/// Exactly what would execute. The field order is part of the digest:
/// never reorder, rename or insert fields without migrating stored digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundAction {
    pub kind: ActionKind,
    /// Also the idempotency key sent to the payment provider.
    pub proposal_id: String,
    pub order_id: String,
    pub payment_reference: String,
    pub amount_minor: i64,
    pub currency: Currency,
}

impl RefundAction {
    pub fn amount(&self) -> Money {
        Money::new(self.amount_minor, self.currency)
    }

    /// The idempotency key for the provider: the proposal id, so a retry of
    /// this action can never become a second refund.
    pub fn idempotency_key(&self) -> &str {
        &self.proposal_id
    }

    /// Hex SHA-256 of the canonical JSON of this action.
    pub fn digest(&self) -> String {
        sha256_json(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn action() -> RefundAction {
        RefundAction {
            kind: ActionKind::Refund,
            proposal_id: "prp_17".into(),
            order_id: "4821".into(),
            payment_reference: "pay_4821".into(),
            amount_minor: 7900,
            currency: Currency::EUR,
        }
    }

    #[test]
    fn the_canonical_json_has_a_fixed_field_order() {
        assert_eq!(
            serde_json::to_string(&action()).unwrap(),
            r#"{"kind":"refund","proposal_id":"prp_17","order_id":"4821","payment_reference":"pay_4821","amount_minor":7900,"currency":"EUR"}"#
        );
    }

    #[test]
    fn the_digest_is_stable_and_covers_every_field() {
        let base = action();
        assert_eq!(base.digest(), action().digest());
        assert_eq!(base.digest().len(), 64);
        let variants = [
            RefundAction {
                proposal_id: "prp_18".into(),
                ..action()
            },
            RefundAction {
                order_id: "4822".into(),
                ..action()
            },
            RefundAction {
                payment_reference: "pay_other".into(),
                ..action()
            },
            RefundAction {
                amount_minor: 7901,
                ..action()
            },
            RefundAction {
                currency: Currency::USD,
                ..action()
            },
        ];
        for changed in variants {
            assert_ne!(changed.digest(), base.digest(), "{changed:?}");
        }
    }

    #[test]
    fn the_idempotency_key_is_the_proposal_id() {
        assert_eq!(action().idempotency_key(), "prp_17");
        assert_eq!(action().amount(), Money::new(7900, Currency::EUR));
    }
}
