//! A person settles a proposal that needs attention (or whose outcome
//! stayed unknown past the limit): the refund is confirmed at the provider,
//! no refund exists (and, if asked, a new proposal under a new key waits
//! for a fresh approval), or it is closed without a refund. Each claim a
//! person makes about money is checked with the provider first; the
//! provider's figures go into the journal with the resolution.
//!
//! load (proposal, then the charge at the provider) → decide (who may,
//! what the provider shows, the state machine) → save (state, receipt,
//! booking or successor, journal) in one transaction.

use super::Execution;
use super::answer::{booking_for, receipt_row};
use super::charge::charge_evidence;
use super::step::{ConflictAware, SaveError, Step, retry_on_conflict};
use crate::core::Actor;
use connectors::{ProviderCharge, ProviderRefund as WireRefund, ProviderRefundStatus};
use domain::proposal::{
    Command, ProposalState, ProposalStatus, Receipt, Resolution, TransitionError, may_resolve,
};
use serde_json::json;
use storage::ids::new_id;
use storage::proposals::StoredProposal;
use storage::{StorageError, WriteTx};

/// What a person decided, before it is checked with the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveAs {
    /// The provider holds this proposal's refund under this id.
    RefundConfirmed { provider_refund_id: String },
    /// The provider holds no refund for it; `retry` asks for a new proposal
    /// (new key) that needs a fresh approval.
    NoRefund { retry: bool },
    /// Closed without a refund.
    Closed,
}

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("no proposal {0}")]
    NotFound(String),
    #[error("only approvers and managers resolve proposals that need attention")]
    Forbidden,
    #[error("{0}")]
    Invalid(String),
    /// The proposal is not waiting for a person.
    #[error(
        "proposal {id} is {status}; only a proposal that needs attention (or whose outcome stayed unknown past the limit) is resolved by a person"
    )]
    NotResolvable { id: String, status: ProposalStatus },
    /// What the person said does not match what the provider shows.
    #[error("{0}")]
    ProviderDisagrees(String),
    #[error(
        "the payment provider could not be asked about the charge ({0}); nothing was recorded, try again in a moment"
    )]
    ProviderUnavailable(String),
    #[error(transparent)]
    Conflict(SaveError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl ConflictAware for ResolveError {
    fn is_conflict(&self) -> bool {
        matches!(self, ResolveError::Conflict(SaveError::Conflict))
    }
}

impl From<SaveError> for ResolveError {
    fn from(e: SaveError) -> Self {
        match e {
            SaveError::Storage(inner) => ResolveError::Storage(inner),
            conflict => ResolveError::Conflict(conflict),
        }
    }
}

impl From<TransitionError> for ResolveError {
    fn from(e: TransitionError) -> Self {
        ResolveError::Invalid(e.to_string())
    }
}

/// A resolution as recorded: the proposal, and the new proposal waiting
/// for approval when a new send was asked for.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub proposal: StoredProposal,
    pub retry: Option<StoredProposal>,
}

impl Execution {
    /// `actor` resolves proposal `id` as `how`, with a note on what they
    /// checked (required).
    ///
    /// # Errors
    /// [`ResolveError`]: not allowed, not waiting for a person, the provider
    /// showing otherwise or not answering (nothing is recorded then), or a
    /// conflict with another change at the same moment.
    pub async fn resolve(
        &self,
        actor: &Actor,
        id: &str,
        how: ResolveAs,
        note: &str,
    ) -> Result<Resolved, ResolveError> {
        if !may_resolve(&actor.roles) {
            return Err(ResolveError::Forbidden);
        }
        let note = note.trim();
        if note.is_empty() {
            return Err(ResolveError::Invalid(
                "say what you checked: a resolution needs a note".into(),
            ));
        }
        if let ResolveAs::RefundConfirmed { provider_refund_id } = &how
            && provider_refund_id.trim().is_empty()
        {
            return Err(ResolveError::Invalid(
                "name the provider's refund id (e.g. re_…) that you found".into(),
            ));
        }
        retry_on_conflict(|| self.try_resolve(actor, id, &how, note)).await
    }

