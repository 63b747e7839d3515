//! Revalidation right before execution, and the reasons it can fail.
//!
//! An approval was given under certain conditions; by the time an executor
//! claims the proposal the order may have been refunded through another
//! channel, changed currency or vanished. Revalidation compares the current
//! world with the approved one; a mismatch invalidates the proposal *before*
//! anything is sent.

use super::approval::ConditionsSnapshot;
use super::content::RefundProposal;
use crate::money::Money;
use crate::order::OrderSnapshot;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum InvalidationReason {
    OrderMissing,
    /// Nothing is left to refund: refunds elsewhere already total this much.
    AlreadyRefunded {
        refunded: Money,
    },
    /// Something is left, but less than the proposal's amount.
    InsufficientRefundable {
        refundable: Money,
    },
    /// Other proposals for the order are being executed and together with
    /// this one would refund more than is left.
    OtherProposalsInFlight {
        reserved: Money,
        refundable: Money,
    },
    /// The payment provider, asked right before the send, holds less
    /// unrefunded on the charge than proposed (refunds made through other
    /// channels, at the provider itself).
    ProviderRemainderTooSmall {
        charged: Money,
        refunded: Money,
    },
    /// The provider holds the charge in another currency than proposed.
    ProviderCurrencyDiffers {
        currency: String,
    },
    CurrencyChanged,
    ProposalExpired,
    ApprovalExpired,
    OrderChanged,
    Other(String),
}

impl fmt::Display for InvalidationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidationReason::OrderMissing => {
                f.write_str("the order can no longer be found, so nothing was refunded")
            }
            InvalidationReason::AlreadyRefunded { refunded } => write!(
                f,
                "the order has already been refunded ({refunded}) through another channel, so nothing was refunded again"
            ),
            InvalidationReason::InsufficientRefundable { refundable } => write!(
                f,
                "only {refundable} of the order can still be refunded, less than proposed, so nothing was refunded"
            ),
            InvalidationReason::OtherProposalsInFlight {
                reserved,
                refundable,
            } => write!(
                f,
                "another proposal for this order is being executed ({reserved} on its way); with it only {refundable} would be left, less than proposed, so nothing was refunded"
            ),
            InvalidationReason::ProviderRemainderTooSmall { charged, refunded } => {
                let left = charged
                    .checked_sub(*refunded)
                    .map_or_else(|_| "nothing".to_owned(), |m| m.to_string());
                if refunded.amount_minor >= charged.amount_minor {
                    write!(
                        f,
                        "the payment provider reports the {charged} charge fully refunded ({refunded}, made through another channel), so nothing was refunded again"
                    )
                } else {
                    write!(
                        f,
                        "the payment provider reports {refunded} of the {charged} charge already refunded; only {left} is left, less than proposed, so nothing was refunded"
                    )
                }
            }
            InvalidationReason::ProviderCurrencyDiffers { currency } => write!(
                f,
                "the payment provider holds the charge in {currency}, not in the proposal's currency, so nothing was refunded"
            ),
            InvalidationReason::CurrencyChanged => f.write_str(
                "the order's currency differs from the proposal's, so nothing was refunded",
            ),
            InvalidationReason::ProposalExpired => {
                f.write_str("the proposal expired before it could be executed")
            }
            InvalidationReason::ApprovalExpired => {
                f.write_str("the approval expired before the refund could be executed")
            }
            InvalidationReason::OrderChanged => f.write_str(
                "the order changed after it was approved; a new proposal is needed for the current order",
            ),
            InvalidationReason::Other(detail) => f.write_str(detail),
        }
    }
}

/// Checks that the proposal still holds for the order as it is now, under
/// the conditions the (latest) approval was given in.
///
/// The specific reasons (missing, refunded, currency, amount) are checked
/// before the general "the order changed", so people are told the most
/// useful thing.
///
/// # Errors
/// The [`InvalidationReason`] to record with [`super::Command::Invalidate`].
pub fn revalidate(
    proposal: &RefundProposal,
    order: Option<&OrderSnapshot>,
    approved_under: &ConditionsSnapshot,
) -> Result<(), InvalidationReason> {
    let Some(order) = order.filter(|order| order.id == proposal.order_id) else {
        return Err(InvalidationReason::OrderMissing);
    };
    if order.currency() != proposal.amount.currency {
        return Err(InvalidationReason::CurrencyChanged);
    }
    let (refunded, refundable) = match (order.refunded(), order.refundable()) {
        (Ok(refunded), Ok(refundable)) => (refunded, refundable),
        (Err(error), _) | (_, Err(error)) => {
            return Err(InvalidationReason::Other(format!(
                "the order's refund records are inconsistent ({error}); a person must check it"
            )));
        }
    };
    if refundable.amount_minor <= 0 {
        return Err(InvalidationReason::AlreadyRefunded { refunded });
    }
    if refundable.amount_minor < proposal.amount.amount_minor {
        return Err(InvalidationReason::InsufficientRefundable { refundable });
    }
    if order.payment_reference != proposal.payment_reference
        || order.version != approved_under.order_version
        || order.content_hash() != approved_under.order_hash
    {
        return Err(InvalidationReason::OrderChanged);
    }
    Ok(())
}

/// The charge as the payment provider reported it right before the send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChargeAtProvider {
    pub payment_reference: String,
    /// The provider's currency code, as reported (upper case).
    pub currency: String,
    pub charged_minor: i64,
    /// What the provider counts as refunded (succeeded and pending).
    pub refunded_minor: i64,
}

