//! Turning what the provider said (or did not say) into state: one
//! transaction per answer, which also books a successful refund on the order,
//! stores the receipt, and records verification when it is already known.

use super::step::{ConflictAware, SaveError, Step, retry_on_conflict};
use crate::core::Engine;
use connectors::{ProviderError, ProviderRefund as WireRefund, ProviderRefundStatus};
use domain::proposal::{Command, Effect, ProposalState, ProviderRefund, Receipt, TransitionError};
use domain::{Currency, Money, PastRefund, Timestamp};
use serde_json::json;
use storage::StorageError;

/// What the provider told us, in the executor's terms.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A refund object under our key.
    Refund(WireRefund),
    /// A definite refusal; nothing was refunded.
    Declined { reason: String },
    /// No answer we can rely on: the refund may or may not exist.
    Unknown {
        reason: String,
        wait: Option<chrono::Duration>,
    },
    /// A status query found nothing under the key.
    NotFound,
    /// Something only a person can sort out.
    Escalate { reason: String },
}

impl Answer {
    pub fn from_error(error: ProviderError) -> Answer {
        match error {
            ProviderError::Unknown { reason } => Answer::Unknown { reason, wait: None },
            ProviderError::InFlight => Answer::Unknown {
                reason: "the provider is still processing an earlier request under this key".into(),
                wait: None,
            },
            ProviderError::RateLimited { retry_after } => Answer::Unknown {
                reason: "the provider asked us to slow down (429)".into(),
                wait: retry_after.and_then(|d| chrono::Duration::from_std(d).ok()),
            },
            ProviderError::KeyReusedWithDifferentParameters { message } => Answer::Escalate {
                reason: format!(
                    "The provider says this proposal's idempotency key was used with different parameters ({message}); a person must check the payment."
                ),
            },
            ProviderError::Rejected { status, message } => Answer::Declined {
                reason: format!("the payment provider refused the request ({status}): {message}"),
            },
            ProviderError::InvalidRequest { message } => Answer::Declined {
                reason: format!("the refund request was invalid and was not sent: {message}"),
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

impl Engine {
    /// Records `answer` for proposal `id` if it is still executing under this
    /// process's claim. `verified` is the provider's list of refunds under the
    /// key when it was already fetched (success path).
    ///
    /// # Errors
    /// Storage failures or a conflicting concurrent change.
    pub async fn record_answer(
        &self,
        id: &str,
        answer: Answer,
        verified: Option<Vec<WireRefund>>,
    ) -> Result<AfterAnswer, RecordError> {
        retry_on_conflict(|| self.try_record_answer(id, answer.clone(), verified.clone())).await
    }

    /// One attempt: the proposal is read before the write transaction and
    /// written only if its state version is still the one read.
    async fn try_record_answer(
        &self,
        id: &str,
        answer: Answer,
        verified: Option<Vec<WireRefund>>,
    ) -> Result<AfterAnswer, RecordError> {
        let now = crate::now();
        let actor = self.system_actor();
        let Some(stored) = storage::proposals::get(self.db.conn(), id).await? else {
            return Ok(AfterAnswer::Done);
        };
        let ProposalState::Executing {
            executor, unknown, ..
        } = &stored.state
        else {
            // Someone else already settled it (e.g. took over our lease).
            return Ok(AfterAnswer::Done);
        };
        if *executor != self.settings.executor_name {
            return Ok(AfterAnswer::Done);
        }
        let checks = unknown.as_ref().map(|u| u.checks).unwrap_or(0);
        let order_id = stored.proposal.order_id.clone();
        let tx = self.db.begin_write().await?;
        // Lock order before proposal, as every writer does.
        storage::orders::lock_version(&*tx, &order_id).await?;
        let mut step = Step::new(stored);
        let mut after = AfterAnswer::Done;
        match answer {
            Answer::Refund(refund) => {
                let receipt = receipt_of(&refund, self.provider.name(), now);
                match &refund.status {
                    ProviderRefundStatus::Succeeded => {
                        let effects = step.apply(
                            Command::RecordSucceeded { receipt: receipt.clone() },
                            &actor,
                            json!({ "provider_refund_id": refund.provider_refund_id, "amount": receipt.amount.display() }),
                            now,
                        )?;
                        storage::receipts::insert_once(&*tx, id, &receipt, &refund.raw).await?;
                        for effect in &effects {
                            if let Effect::BookRefundOnOrder {
                                order_id,
                                amount,
                                provider_refund_id,
                            } = effect
                            {
                                book_refund(&*tx, id, order_id, *amount, provider_refund_id, now)
                                    .await?;
                            }
                        }
                        if let (Some(list), ProposalState::Succeeded { .. }) =
                            (verified, step.state())
                        {
                            apply_verification(&mut step, list, &actor, now)?;
                        }
                    }
                    ProviderRefundStatus::Pending => {
                        step.apply(
                            Command::RecordUnknown {
                                reason: "the provider reports the refund as pending".into(),
                                retry_at: self.settings.next_check(checks, now),
                                max_checks: self.settings.max_unknown_checks,
                            },
                            &actor,
                            json!({ "provider_refund_id": refund.provider_refund_id }),
                            now,
                        )?;
                    }
                    ProviderRefundStatus::Failed { reason } => {
                        storage::receipts::insert_once(&*tx, id, &receipt, &refund.raw).await?;
                        step.apply(
                            Command::RecordDeclined { reason: format!("the refund failed at the provider: {reason}"), receipt: Some(receipt) },
                            &actor,
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
                    &actor,
                    json!({ "reason": reason }),
                    now,
                )?;
            }
            Answer::Unknown { reason, wait } => {
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
                    &actor,
                    json!({ "reason": reason, "next_check_at": retry_at }),
                    now,
                )?;
            }
            Answer::Escalate { reason } => {
                step.apply(
                    Command::Escalate {
                        reason: reason.clone(),
                    },
                    &actor,
                    json!({ "reason": reason }),
                    now,
                )?;
            }
            Answer::NotFound => {
                let first_sent =
                    storage::journal::first_event_at(&*tx, id, domain::proposal::event::SENT)
                        .await?;
                let within = first_sent.is_none_or(|at| now - at < self.settings.key_retention);
                let effects = step.apply(
                    Command::StatusNotFound {
                        within_key_retention: within,
                    },
                    &actor,
                    json!({ "within_key_retention": within }),
                    now,
                )?;
                if effects
                    .iter()
                    .any(|e| matches!(e, Effect::SendRefund { .. }))
                {
                    let revalidated = if effects.contains(&Effect::Revalidate) {
                        let order = storage::orders::get(&*tx, &order_id).await?;
                        self.revalidate_before_resend(&tx, &mut step, order.as_ref(), &actor, now)
                            .await?
                    } else {
                        true
                    };
                    if revalidated {
                        step.apply(
                            Command::MarkSent,
                            &actor,
                            json!({ "idempotency_key": id, "resend": true }),
                            now,
                        )?;
                        after = AfterAnswer::Resend;
                    }
                }
            }
        }
        self.commit_step(tx, step, now).await?;
        Ok(after)
    }

    /// Records verification for a proposal that succeeded earlier.
    ///
    /// # Errors
    /// Storage failures or a conflicting concurrent change.
    pub async fn record_verification(
        &self,
        id: &str,
        refunds: Vec<WireRefund>,
    ) -> Result<(), RecordError> {
        let now = crate::now();
        let tx = self.db.begin_write().await?;
        let Some(stored) = storage::proposals::get(&*tx, id).await? else {
            return Ok(());
        };
        if !matches!(stored.state, ProposalState::Succeeded { .. }) {
            return Ok(());
        }
        let mut step = Step::new(stored);
        apply_verification(&mut step, refunds, &self.system_actor(), now)?;
        self.commit_step(tx, step, now).await?;
        Ok(())
    }

    async fn revalidate_before_resend(
        &self,
        tx: &storage::WriteTx,
        step: &mut Step,
        order: Option<&domain::OrderSnapshot>,
        actor: &str,
        now: Timestamp,
    ) -> Result<bool, RecordError> {
        let approvals = storage::approvals::for_proposal(&**tx, &step.stored.proposal.id).await?;
        let conditions = approvals
            .iter()
            .rev()
            .find(|a| a.decision == domain::proposal::Decision::Approve)
            .map(|a| a.conditions.clone());
        let verdict = match (order, conditions) {
            (Some(order), Some(conditions)) => {
                self.revalidation(&**tx, step, order, &conditions).await?
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
                    json!({ "reason": reason.to_string() }),
                    now,
                )?;
                Ok(false)
            }
        }
    }
}

fn apply_verification(
    step: &mut Step,
    refunds: Vec<WireRefund>,
    actor: &str,
    now: Timestamp,
) -> Result<(), TransitionError> {
    let listed: Vec<ProviderRefund> = refunds
        .iter()
        .map(|r| ProviderRefund {
            provider_refund_id: r.provider_refund_id.clone(),
            amount: money_of(r),
            status: status_name(&r.status).to_owned(),
        })
        .collect();
    let summary: Vec<_> = listed
        .iter()
        .map(|r| json!({ "id": r.provider_refund_id, "amount": r.amount.display(), "status": r.status }))
        .collect();
    step.apply(
        Command::RecordVerified { refunds: listed },
        actor,
        json!({ "refunds_under_key": summary }),
        now,
    )?;
    Ok(())
}

async fn book_refund(
    db: &impl storage::ConnectionTrait,
    proposal_id: &str,
    order_id: &str,
    amount: Money,
    provider_refund_id: &str,
    now: Timestamp,
) -> Result<(), StorageError> {
    // One booking per proposal, however often the answer is recorded.
    storage::orders::record_refund_once(
        db,
        order_id,
        &PastRefund {
            id: format!("ref_{proposal_id}"),
            amount,
            channel: "countersign".into(),
            reference: format!("proposal {proposal_id}, provider refund {provider_refund_id}"),
            created_at: now,
        },
    )
    .await?;
    Ok(())
}

fn status_name(status: &ProviderRefundStatus) -> &'static str {
    match status {
        ProviderRefundStatus::Succeeded => "succeeded",
        ProviderRefundStatus::Pending => "pending",
        ProviderRefundStatus::Failed { .. } => "failed",
    }
}

fn money_of(refund: &WireRefund) -> Money {
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
