//! The sandbox's charges: the customer payments that refunds draw on, with
//! what is already refunded counted the way Stripe counts `amount_refunded`
//! (succeeded and pending refunds; a failed refund gives the money back).

use std::collections::HashMap;

use async_trait::async_trait;

use super::idempotency::RefundParams;
use super::wire::{ErrorBody, SandboxRefundStatus};

/// Where the sandbox learns of a charge its registry lacks (for example the
/// shop's orders, after the process holding an in-memory sandbox restarted).
/// Asked at most once per request, outside the sandbox's lock.
#[async_trait]
pub trait ChargeSource: Send + Sync {
    /// The charge named `id`, or `None` when there is no such payment.
    async fn charge(&self, id: &str) -> Option<ChargeSeed>;
}

/// What a [`ChargeSource`] knows of a charge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeSeed {
    pub amount_minor: i64,
    /// ISO 4217; stored upper case.
    pub currency: String,
    /// Already refunded before the sandbox heard of the charge.
    pub amount_refunded_minor: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Charge {
    pub id: String,
    pub amount_minor: i64,
    /// Upper case.
    pub currency: String,
    pub amount_refunded_minor: i64,
}

impl Charge {
    pub(crate) fn remaining_minor(&self) -> i64 {
        self.amount_minor
            .saturating_sub(self.amount_refunded_minor)
            .max(0)
    }

    pub(crate) fn fully_refunded(&self) -> bool {
        self.remaining_minor() == 0
    }

    /// Count a refund just made on this charge.
    pub(crate) fn count(&mut self, amount_minor: i64, status: SandboxRefundStatus) {
        if status != SandboxRefundStatus::Failed {
            self.amount_refunded_minor = self.amount_refunded_minor.saturating_add(amount_minor);
        }
    }

    /// Why this charge cannot take the refund, as Stripe would say it (HTTP
    /// 400), or `None` when it can. A currency mismatch is checked first: it
    /// is a mistake in the request, not a question of what is left.
    pub(crate) fn refusal(&self, params: &RefundParams) -> Option<ErrorBody> {
        if params.currency != self.currency {
            return Some(ErrorBody::new(
                "invalid_request_error",
                "currency_mismatch",
                format!(
                    "Refund currency {} does not match the currency of charge {} ({}).",
                    params.currency, self.id, self.currency
                ),
            ));
        }
        if self.fully_refunded() {
            return Some(ErrorBody::new(
                "invalid_request_error",
                "charge_already_refunded",
                format!("Charge {} has already been refunded.", self.id),
            ));
        }
        if params.amount_minor > self.remaining_minor() {
            return Some(ErrorBody::new(
                "invalid_request_error",
                "amount_too_large",
                format!(
                    "Refund amount ({} {}, minor units) is greater than unrefunded amount on \
                     charge {} ({} {}, minor units).",
                    params.amount_minor,
                    params.currency,
                    self.id,
                    self.remaining_minor(),
                    self.currency
                ),
            ));
        }
        None
    }
}

/// What registering a charge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Registration {
    Created(Charge),
    /// The same charge was registered before: nothing changed.
    Existing(Charge),
    /// The id is taken by a charge with another amount or currency.
    Conflict(String),
}

#[derive(Debug, Default)]
pub(crate) struct Charges {
    by_id: HashMap<String, Charge>,
}

impl Charges {
    pub(crate) fn get(&self, id: &str) -> Option<&Charge> {
        self.by_id.get(id)
    }

    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut Charge> {
        self.by_id.get_mut(id)
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// Register a charge; idempotent for the same amount and currency.
    pub(crate) fn register(&mut self, id: &str, amount_minor: i64, currency: &str) -> Registration {
        let currency = currency.to_ascii_uppercase();
        if let Some(existing) = self.by_id.get(id) {
            if existing.amount_minor == amount_minor && existing.currency == currency {
                return Registration::Existing(existing.clone());
            }
            return Registration::Conflict(format!(
                "charge {id} already exists with amount {} {}; it cannot be registered again \
                 with {amount_minor} {currency}",
                existing.amount_minor, existing.currency
            ));
        }
        let charge = Charge {
            id: id.to_owned(),
            amount_minor,
            currency,
            amount_refunded_minor: 0,
        };
        self.by_id.insert(id.to_owned(), charge.clone());
        Registration::Created(charge)
    }

    /// Take in what a [`ChargeSource`] told, unless the charge appeared in
    /// the meantime (then the registry, which counts refunds, is right).
    pub(crate) fn insert_seed(&mut self, id: &str, seed: ChargeSeed) {
        self.by_id.entry(id.to_owned()).or_insert_with(|| Charge {
            id: id.to_owned(),
            amount_minor: seed.amount_minor,
            currency: seed.currency.to_ascii_uppercase(),
            amount_refunded_minor: seed.amount_refunded_minor.max(0),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn params(amount_minor: i64, currency: &str) -> RefundParams {
        RefundParams {
            payment_reference: "pay_1".to_owned(),
            amount_minor,
            currency: currency.to_owned(),
            metadata: BTreeMap::new(),
        }
    }

    fn code(refusal: Option<ErrorBody>) -> Option<String> {
        refusal.map(|body| body.error.code)
    }

    #[test]
    fn a_refund_over_what_is_left_is_refused_and_a_failed_refund_gives_room_back() {
        let mut charges = Charges::default();
        charges.register("pay_1", 7900, "eur");
        let charge = charges.get_mut("pay_1").unwrap();
        assert_eq!(code(charge.refusal(&params(7900, "EUR"))), None);
        charge.count(5000, SandboxRefundStatus::Succeeded);
        assert_eq!(
            code(charge.refusal(&params(3000, "EUR"))).as_deref(),
            Some("amount_too_large")
        );
        charge.count(2900, SandboxRefundStatus::Failed);
        assert_eq!(charge.remaining_minor(), 2900);
        charge.count(2900, SandboxRefundStatus::Pending);
        assert_eq!(
            code(charge.refusal(&params(1, "EUR"))).as_deref(),
            Some("charge_already_refunded")
        );
        assert_eq!(
            code(charge.refusal(&params(1, "USD"))).as_deref(),
            Some("currency_mismatch")
        );
    }

    #[test]
    fn registering_is_idempotent_for_the_same_charge_and_refuses_another() {
        let mut charges = Charges::default();
        assert!(matches!(
            charges.register("pay_1", 100, "EUR"),
            Registration::Created(_)
        ));
        assert!(matches!(
            charges.register("pay_1", 100, "eur"),
            Registration::Existing(_)
        ));
        assert!(matches!(
            charges.register("pay_1", 101, "EUR"),
            Registration::Conflict(_)
        ));
    }

    #[test]
    fn a_seed_never_overwrites_a_charge_that_appeared_meanwhile() {
        let mut charges = Charges::default();
        charges.register("pay_1", 100, "EUR");
        charges
            .get_mut("pay_1")
            .unwrap()
            .count(40, SandboxRefundStatus::Succeeded);
        charges.insert_seed(
            "pay_1",
            ChargeSeed {
                amount_minor: 100,
                currency: "EUR".to_owned(),
                amount_refunded_minor: 0,
            },
        );
        assert_eq!(charges.get("pay_1").unwrap().amount_refunded_minor, 40);
    }
}