    async fn try_resolve(
        &self,
        actor: &Actor,
        id: &str,
        how: &ResolveAs,
        note: &str,
    ) -> Result<Resolved, ResolveError> {
        let stored = storage::proposals::get(self.db.conn(), id)
            .await?
            .ok_or_else(|| ResolveError::NotFound(id.to_owned()))?;
        resolvable(&stored)?;
        let charge = self
            .provider
            .charge(&stored.proposal.payment_reference)
            .await
            .map_err(|e| ResolveError::ProviderUnavailable(e.to_string()))?;
        let resolution = self.checked_resolution(&stored, how, note, &charge).await?;

        let now = self.now();
        let tx = self.db.begin_write().await?;
        storage::orders::lock_versions(&*tx, std::slice::from_ref(&stored.proposal.order_id))
            .await?;
        let Some(current) = storage::proposals::get(&*tx, id).await? else {
            return Err(ResolveError::NotFound(id.to_owned()));
        };
        if current.state_version != stored.state_version {
            tx.rollback().await?;
            return Err(ResolveError::Conflict(SaveError::Conflict));
        }
        let mut step = Step::new(current);
        step.apply(
            Command::Resolve {
                by: actor.user_id.clone(),
                resolution: resolution.clone(),
            },
            &actor.journal_name(),
            json!({
                "resolution": resolution.name(),
                "note": note,
                "provider": charge_evidence(&charge),
                "retry_as": match &resolution { Resolution::NoRefund { retry_as, .. } => retry_as.clone(), _ => None },
            }),
            now,
        )?;
        if let ProposalState::Verified { receipt, .. } = step.state() {
            let refund = find_refund(&charge, &receipt.provider_refund_id);
            if let Some(refund) = refund {
                storage::receipts::insert_many_once(&*tx, &[receipt_row(id, receipt, refund)])
                    .await?;
            }
            let (order_id, booked) = booking_for(
                id,
                &step.stored.proposal.order_id,
                receipt.amount,
                &receipt.provider_refund_id,
                now,
            );
            storage::orders::record_refunds_once(&*tx, &[(order_id, booked)]).await?;
        }
        let retry = match &resolution {
            Resolution::NoRefund {
                retry_as: Some(new_id),
                ..
            } => Some(
                self.propose_again(&tx, &step.stored, new_id, actor, now)
                    .await?,
            ),
            _ => None,
        };
        let proposal = self.commit_step(tx, step, now).await?;
        if let Some(retry) = &retry {
            self.live.publish(crate::live::ProposalChanged::of(retry));
        }
        Ok(Resolved { proposal, retry })
    }