/// The provider's side of revalidation: the charge must still hold, in the
/// proposal's currency, at least the proposed amount unrefunded. Refunds
/// made at the provider through any other channel count, whether or not
/// anyone told Countersign.
pub fn revalidate_at_provider(
    proposal: &RefundProposal,
    charge: &ChargeAtProvider,
) -> Result<(), InvalidationReason> {
    let currency = proposal.amount.currency;
    if !charge.currency.eq_ignore_ascii_case(currency.code()) {
        return Err(InvalidationReason::ProviderCurrencyDiffers {
            currency: charge.currency.to_ascii_uppercase(),
        });
    }
    let left = charge.charged_minor.saturating_sub(charge.refunded_minor);
    if left < proposal.amount.amount_minor {
        return Err(InvalidationReason::ProviderRemainderTooSmall {
            charged: Money::new(charge.charged_minor, currency),
            refunded: Money::new(charge.refunded_minor, currency),
        });
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::money::Currency;
    use crate::order::PastRefund;
    use crate::proposal::fixtures::{self, t0};

    fn approved_under(order: &OrderSnapshot) -> ConditionsSnapshot {
        ConditionsSnapshot::capture(order, Vec::new()).unwrap()
    }

    fn refund(amount: i64) -> PastRefund {
        PastRefund {
            id: "r1".into(),
            amount: Money::new(amount, Currency::EUR),
            channel: "support_desk".into(),
            reference: "desk-1".into(),
            created_at: t0(),
        }
    }

    #[test]
    fn an_unchanged_order_passes_revalidation() {
        let order = fixtures::order();
        let proposal = fixtures::proposal();
        assert_eq!(
            revalidate(&proposal, Some(&order), &approved_under(&order)),
            Ok(())
        );
    }

    #[test]
    fn an_order_refunded_elsewhere_meanwhile_invalidates_the_proposal() {
        let order = fixtures::order();
        let conditions = approved_under(&order);
        let mut now = order.clone();
        now.refunds.push(refund(7900));
        now.version += 1;
        let reason = revalidate(&fixtures::proposal(), Some(&now), &conditions).unwrap_err();
        assert_eq!(
            reason,
            InvalidationReason::AlreadyRefunded {
                refunded: Money::new(7900, Currency::EUR)
            }
        );
        assert!(reason.to_string().contains("79.00 EUR"), "{reason}");
    }

    #[test]
    fn a_partial_refund_elsewhere_leaves_too_little_to_refund() {
        let order = fixtures::order();
        let conditions = approved_under(&order);
        let mut now = order.clone();
        now.refunds.push(refund(1000));
        assert_eq!(
            revalidate(&fixtures::proposal(), Some(&now), &conditions),
            Err(InvalidationReason::InsufficientRefundable {
                refundable: Money::new(6900, Currency::EUR)
            })
        );
    }

    #[test]
    fn a_missing_order_or_another_currency_invalidates_the_proposal() {
        let order = fixtures::order();
        let conditions = approved_under(&order);
        let proposal = fixtures::proposal();
        assert_eq!(
            revalidate(&proposal, None, &conditions),
            Err(InvalidationReason::OrderMissing)
        );
        let mut usd = order.clone();
        usd.total.currency = Currency::USD;
        assert_eq!(
            revalidate(&proposal, Some(&usd), &conditions),
            Err(InvalidationReason::CurrencyChanged)
        );
    }

    #[test]
    fn any_other_change_to_the_order_since_approval_invalidates_the_proposal() {
        let order = fixtures::order();
        let conditions = approved_under(&order);
        let mut now = order.clone();
        now.status = "returned".into();
        assert_eq!(
            revalidate(&fixtures::proposal(), Some(&now), &conditions),
            Err(InvalidationReason::OrderChanged)
        );
    }

    fn charge(charged: i64, refunded: i64, currency: &str) -> ChargeAtProvider {
        ChargeAtProvider {
            payment_reference: "pay_4821".into(),
            currency: currency.into(),
            charged_minor: charged,
            refunded_minor: refunded,
        }
    }

    #[test]
    fn a_charge_refunded_at_the_provider_through_another_channel_invalidates_the_proposal() {
        let reason =
            revalidate_at_provider(&fixtures::proposal(), &charge(7900, 7900, "EUR")).unwrap_err();
        assert_eq!(
            reason,
            InvalidationReason::ProviderRemainderTooSmall {
                charged: Money::new(7900, Currency::EUR),
                refunded: Money::new(7900, Currency::EUR),
            }
        );
        assert!(reason.to_string().contains("fully refunded"), "{reason}");
        let partly =
            revalidate_at_provider(&fixtures::proposal(), &charge(7900, 1000, "EUR")).unwrap_err();
        assert!(
            partly.to_string().contains("only 69.00 EUR is left"),
            "{partly}"
        );
    }

    #[test]
    fn a_charge_with_enough_left_at_the_provider_passes() {
        assert_eq!(
            revalidate_at_provider(&fixtures::proposal(), &charge(10000, 2100, "eur")),
            Ok(())
        );
    }

    #[test]
    fn a_charge_in_another_currency_at_the_provider_invalidates_the_proposal() {
        assert_eq!(
            revalidate_at_provider(&fixtures::proposal(), &charge(7900, 0, "usd")),
            Err(InvalidationReason::ProviderCurrencyDiffers {
                currency: "USD".into()
            })
        );
    }

    #[test]
    fn reasons_are_stored_as_tagged_json() {
        let json = serde_json::to_value(InvalidationReason::OrderMissing).unwrap();
        assert_eq!(json, serde_json::json!({"kind": "order_missing"}));
        let other = InvalidationReason::Other("disputed".into());
        let json = serde_json::to_value(&other).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "other", "detail": "disputed"})
        );
        assert_eq!(
            serde_json::from_value::<InvalidationReason>(json).unwrap(),
            other
        );
    }
}
