//! Approving: concurrent approvals are combined into batches
//! (`runner::batch`); a batch is one write transaction: read its proposals,
//! lock and read their orders, read the approvers' limits, check permission
//! in code for each request, then record the approvals, revalidate and claim
//! the proposals that are now fully approved, each only if its state is
//! still the version read (otherwise the request starts over in a later
//! batch). The provider is called only after commit.

use super::Approvals;
use super::decide::{DecisionError, conflict, policy_versions};
use crate::core::Actor;
use crate::execution::ChargeCheck;
use crate::execution::step::{Step, retry_on_conflict, write_states};
use domain::proposal::{
    Approval, ApprovalContext, ApprovalPolicy, Approver, ConditionsSnapshot, Effect,
    ProposalStatus, check_approval,
};
use domain::{OrderSnapshot, Timestamp};
use runner::batch::{Request, answer_each};
use serde_json::json;
use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use storage::ids::new_id;
use storage::proposals::StoredProposal;
use storage::{StorageError, WriteTx};

/// One approval waiting in the batch queue.
pub(crate) type ApproveRequest = Request<ApproveAsk, StoredProposal, DecisionError>;

/// One approval asked for.
#[derive(Clone)]
pub(crate) struct ApproveAsk {
    actor: Actor,
    proposal_id: String,
    digest_shown: String,
    /// The charge as the provider reported it just before; None when the
    /// proposal could not be approved anyway (unknown, no longer waiting).
    charge: Option<ChargeCheck>,
}

/// An approval decided in memory, waiting for the write transaction.
struct Planned {
    step: Step,
    approval: Approval,
    order_id: String,
    conditions: ConditionsSnapshot,
    executes: bool,
    charge: Option<ChargeCheck>,
}

/// What a batch read before deciding.
struct BatchReads {
    proposals: HashMap<String, StoredProposal>,
    orders: HashMap<String, OrderSnapshot>,
    limits: HashMap<(String, String), Option<i64>>,
    /// The approval policy of each currency in the batch.
    policies: HashMap<String, ApprovalPolicy>,
    /// (proposal, approver) pairs where the approver spoke for the team in
    /// the conversation the proposal was prepared in.
    spoke: HashSet<(String, String)>,
}

impl Approvals {
    /// `actor` approves proposal `proposal_id`, having been shown the action
    /// with digest `digest_shown`. The provider is first asked what is left
    /// on the charge; when this completes the approvals, the proposal is
    /// revalidated against the order and that answer and claimed in the
    /// same transaction, and the refund is sent in the background.
    ///
    /// # Errors
    /// [`DecisionError`]: an empty digest, not found, denied (with the rule
    /// broken), the provider not answering about the charge (nothing is
    /// recorded), or a conflict when another decision landed at the same
    /// moment.
    pub async fn approve(
        &self,
        actor: &Actor,
        proposal_id: &str,
        digest_shown: &str,
    ) -> Result<StoredProposal, DecisionError> {
        if digest_shown.trim().is_empty() {
            return Err(DecisionError::Invalid(
                "action_digest is required: send the digest of the action you were shown".into(),
            ));
        }
        // A person waits on this: background lanes give way meanwhile.
        let _interactive = self.activity.enter();
        let reference = match self.payment_refs.get(proposal_id) {
            Some(reference) => Some(reference),
            None => storage::proposals::get(self.db.conn(), proposal_id)
                .await?
                .filter(|stored| stored.status() == ProposalStatus::AwaitingApproval)
                .map(|stored| {
                    let reference = stored.proposal.payment_reference;
                    self.payment_refs.remember(proposal_id, &reference);
                    reference
                }),
        };
        let charge = match reference {
            Some(reference) => Some(self.execution.check_charge(&reference).await),
            None => None,
        };
        let approvals = self.clone();
        let ask = ApproveAsk {
            actor: actor.clone(),
            proposal_id: proposal_id.to_owned(),
            digest_shown: digest_shown.to_owned(),
            charge,
        };
        crate::core::detached(&self.tasks, async move {
            retry_on_conflict(|| approvals.approve_in_a_batch(ask.clone())).await
        })
        .await
    }

    /// One attempt: queued, then decided with whatever else is queued.
    async fn approve_in_a_batch(&self, ask: ApproveAsk) -> Result<StoredProposal, DecisionError> {
        let approvals = self.clone();
        let run = move |batch| {
            let approvals = approvals.clone();
            async move { answer_each(batch, |asks| approvals.try_approve_all(asks)).await }
        };
        self.batch.call(ask, run).await.unwrap_or_else(|| {
            Err(DecisionError::Storage(StorageError::Unavailable(
                "the approval was interrupted before it was recorded; nothing was approved, try again"
                    .into(),
            )))
        })
    }