    /// Turns the person's word into a resolution the provider bears out.
    async fn checked_resolution(
        &self,
        stored: &StoredProposal,
        how: &ResolveAs,
        note: &str,
        charge: &ProviderCharge,
    ) -> Result<Resolution, ResolveError> {
        let proposal = &stored.proposal;
        // A refund under this proposal's key for its amount that did not
        // fail may be this proposal's money: nobody may say "no refund" or
        // close it while the provider shows one. (A refund under the key for
        // another amount is someone else's reuse of the key: the charge's
        // figures go into the journal with the resolution.)
        let moved: Vec<&WireRefund> = charge
            .refunds_under_key(&proposal.id)
            .into_iter()
            .filter(|r| !matches!(r.status, ProviderRefundStatus::Failed { .. }))
            .filter(|r| r.amount_minor == proposal.amount.amount_minor)
            .collect();
        match how {
            ResolveAs::RefundConfirmed { provider_refund_id } => {
                let id = provider_refund_id.trim();
                let refund = find_refund(charge, id).ok_or_else(|| {
                    ResolveError::ProviderDisagrees(format!(
                        "the payment provider lists no refund {id} on payment {} (it lists: {}); check the id",
                        charge.payment_reference,
                        listing(charge)
                    ))
                })?;
                if !refund.idempotency_key.is_empty() && refund.idempotency_key != proposal.id {
                    return Err(ResolveError::ProviderDisagrees(format!(
                        "refund {id} was made under key {}, not under this proposal's key {}; it belongs to another request",
                        refund.idempotency_key, proposal.id
                    )));
                }
                if let Some(order) =
                    storage::orders::get(self.db.conn(), &proposal.order_id).await?
                {
                    let own = format!("ref_{}", proposal.id);
                    if let Some(booked) = order
                        .refunds
                        .iter()
                        .find(|r| r.id != own && (r.id == id || r.reference.contains(id)))
                    {
                        return Err(ResolveError::ProviderDisagrees(format!(
                            "refund {id} is already booked on order {} as {} ({}); it cannot also be this proposal's",
                            order.id, booked.id, booked.channel
                        )));
                    }
                }
                Ok(Resolution::RefundConfirmed {
                    receipt: Receipt {
                        provider: self.provider.name().to_owned(),
                        provider_refund_id: refund.provider_refund_id.clone(),
                        amount: super::answer::money_of(refund),
                        status: super::answer::status_name(&refund.status).to_owned(),
                        recorded_at: self.now(),
                    },
                    note: note.to_owned(),
                })
            }
            ResolveAs::NoRefund { retry } => {
                if let Some(refund) = moved.first() {
                    return Err(ResolveError::ProviderDisagrees(format!(
                        "the payment provider holds refund {} ({}) under this proposal's key; confirm that refund instead",
                        refund.provider_refund_id,
                        super::answer::status_name(&refund.status)
                    )));
                }
                Ok(Resolution::NoRefund {
                    note: note.to_owned(),
                    retry_as: retry.then(|| new_id("prp")),
                })
            }
            ResolveAs::Closed => {
                if let Some(refund) = moved.first() {
                    return Err(ResolveError::ProviderDisagrees(format!(
                        "money moved: the payment provider holds refund {} ({}) under this proposal's key; confirm that refund instead of closing",
                        refund.provider_refund_id,
                        super::answer::status_name(&refund.status)
                    )));
                }
                Ok(Resolution::Closed {
                    reason: note.to_owned(),
                })
            }
        }
    }

    /// The new proposal of a "no refund, send again" resolution: the same
    /// content under a new id (a new idempotency key), waiting for a fresh
    /// approval.
    async fn propose_again(
        &self,
        tx: &WriteTx,
        old: &StoredProposal,
        new_id: &str,
        actor: &Actor,
        now: domain::Timestamp,
    ) -> Result<StoredProposal, ResolveError> {
        let proposal = old
            .proposal
            .supersede_with(
                old.proposal.to_draft(),
                new_id,
                now,
                self.settings.proposal_ttl,
            )
            .map_err(|e| ResolveError::Invalid(e.to_string()))?;
        let created = crate::proposals::insert_proposed(
            &**tx,
            proposal,
            &actor.journal_name(),
            json!({ "retry_of": old.proposal.id }),
            now,
        )
        .await?;
        let (stored, _) = created.save(&**tx, now).await?;
        Ok(stored)
    }
}

fn resolvable(stored: &StoredProposal) -> Result<(), ResolveError> {
    match &stored.state {
        ProposalState::NeedsAttention { .. }
        | ProposalState::OutcomeUnknown {
            escalated: true, ..
        } => Ok(()),
        other => Err(ResolveError::NotResolvable {
            id: stored.proposal.id.clone(),
            status: other.status(),
        }),
    }
}

fn find_refund<'a>(charge: &'a ProviderCharge, id: &str) -> Option<&'a WireRefund> {
    charge.refunds.iter().find(|r| r.provider_refund_id == id)
}

fn listing(charge: &ProviderCharge) -> String {
    if charge.refunds.is_empty() {
        return "no refunds".into();
    }
    charge
        .refunds
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r.provider_refund_id,
                super::answer::status_name(&r.status)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
