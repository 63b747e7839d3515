//! Done means shown to be done: the provider is asked what it holds under
//! the proposal's key, and only exactly one succeeded refund of the
//! receipt's amount counts as verified. Anything else goes to a person.

use super::command::Resolution;
use super::content::RefundProposal;
use super::effect::{Effect, Transition, event};
use super::execute::needs_attention;
use super::state::{ChargeBooks, ProposalState, ProviderRefund, Receipt};
use super::transition::{TransitionError, non_blank};
use crate::Timestamp;

pub(super) fn record_verified(
    key: &str,
    receipt: &Receipt,
    refunds: &[ProviderRefund],
    books: Option<&ChargeBooks>,
    now: Timestamp,
) -> Transition {
    let discrepancy = mismatch(key, receipt, refunds).or_else(|| books.and_then(unexplained));
    match discrepancy {
        None => Transition::new(
            ProposalState::Verified {
                receipt: receipt.clone(),
                verified_at: now,
            },
            event::VERIFIED,
            Vec::new(),
        ),
        Some(reason) => needs_attention(reason, Some(receipt.clone())),
    }
}

/// What is wrong with the provider's account, in words for the person who
/// has to sort it out; `None` when it shows exactly the recorded refund.
fn mismatch(key: &str, receipt: &Receipt, refunds: &[ProviderRefund]) -> Option<String> {
    let only = match refunds {
        [] => {
            return Some(format!(
                "The payment provider lists no refund under key {key}, although refund {} was recorded as succeeded.",
                receipt.provider_refund_id
            ));
        }
        [only] => only,
        many => {
            return Some(format!(
                "The payment provider lists {} refunds under key {key} where exactly one was expected; the customer may have been refunded more than once.",
                many.len()
            ));
        }
    };
    if only.provider_refund_id != receipt.provider_refund_id {
        return Some(format!(
            "The payment provider's refund {} is not the recorded refund {}.",
            only.provider_refund_id, receipt.provider_refund_id
        ));
    }
    if only.amount != receipt.amount {
        return Some(format!(
            "The payment provider refunded {}, but the receipt says {}.",
            only.amount, receipt.amount
        ));
    }
    if !only.has_succeeded() {
        return Some(format!(
            "The payment provider reports refund {} as \"{}\", not succeeded.",
            only.provider_refund_id, only.status
        ));
    }
    None
}

/// The provider's refunded total on the charge against the books: money
/// refunded that nobody recorded (or recorded refunds the provider does not
/// hold) is a discrepancy for a person, even when this refund is right.
fn unexplained(books: &ChargeBooks) -> Option<String> {
    if books.agree() {
        return None;
    }
    let minor = |amount: i64| format!("{}.{:02}", amount / 100, (amount % 100).abs());
    Some(format!(
        "This refund is at the payment provider exactly once, but the provider counts {} refunded in total on payment {} while Countersign's books show {} (its own refunds and those recorded from other channels{}); a person must reconcile them.",
        minor(books.refunded_at_provider),
        books.payment_reference,
        minor(books.booked),
        if books.in_flight > 0 {
            format!(", with {} more on its way", minor(books.in_flight))
        } else {
            String::new()
        }
    ))
}