    /// One attempt at every request of a batch, in one write transaction;
    /// an answer per request, or an error for the batch as a whole.
    async fn try_approve_all(
        &self,
        asks: Arc<[ApproveAsk]>,
    ) -> Result<Vec<Result<StoredProposal, DecisionError>>, DecisionError> {
        let now = self.now();
        let mut results: Vec<Option<Result<StoredProposal, DecisionError>>> =
            asks.iter().map(|_| None).collect();
        let tx = self.db.begin_write().await?;
        let reads = self.read_for_approvals(&tx, &asks).await?;

        // Decide each in memory. One request per order per batch: claims on
        // one order must see each other, and do only across transactions.
        let mut plans = Vec::new();
        let mut orders_taken = HashSet::new();
        for (index, ask) in asks.iter().enumerate() {
            match self.plan_approval(ask, &reads, now) {
                Ok(plan) if orders_taken.insert(plan.order_id.clone()) => plans.push((index, plan)),
                Ok(_) => results[index] = Some(Err(conflict())),
                Err(error) => results[index] = Some(Err(error)),
            }
        }
        if plans.is_empty() {
            tx.rollback().await?;
        } else {
            for (index, outcome) in self.write_approvals(tx, plans, &reads.orders, now).await? {
                results[index] = Some(outcome);
            }
        }
        Ok(results
            .into_iter()
            .map(|result| result.unwrap_or_else(|| Err(conflict())))
            .collect())
    }

