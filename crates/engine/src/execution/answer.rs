//! Turning what the provider said (or did not say) into state: the next
//! state of the proposal, and with a successful refund its booking on the
//! order and its receipt. The executor asks for the refunds under the key
//! as soon as the provider reports success, and the success and its
//! verification are then recorded in one transaction (two journal events,
//! one state write). When that list does not come, the success is recorded
//! alone and the reconciler verifies it later, as an answer of its own.
//! `record` writes them, many answers per transaction.

use super::Execution;
use super::charge::ChargeCheck;
use super::record::AnswerAsk;
use super::step::{ConflictAware, SaveError, Step};
use connectors::{
    ProviderCharge, ProviderError, ProviderRefund as WireRefund, ProviderRefundStatus,
};
use domain::proposal::{
    ChargeBooks, Command, Effect, ProposalState, ProviderRefund, Receipt, TransitionError,
};
use domain::{Currency, Money, OrderSnapshot, PastRefund, Timestamp};
use serde_json::json;
use storage::StorageError;
use storage::receipts::NewReceipt;

/// What the provider told us, in the executor's terms.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A refund object under our key.
    Refund(WireRefund),
    /// A definite business refusal; nothing was refunded.
    Declined { reason: String },
    /// No answer we can rely on: the refund may or may not exist.
    Unknown {
        reason: String,
        wait: Option<chrono::Duration>,
    },
    /// A status query found nothing under the key; `charge` is what the
    /// provider said of the charge then, for revalidating a first send.
    NotFound { charge: ChargeCheck },
    /// Something only a person can sort out.
    Escalate { reason: String },
    /// The charge of a proposal that succeeded, with every refund on it:
    /// what verification compares with the proposal and the books.
    Charge(ProviderCharge),
}

impl Answer {
    /// The answer to a send. Only a business refusal fails a refund; a
    /// refusal for configuration (credentials, a reference the provider
    /// does not know), our own bug, a reused key or a replayed stored error
    /// goes to a person, since resending cannot help and "failed" would be a
    /// guess about money.
    pub fn from_send_error(error: ProviderError) -> Answer {
        match error {
            ProviderError::Unknown { .. }
            | ProviderError::InFlight
            | ProviderError::RateLimited { .. } => Answer::from_query_error(error),
            ProviderError::KeyReusedWithDifferentParameters { message } => Answer::Escalate {
                reason: format!(
                    "The provider says this proposal's idempotency key was used with different parameters ({message}); a person must check the payment."
                ),
            },
            ProviderError::ReplayedError { status, message } => Answer::Escalate {
                reason: format!(
                    "The provider answers every request under this proposal's key with the error it stored first (HTTP {status}: {message}); resending cannot help, so a person must check the payment at the provider."
                ),
            },
            ProviderError::Configuration { status, message } => Answer::Escalate {
                reason: format!(
                    "The payment provider refused the refund because of Countersign's configuration (HTTP {status}: {message}); nothing was refunded. Fix the provider settings or the payment reference, then resolve this proposal."
                ),
            },
            ProviderError::Rejected { status, message } => Answer::Escalate {
                reason: format!(
                    "The payment provider refused the request itself (HTTP {status}: {message}); nothing was refunded, and a person must look at why."
                ),
            },
            ProviderError::InvalidRequest { message } => Answer::Escalate {
                reason: format!(
                    "The refund request could not be sent to this provider ({message}); nothing was refunded, and a person must look at why."
                ),
            },
        }
    }

    /// The answer to a status query that did not come back readably. Any
    /// failure to ask (credentials, a 404, a 5xx, the network, a malformed
    /// body) leaves the outcome unknown: it is checked again with backoff
    /// and a person is told after the limit, but it is never a "no".
    pub fn from_query_error(error: ProviderError) -> Answer {
        match error {
            ProviderError::InFlight => Answer::Unknown {
                reason: "the provider is still processing an earlier request under this key".into(),
                wait: None,
            },
            ProviderError::RateLimited { retry_after } => Answer::Unknown {
                reason: "the provider asked us to slow down (429)".into(),
                wait: retry_after.and_then(|d| chrono::Duration::from_std(d).ok()),
            },
            ProviderError::Unknown { reason } => Answer::Unknown { reason, wait: None },
            other => Answer::Unknown {
                reason: format!("the status query did not get an answer: {other}"),
                wait: None,
            },
        }
    }
}

