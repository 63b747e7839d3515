//! Done means shown to be done: the provider is asked what it holds under
//! the proposal's key, and only exactly one succeeded refund of the
//! receipt's amount counts as verified. Anything else goes to a person.

use super::command::Resolution;
use super::content::RefundProposal;
use super::effect::{Effect, Transition, event};
use super::execute::needs_attention;
use super::state::{ProposalState, ProviderRefund, Receipt};
use super::transition::{TransitionError, non_blank};
use crate::Timestamp;

pub(super) fn record_verified(
    key: &str,
    receipt: &Receipt,
    refunds: &[ProviderRefund],
    now: Timestamp,
) -> Transition {
    match mismatch(key, receipt, refunds) {
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

/// A person's verdict. Marking it verified needs a receipt for exactly the
/// approved amount: a different amount is not this proposal's refund.
pub(super) fn resolve(
    proposal: &RefundProposal,
    recorded: Option<&Receipt>,
    by: String,
    resolution: Resolution,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    let by = non_blank(by, "the resolving person")?;
    match resolution {
        Resolution::Verified { receipt } => {
            let receipt = receipt.or_else(|| recorded.cloned()).ok_or_else(|| {
                TransitionError::Invalid(
                    "marking a refund verified needs the provider's receipt".into(),
                )
            })?;
            if receipt.amount != proposal.amount {
                return Err(TransitionError::Invalid(format!(
                    "the receipt is for {} but the proposal was for {}; mark it failed and open a new proposal instead",
                    receipt.amount, proposal.amount
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
        Resolution::Failed { reason } => {
            let reason = non_blank(reason, "the reason it failed")?;
            Ok(Transition::new(
                ProposalState::Failed {
                    reason: format!("{reason} (marked failed by {by})"),
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
        Command, Effect, ProposalState, ProposalStatus, ProviderRefund, Resolution,
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
        let command = Command::RecordVerified { refunds };
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

    #[test]
    fn verification_mismatch_notifies_a_person() {
        let command = Command::RecordVerified { refunds: vec![] };
        let t = apply(&fixtures::proposal(), &succeeded(), command, t0()).unwrap();
        assert!(matches!(t.effects[0], Effect::NotifyPerson { .. }));
        assert!(!t.sends_refund());
    }

    #[test]
    fn a_person_can_resolve_a_mismatch_as_verified_or_failed() {
        let attention = verify(vec![]);
        let proposal = fixtures::proposal();
        let resolve = |resolution| Command::Resolve {
            by: "usr_ops".into(),
            resolution,
        };
        let verified = apply(
            &proposal,
            &attention,
            resolve(Resolution::Verified { receipt: None }),
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
            resolve(Resolution::Failed {
                reason: "no money moved".into(),
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
            resolution: Resolution::Verified {
                receipt: Some(fixtures::receipt(100)),
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