    /// The proposals, orders, approver limits and four-eyes thresholds a
    /// batch needs. The orders are locked first (before any proposal is
    /// written, as every writer does), so what is read of them stays true
    /// until commit; a proposal moved meanwhile fails its conditional update.
    async fn read_for_approvals(
        &self,
        tx: &WriteTx,
        asks: &[ApproveAsk],
    ) -> Result<BatchReads, StorageError> {
        let ids: Vec<String> = asks.iter().map(|a| a.proposal_id.clone()).collect();
        let proposals = storage::proposals::get_many(&**tx, &ids).await?;
        let order_ids: Vec<String> = proposals
            .values()
            .map(|p| p.proposal.order_id.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let orders = storage::orders::lock_and_get_many(&**tx, &order_ids).await?;
        let conversation_ids: Vec<String> = proposals
            .values()
            .filter_map(|p| p.proposal.provenance.conversation_id.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let speakers = storage::handovers::people_who_spoke_in(&**tx, &conversation_ids).await?;
        let (mut limits, mut policies) = (HashMap::new(), HashMap::new());
        let mut spoke = HashSet::new();
        for ask in asks {
            let Some(stored) = proposals.get(&ask.proposal_id) else {
                continue;
            };
            if let Some(conversation) = &stored.proposal.provenance.conversation_id
                && speakers.contains(&(conversation.clone(), ask.actor.user_id.clone()))
            {
                spoke.insert((ask.proposal_id.clone(), ask.actor.user_id.clone()));
            }
            let currency = stored.proposal.amount.currency.code().to_owned();
            let key = (ask.actor.user_id.clone(), currency.clone());
            if let Entry::Vacant(slot) = limits.entry(key) {
                let limit = storage::limits::approval_limit(&**tx, &ask.actor.user_id, &currency)
                    .await?
                    .or(self.settings.default_approval_limit_minor);
                slot.insert(limit);
            }
            if let Entry::Vacant(slot) = policies.entry(currency) {
                let policy = self.approval_policy(&**tx, slot.key()).await?;
                slot.insert(policy);
            }
        }
        Ok(BatchReads {
            proposals,
            orders,
            limits,
            policies,
            spoke,
        })
    }

    /// The permission rules and the state machine for one request, against
    /// what the batch read.
    fn plan_approval(
        &self,
        ask: &ApproveAsk,
        reads: &BatchReads,
        now: Timestamp,
    ) -> Result<Planned, DecisionError> {
        let stored = reads
            .proposals
            .get(&ask.proposal_id)
            .ok_or_else(|| DecisionError::NotFound(ask.proposal_id.clone()))?;
        let currency = stored.proposal.amount.currency.code().to_owned();
        let approver = Approver {
            id: ask.actor.user_id.clone(),
            roles: ask.actor.roles.clone(),
            limit_minor: reads
                .limits
                .get(&(ask.actor.user_id.clone(), currency.clone()))
                .copied()
                .flatten(),
            spoke_in_conversation: reads
                .spoke
                .contains(&(ask.proposal_id.clone(), ask.actor.user_id.clone())),
        };
        // Read for every currency of the batch's proposals.
        let policy = reads.policies.get(&currency).ok_or_else(|| {
            DecisionError::Storage(StorageError::Corrupt(format!(
                "no approval policy was read for {currency}"
            )))
        })?;
        let ctx = ApprovalContext {
            approver: &approver,
            proposal: &stored.proposal,
            state: &stored.state,
            digest_shown: &ask.digest_shown,
            policy,
            now,
        };
        let outcome = check_approval(&ctx)?;
        let order = reads.orders.get(&stored.proposal.order_id).ok_or_else(|| {
            DecisionError::Invalid(format!(
                "order {} no longer exists; this proposal cannot be approved",
                stored.proposal.order_id
            ))
        })?;
        let conditions = ConditionsSnapshot::capture(order, policy_versions(&stored.proposal))
            .map_err(|e| {
                DecisionError::Invalid(format!("the order's records are inconsistent: {e}"))
            })?;
        let approval = Approval::approve(new_id("apv"), &ctx, conditions.clone());
        let mut step = Step::new(stored.clone());
        let effects = step.apply(
            outcome.command(&approval),
            &ask.actor.journal_name(),
            json!({
                "approval_id": approval.id,
                "action_digest": approval.action_digest_shown,
                "required_approvals": outcome.required_approvals(),
                "conditions": conditions,
            }),
            now,
        )?;
        Ok(Planned {
            step,
            approval,
            order_id: order.id.clone(),
            conditions,
            executes: effects.contains(&Effect::Execute),
            charge: ask.charge.clone(),
        })
    }

    /// The writes of a batch: claim and revalidate the proposals now fully
    /// approved; write each state if it is still the version read; record
    /// the approvals and the journal; commit; then send. Returns an answer
    /// for each plan.
    async fn write_approvals(
        &self,
        tx: WriteTx,
        plans: Vec<(usize, Planned)>,
        orders: &HashMap<String, OrderSnapshot>,
        now: Timestamp,
    ) -> Result<Vec<(usize, Result<StoredProposal, DecisionError>)>, DecisionError> {
        let mut answers = Vec::with_capacity(plans.len());
        let executing: Vec<String> = plans
            .iter()
            .filter(|(_, plan)| plan.executes)
            .map(|(_, plan)| plan.order_id.clone())
            .collect();
        let in_flight = storage::proposals::in_flight_on_orders(&*tx, &executing).await?;
        let (mut steps, mut approvals, mut sends) = (Vec::new(), HashMap::new(), HashSet::new());
        for (index, mut plan) in plans {
            if plan.executes
                && let Some(order) = orders.get(&plan.order_id)
            {
                // Nothing is approved that cannot be checked at the
                // provider: the approver is told and may try again.
                let charge = match &plan.charge {
                    Some(ChargeCheck::Read(charge)) => charge,
                    Some(ChargeCheck::Unavailable(reason)) => {
                        answers.push((
                            index,
                            Err(DecisionError::ProviderUnavailable(reason.clone())),
                        ));
                        continue;
                    }
                    None => {
                        answers.push((index, Err(conflict())));
                        continue;
                    }
                };
                let reserved = in_flight.reserved(&order.id, &plan.step.stored.proposal.id);
                match self.execution.claim_and_revalidate(
                    &mut plan.step,
                    order,
                    &plan.conditions,
                    reserved,
                    charge,
                    now,
                ) {
                    Ok(true) => {
                        sends.insert(index);
                    }
                    Ok(false) => {}
                    Err(error) => {
                        answers.push((index, Err(error.into())));
                        continue;
                    }
                }
            }
            approvals.insert(index, plan.approval);
            steps.push((index, plan.step));
        }
        let (written, lost) = write_states(&*tx, steps, now).await?;
        answers.extend(lost.into_iter().map(|index| (index, Err(conflict()))));
        if written.is_empty() {
            tx.rollback().await?;
            return Ok(answers);
        }
        let recorded: Vec<Approval> = written
            .iter()
            .filter_map(|(index, _)| approvals.remove(index))
            .collect();
        storage::approvals::insert_many(&*tx, &recorded).await?;
        // The sends are committed with the approvals: a crash after the
        // commit leaves them queued for the payments lane, never lost.
        let to_send: Vec<_> = written
            .iter()
            .filter(|(index, _)| sends.contains(index))
            .map(|(_, step)| crate::work::refund_send(&(&step.stored.proposal).into(), now))
            .collect();
        let to_send = crate::work::queue_sends(&self.execution.wake, &*tx, to_send, now).await?;
        for (index, stored) in self.execution.commit_steps(tx, written).await? {
            answers.push((index, Ok(stored)));
        }
        to_send.start(&self.execution.wake);
        Ok(answers)
    }
}