/// What happened after recording an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterAnswer {
    Done,
    /// Resend under the same key (the provider found nothing).
    Resend,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(transparent)]
    Save(#[from] SaveError),
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Transition(#[from] TransitionError),
}

impl ConflictAware for RecordError {
    fn is_conflict(&self) -> bool {
        matches!(self, RecordError::Save(SaveError::Conflict))
    }
}

/// Rows an answer adds besides the state and journal, written only if the
/// state is.
#[derive(Default)]
pub(super) struct SideWrites {
    pub receipt: Option<NewReceipt>,
    pub booking: Option<(String, PastRefund)>,
}

pub(super) fn conflict() -> RecordError {
    RecordError::Save(SaveError::Conflict)
}

impl Execution {
    /// Applies one answer to its proposal's step, in memory but for the
    /// rare reads an unfound refund needs; returns what to do next and the
    /// rows to write with the state.
    pub(super) async fn apply_answer(
        &self,
        tx: &storage::WriteTx,
        step: &mut Step,
        ask: &AnswerAsk,
        order: Option<&OrderSnapshot>,
        actor: &str,
        now: Timestamp,
    ) -> Result<(AfterAnswer, SideWrites), RecordError> {
        let id = ask.proposal_id.as_str();
        let order_id = step.stored.proposal.order_id.clone();
        let checks = match step.state() {
            ProposalState::Executing { unknown, .. } => unknown.as_ref().map_or(0, |u| u.checks),
            _ => 0,
        };
        let (mut after, mut writes) = (AfterAnswer::Done, SideWrites::default());
        match &ask.answer {
            Answer::Refund(refund) => {
                let receipt = receipt_of(refund, self.provider.name(), now);
                match &refund.status {
                    ProviderRefundStatus::Succeeded => {
                        let effects = step.apply(
                            Command::RecordSucceeded { receipt: receipt.clone() },
                            actor,
                            json!({ "provider_refund_id": refund.provider_refund_id, "amount": receipt.amount.display() }),
                            now,
                        )?;
                        writes.receipt = Some(receipt_row(id, &receipt, refund));
                        for effect in &effects {
                            if let Effect::BookRefundOnOrder {
                                order_id,
                                amount,
                                provider_refund_id,
                            } = effect
                            {
                                writes.booking = Some(booking_for(
                                    id,
                                    order_id,
                                    *amount,
                                    provider_refund_id,
                                    now,
                                ));
                            }
                        }
                        // Without the listing the success stays unverified
                        // until the reconciler asks again (`step::due_at`).
                        if matches!(step.state(), ProposalState::Succeeded { .. })
                            && let Some(charge) = &ask.charge_after
                        {
                            self.apply_verification(tx, step, charge, order, actor, now)
                                .await?;
                        }
                    }
                    ProviderRefundStatus::Pending => {
                        step.apply(
                            Command::RecordUnknown {
                                reason: "the provider reports the refund as pending".into(),
                                retry_at: self.settings.next_check(checks, now),
                                max_checks: self.settings.max_unknown_checks,
                            },
                            actor,
                            json!({ "provider_refund_id": refund.provider_refund_id }),
                            now,
                        )?;
                    }
                    ProviderRefundStatus::Failed { reason } => {
                        writes.receipt = Some(receipt_row(id, &receipt, refund));
                        step.apply(
                            Command::RecordDeclined { reason: format!("the refund failed at the provider: {reason}"), receipt: Some(receipt) },
                            actor,
                            json!({ "provider_refund_id": refund.provider_refund_id, "reason": reason }),
                            now,
                        )?;
                    }
                }
            }
            Answer::Declined { reason } => {
                step.apply(
                    Command::RecordDeclined {
                        reason: reason.clone(),
                        receipt: None,
                    },
                    actor,
                    json!({ "reason": reason }),
                    now,
                )?;
            }
            Answer::Unknown { reason, wait } => {
                self.record_unknown(step, reason.clone(), *wait, actor, now)?;
            }
            Answer::Escalate { reason } => {
                step.apply(
                    Command::Escalate {
                        reason: reason.clone(),
                    },
                    actor,
                    json!({ "reason": reason }),
                    now,
                )?;
            }
            Answer::Charge(charge) => {
                self.apply_verification(tx, step, charge, order, actor, now)
                    .await?;
            }
            Answer::NotFound { charge } => {
                let first_sent =
                    storage::journal::first_event_at(&**tx, id, domain::proposal::event::SENT)
                        .await?;
                let within = first_sent.is_none_or(|at| now - at < self.settings.key_retention);
                let effects = step.apply(
                    Command::StatusNotFound {
                        within_key_retention: within,
                    },
                    actor,
                    json!({ "within_key_retention": within }),
                    now,
                )?;
                if effects
                    .iter()
                    .any(|e| matches!(e, Effect::SendRefund { .. }))
                {
                    let revalidated = if effects.contains(&Effect::Revalidate) {
                        let order = storage::orders::get(&**tx, &order_id).await?;
                        self.revalidate_before_resend(tx, step, order.as_ref(), charge, actor, now)
                            .await?
                    } else {
                        true
                    };
                    if revalidated {
                        step.apply(
                            Command::MarkSent,
                            actor,
                            json!({ "idempotency_key": id, "resend": true }),
                            now,
                        )?;
                        after = AfterAnswer::Resend;
                    }
                }
            }
        }
        Ok((after, writes))
    }

    /// The outcome stays unknown: checked again after the backoff for the
    /// checks so far (or the provider's own wait, if longer).
    fn record_unknown(
        &self,
        step: &mut Step,
        reason: String,
        wait: Option<chrono::Duration>,
        actor: &str,
        now: Timestamp,
    ) -> Result<(), TransitionError> {
        let checks = match step.state() {
            ProposalState::Executing { unknown, .. } => unknown.as_ref().map_or(0, |u| u.checks),
            _ => 0,
        };
        let mut retry_at = self.settings.next_check(checks, now);
        if let Some(wait) = wait {
            retry_at = retry_at.max(now + wait);
        }
        step.apply(
            Command::RecordUnknown {
                reason: reason.clone(),
                retry_at,
                max_checks: self.settings.max_unknown_checks,
            },
            actor,
            json!({ "reason": reason, "next_check_at": retry_at }),
            now,
        )?;
        Ok(())
    }

    /// Nothing was sent yet (the first send never went out): revalidate as
    /// a first send would, against the order and the charge at the
    /// provider. When the provider did not say what is left on the charge,
    /// nothing is sent and the check is repeated later.
    async fn revalidate_before_resend(
        &self,
        tx: &storage::WriteTx,
        step: &mut Step,
        order: Option<&domain::OrderSnapshot>,
        charge: &ChargeCheck,
        actor: &str,
        now: Timestamp,
    ) -> Result<bool, RecordError> {
        if let ChargeCheck::Unavailable(reason) = charge {
            let reason = format!(
                "nothing was sent: the provider could not be asked what is left on the charge before sending ({reason})"
            );
            self.record_unknown(step, reason, None, actor, now)?;
            return Ok(false);
        }
        let approvals = storage::approvals::for_proposal(&**tx, &step.stored.proposal.id).await?;
        let conditions = approvals
            .iter()
            .rev()
            .find(|a| a.decision == domain::proposal::Decision::Approve)
            .map(|a| a.conditions.clone());
        let verdict = match (order, conditions) {
            (Some(order), Some(conditions)) => {
                let reserved = storage::proposals::reserved_on_order(
                    &**tx,
                    &order.id,
                    &step.stored.proposal.id,
                )
                .await?;
                super::revalidation(step, order, &conditions, reserved, charge)
            }
            _ => Err(domain::proposal::InvalidationReason::OrderMissing),
        };
        match verdict {
            Ok(()) => Ok(true),
            Err(reason) => {
                step.apply(
                    Command::Invalidate {
                        reason: reason.clone(),
                    },
                    actor,
                    json!({ "reason": reason.to_string(), "provider": charge.evidence() }),
                    now,
                )?;
                Ok(false)
            }
        }
    }

    /// Verification: exactly one succeeded refund of the approved amount
    /// under the key, and the charge's refunded total explained by the
    /// books (the order's booked refunds, this one included, plus other
    /// proposals still on their way). `order` is the order as read in this
    /// transaction, before this batch's bookings.
    async fn apply_verification(
        &self,
        tx: &storage::WriteTx,
        step: &mut Step,
        charge: &ProviderCharge,
        order: Option<&OrderSnapshot>,
        actor: &str,
        now: Timestamp,
    ) -> Result<(), RecordError> {
        let proposal = &step.stored.proposal;
        let listed: Vec<ProviderRefund> = charge
            .refunds_under_key(&proposal.id)
            .into_iter()
            .map(|r| ProviderRefund {
                provider_refund_id: r.provider_refund_id.clone(),
                amount: money_of(r),
                status: status_name(&r.status).to_owned(),
            })
            .collect();
        let books = match order {
            Some(order) => {
                let own = format!("ref_{}", proposal.id);
                let others: i64 = order
                    .refunds
                    .iter()
                    .filter(|r| r.id != own)
                    .map(|r| r.amount.amount_minor)
                    .sum();
                let booked = others.saturating_add(proposal.amount.amount_minor);
                let in_flight = if charge.amount_refunded_minor == booked {
                    0
                } else {
                    // Only when the totals differ: refunds of other
                    // proposals may be at the provider before their answer
                    // is recorded.
                    storage::proposals::reserved_on_order(&**tx, &order.id, &proposal.id).await?
                };
                Some(ChargeBooks {
                    payment_reference: charge.payment_reference.clone(),
                    refunded_at_provider: charge.amount_refunded_minor,
                    booked,
                    in_flight,
                })
            }
            None => None,
        };
        let summary: Vec<_> = listed
            .iter()
            .map(|r| json!({ "id": r.provider_refund_id, "amount": r.amount.display(), "status": r.status }))
            .collect();
        step.apply(
            Command::RecordVerified {
                refunds: listed,
                books: books.clone(),
            },
            actor,
            json!({
                "refunds_under_key": summary,
                "charge": { "payment_reference": charge.payment_reference, "charged_minor": charge.amount_minor, "refunded_minor": charge.amount_refunded_minor },
                "books": books,
            }),
            now,
        )?;
        Ok(())
    }
}

/// The refund to book on the order: one per proposal, however often the
/// answer is recorded.
pub(super) fn booking_for(
    proposal_id: &str,
    order_id: &str,
    amount: Money,
    provider_refund_id: &str,
    now: Timestamp,
) -> (String, PastRefund) {
    (
        order_id.to_owned(),
        PastRefund {
            id: format!("ref_{proposal_id}"),
            amount,
            channel: "countersign".into(),
            reference: format!("proposal {proposal_id}, provider refund {provider_refund_id}"),
            created_at: now,
        },
    )
}

pub(super) fn receipt_row(proposal_id: &str, receipt: &Receipt, refund: &WireRefund) -> NewReceipt {
    NewReceipt {
        proposal_id: proposal_id.to_owned(),
        receipt: receipt.clone(),
        raw: refund.raw.clone(),
    }
}

pub(super) fn status_name(status: &ProviderRefundStatus) -> &'static str {
    match status {
        ProviderRefundStatus::Succeeded => "succeeded",
        ProviderRefundStatus::Pending => "pending",
        ProviderRefundStatus::Failed { .. } => "failed",
    }
}

pub(super) fn money_of(refund: &WireRefund) -> Money {
    // An unreadable currency yields a receipt that cannot match the
    // proposal, so verification flags it for a person.
    let currency = Currency::parse(&refund.currency)
        .unwrap_or(Currency::parse("XXX").unwrap_or(Currency::EUR));
    Money::new(refund.amount_minor, currency)
}

fn receipt_of(refund: &WireRefund, provider: &str, now: Timestamp) -> Receipt {
    Receipt {
        provider: provider.to_owned(),
        provider_refund_id: refund.provider_refund_id.clone(),
        amount: money_of(refund),
        status: status_name(&refund.status).to_owned(),
        recorded_at: now,
    }
}