/// A person's verdict, already checked with the provider by the engine.
/// Confirming needs a receipt for exactly the approved amount: a different
/// amount is not this proposal's refund.
pub(super) fn resolve(
    proposal: &RefundProposal,
    recorded: Option<&Receipt>,
    by: String,
    resolution: Resolution,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    let by = non_blank(by, "the resolving person")?;
    match resolution {
        Resolution::RefundConfirmed { receipt, .. } => {
            if receipt.amount != proposal.amount {
                return Err(TransitionError::Invalid(format!(
                    "refund {} is for {} but the proposal was for {}; it is not this proposal's refund",
                    receipt.provider_refund_id, receipt.amount, proposal.amount
                )));
            }
            if !receipt.status.eq_ignore_ascii_case("succeeded") {
                return Err(TransitionError::Invalid(format!(
                    "refund {} is \"{}\" at the provider, not succeeded; it cannot be confirmed yet",
                    receipt.provider_refund_id, receipt.status
                )));
            }
            let book = Effect::BookRefundOnOrder {
                order_id: proposal.order_id.clone(),
                amount: receipt.amount,
                provider_refund_id: receipt.provider_refund_id.clone(),
            };
            Ok(Transition::new(
                ProposalState::Verified {
                    receipt,
                    verified_at: now,
                },
                event::RESOLVED,
                vec![book],
            ))
        }
        Resolution::NoRefund { note, retry_as } => {
            let note = non_blank(note, "the note on what was checked")?;
            let next = match &retry_as {
                Some(id) => format!(
                    "No refund exists at the payment provider ({note}); {by} asked for a new send, which waits for a fresh approval as proposal {id}."
                ),
                None => {
                    format!("No refund exists at the payment provider ({note}); confirmed by {by}.")
                }
            };
            Ok(Transition::new(
                ProposalState::Failed {
                    reason: next,
                    receipt: recorded.cloned(),
                },
                event::RESOLVED,
                Vec::new(),
            ))
        }
        Resolution::Closed { reason } => {
            let reason = non_blank(reason, "the reason for closing")?;
            Ok(Transition::new(
                ProposalState::Failed {
                    reason: format!("Closed without a refund by {by}: {reason}"),
                    receipt: recorded.cloned(),
                },
                event::RESOLVED,
                Vec::new(),
            ))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::money::{Currency, Money};
    use crate::proposal::fixtures::{self, t0};
    use crate::proposal::{
        ChargeBooks, Command, Effect, ProposalState, ProposalStatus, ProviderRefund, Resolution,
        TransitionError, apply,
    };

    fn succeeded() -> ProposalState {
        ProposalState::Succeeded {
            receipt: fixtures::receipt(7900),
        }
    }

    fn listed(id: &str, amount: i64, status: &str) -> ProviderRefund {
        ProviderRefund {
            provider_refund_id: id.into(),
            amount: Money::new(amount, Currency::EUR),
            status: status.into(),
        }
    }

    fn verify(refunds: Vec<ProviderRefund>) -> ProposalState {
        let command = Command::RecordVerified {
            refunds,
            books: None,
        };
        apply(&fixtures::proposal(), &succeeded(), command, t0())
            .unwrap()
            .next
    }

    fn reason(state: &ProposalState) -> &str {
        match state {
            ProposalState::NeedsAttention { reason, .. } => reason,
            other => panic!("expected needs_attention, got {other:?}"),
        }
    }

    #[test]
    fn exactly_one_matching_refund_verifies_the_receipt() {
        let state = verify(vec![listed("re_1", 7900, "succeeded")]);
        assert_eq!(state.status(), ProposalStatus::Verified);
        assert_eq!(state.receipt(), Some(&fixtures::receipt(7900)));
    }

    #[test]
    fn two_refunds_under_one_key_need_a_person() {
        let state = verify(vec![
            listed("re_1", 7900, "succeeded"),
            listed("re_2", 7900, "succeeded"),
        ]);
        assert!(reason(&state).contains("more than once"));
        assert_eq!(state.receipt(), Some(&fixtures::receipt(7900)));
    }

    #[test]
    fn a_missing_wrong_or_unsettled_refund_needs_a_person_with_a_precise_reason() {
        assert!(reason(&verify(vec![])).contains("no refund"));
        assert!(reason(&verify(vec![listed("re_9", 7900, "succeeded")])).contains("re_9"));
        assert!(reason(&verify(vec![listed("re_1", 790, "succeeded")])).contains("7.90 EUR"));
        assert!(reason(&verify(vec![listed("re_1", 7900, "pending")])).contains("pending"));
    }

    fn verify_with_books(refunded_at_provider: i64, booked: i64, in_flight: i64) -> ProposalState {
        let command = Command::RecordVerified {
            refunds: vec![listed("re_1", 7900, "succeeded")],
            books: Some(ChargeBooks {
                payment_reference: "pay_4821".into(),
                refunded_at_provider,
                booked,
                in_flight,
            }),
        };
        apply(&fixtures::proposal(), &succeeded(), command, t0())
            .unwrap()
            .next
    }

    #[test]
    fn money_refunded_at_the_provider_that_the_books_do_not_show_needs_a_person() {
        let state = verify_with_books(15800, 7900, 0);
        let reason = reason(&state);
        assert!(reason.contains("158.00"), "{reason}");
        assert!(reason.contains("79.00"), "{reason}");
        assert!(reason.contains("pay_4821"), "{reason}");
        assert_eq!(
            verify_with_books(7900, 15800, 0).status(),
            ProposalStatus::NeedsAttention
        );
    }

    #[test]
    fn books_that_match_the_provider_or_wait_for_a_refund_on_its_way_verify() {
        assert_eq!(
            verify_with_books(7900, 7900, 0).status(),
            ProposalStatus::Verified
        );
        assert_eq!(
            verify_with_books(12900, 7900, 5000).status(),
            ProposalStatus::Verified
        );
        assert_eq!(
            verify_with_books(7900, 7900, 5000).status(),
            ProposalStatus::Verified
        );
    }

    #[test]
    fn verification_mismatch_notifies_a_person() {
        let command = Command::RecordVerified {
            refunds: vec![],
            books: None,
        };
        let t = apply(&fixtures::proposal(), &succeeded(), command, t0()).unwrap();
        assert!(matches!(t.effects[0], Effect::NotifyPerson { .. }));
        assert!(!t.sends_refund());
    }

    #[test]
    fn a_person_can_resolve_a_mismatch_as_confirmed_or_closed() {
        let attention = verify(vec![]);
        let proposal = fixtures::proposal();
        let resolve = |resolution| Command::Resolve {
            by: "usr_ops".into(),
            resolution,
        };
        let verified = apply(
            &proposal,
            &attention,
            resolve(Resolution::RefundConfirmed {
                receipt: fixtures::receipt(7900),
                note: "found at the provider".into(),
            }),
            t0(),
        )
        .unwrap();
        assert_eq!(verified.next.status(), ProposalStatus::Verified);
        assert!(matches!(
            verified.effects[0],
            Effect::BookRefundOnOrder { .. }
        ));

        let failed = apply(
            &proposal,
            &attention,
            resolve(Resolution::Closed {
                reason: "customer refunded in store credit".into(),
            }),
            t0(),
        )
        .unwrap();
        assert_eq!(failed.next.status(), ProposalStatus::Failed);
    }

    #[test]
    fn a_person_cannot_verify_a_receipt_for_another_amount() {
        let attention = ProposalState::NeedsAttention {
            reason: "x".into(),
            receipt: None,
        };
        let command = Command::Resolve {
            by: "usr_ops".into(),
            resolution: Resolution::RefundConfirmed {
                receipt: fixtures::receipt(100),
                note: "wrong refund".into(),
            },
        };
        assert!(matches!(
            apply(&fixtures::proposal(), &attention, command, t0()),
            Err(TransitionError::Invalid(_))
        ));
    }

    #[test]
    fn nothing_automatic_moves_a_proposal_that_needs_attention() {
        let attention = verify(vec![]);
        let command = Command::RecordVerified {
            refunds: vec![listed("re_1", 7900, "succeeded")],
            books: None,
        };
        assert_eq!(
            apply(&fixtures::proposal(), &attention, command, t0()),
            Err(TransitionError::NotAllowed {
                from: ProposalStatus::NeedsAttention,
                command: "record_verified"
            })
        );
    }
}
