//! Recording provider answers: answers arriving together are combined into
//! batches (`runner::batch`), each one write transaction that reads the
//! proposals, locks their orders and writes every state, receipt, booking
//! and journal event at once.

use super::Execution;
use super::answer::{AfterAnswer, Answer, RecordError, conflict};
use super::step::{Step, retry_on_conflict, write_states};
use domain::proposal::ProposalState;
use runner::batch::{Request, answer_each};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use storage::StorageError;

/// One answer waiting in the batch queue.
pub(crate) type AnswerRequest = Request<AnswerAsk, AfterAnswer, RecordError>;

/// One answer to record: what the provider said about a proposal's refund.
#[derive(Clone)]
pub(crate) struct AnswerAsk {
    pub proposal_id: String,
    pub answer: Answer,
    /// With a succeeded refund: the charge as the provider reported it
    /// right after (every refund on it and its refunded total), so the
    /// success and its verification are written together. None when not
    /// asked for, or when the provider did not say.
    pub charge_after: Option<connectors::ProviderCharge>,
}

impl AnswerAsk {
    /// Whether recording it verifies the refund, which compares the
    /// charge with the order's books.
    fn verifies(&self) -> bool {
        matches!(self.answer, Answer::Charge(_))
            || (matches!(self.answer, Answer::Refund(_)) && self.charge_after.is_some())
    }

    /// Whether the answer still concerns the proposal in `state`: a refund's
    /// answer only while this executor holds it executing, verification
    /// only once it succeeded (whoever executed it).
    fn applies_to(&self, state: &ProposalState, executor_name: &str) -> bool {
        match (&self.answer, state) {
            (Answer::Charge(_), state) => matches!(state, ProposalState::Succeeded { .. }),
            (_, ProposalState::Executing { executor, .. }) => executor == executor_name,
            _ => false,
        }
    }
}

impl Execution {
    /// Records `answer` for proposal `id` if it still concerns it: a refund's
    /// answer while it is executing under this process's claim, the refunds
    /// under its key once it succeeded. A succeeded refund's answer may
    /// bring the charge as the provider reported it right after
    /// (`charge_after`): its verification, then recorded in the same
    /// transaction. Answers arriving together are recorded together, in one
    /// transaction.
    ///
    /// # Errors
    /// Storage failures or a conflicting concurrent change.
    pub async fn record_answer(
        &self,
        id: &str,
        answer: Answer,
        charge_after: Option<connectors::ProviderCharge>,
    ) -> Result<AfterAnswer, RecordError> {
        let ask = AnswerAsk {
            proposal_id: id.to_owned(),
            answer,
            charge_after,
        };
        retry_on_conflict(|| self.record_in_a_batch(ask.clone())).await
    }

    /// One attempt: queued, then recorded with whatever else is queued.
    async fn record_in_a_batch(&self, ask: AnswerAsk) -> Result<AfterAnswer, RecordError> {
        let engine = self.clone();
        let run = move |batch| {
            let engine = engine.clone();
            async move { answer_each(batch, |asks| engine.try_record_all(asks)).await }
        };
        self.answers.call(ask, run).await.unwrap_or_else(|| {
            Err(RecordError::Storage(StorageError::Unavailable(
                "recording the provider's answer was interrupted".into(),
            )))
        })
    }

    /// One attempt at a batch, in one write transaction: read the
    /// proposals, lock their orders (before any proposal is written, as
    /// every writer does), and write each only if its state version is
    /// still the one read. One answer per order per batch, as for approvals.
    async fn try_record_all(
        &self,
        asks: Arc<[AnswerAsk]>,
    ) -> Result<Vec<Result<AfterAnswer, RecordError>>, RecordError> {
        let now = self.now();
        let actor = self.system_actor();
        let tx = self.db.begin_write().await?;
        let ids: Vec<String> = asks.iter().map(|a| a.proposal_id.clone()).collect();
        let proposals = storage::proposals::get_many(&*tx, &ids).await?;
        let mut results: Vec<Option<Result<AfterAnswer, RecordError>>> =
            asks.iter().map(|_| None).collect();
        let (mut candidates, mut orders_taken) = (Vec::new(), BTreeSet::new());
        for (index, ask) in asks.iter().enumerate() {
            let ours = proposals
                .get(&ask.proposal_id)
                .filter(|stored| ask.applies_to(&stored.state, &self.settings.executor_name));
            match ours {
                // Gone, or someone else already settled it (e.g. took over our lease).
                None => results[index] = Some(Ok(AfterAnswer::Done)),
                Some(stored) if orders_taken.insert(stored.proposal.order_id.clone()) => {
                    candidates.push((index, stored.clone()));
                }
                Some(_) => results[index] = Some(Err(conflict())),
            }
        }
        let order_ids: Vec<String> = orders_taken.into_iter().collect();
        storage::orders::lock_versions(&*tx, &order_ids).await?;
        // Verification compares the charge with the books: read (under the
        // locks just taken) the orders of the answers that verify.
        let verifying: Vec<String> = candidates
            .iter()
            .filter(|(index, _)| asks[*index].verifies())
            .map(|(_, stored)| stored.proposal.order_id.clone())
            .collect();
        let orders = storage::orders::get_many(&*tx, &verifying).await?;
        let (mut steps, mut outcomes) = (Vec::new(), HashMap::new());
        for (index, stored) in candidates {
            let order = orders.get(&stored.proposal.order_id);
            let mut step = Step::new(stored);
            match self
                .apply_answer(&tx, &mut step, &asks[index], order, &actor, now)
                .await
            {
                Ok(outcome) => {
                    outcomes.insert(index, outcome);
                    steps.push((index, step));
                }
                Err(RecordError::Transition(error)) => {
                    results[index] = Some(Err(error.into()));
                }
                Err(error) => return Err(error),
            }
        }
        let (written, lost) = write_states(&*tx, steps, now).await?;
        for index in lost {
            results[index] = Some(Err(conflict()));
        }
        if written.is_empty() {
            tx.rollback().await?;
        } else {
            let (mut receipts, mut bookings) = (Vec::new(), Vec::new());
            for (index, _) in &written {
                if let Some((_, writes)) = outcomes.get_mut(index) {
                    receipts.extend(writes.receipt.take());
                    bookings.extend(writes.booking.take());
                }
            }
            storage::receipts::insert_many_once(&*tx, &receipts).await?;
            storage::orders::record_refunds_once(&*tx, &bookings).await?;
            for (index, _) in self.commit_steps(tx, written).await? {
                if let Some((after, _)) = outcomes.remove(&index) {
                    results[index] = Some(Ok(after));
                }
            }
        }
        Ok(results
            .into_iter()
            .map(|result| result.unwrap_or_else(|| Err(conflict())))
            .collect())
    }
}
