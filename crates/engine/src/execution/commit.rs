//! The end of every use case that moves proposals: save, commit, then
//! announce the change and wake the lanes of the work written with it.

use super::Execution;
use crate::step::{SaveError, Step};
use domain::Timestamp;
use storage::StorageError;
use storage::proposals::StoredProposal;
use storage::work::NewWork;

impl Execution {
    /// Saves the step, commits the transaction, and announces the change:
    /// the end of every use case that moves one proposal.
    ///
    /// # Errors
    /// [`SaveError::Conflict`] when another transaction moved the proposal
    /// first; storage failures. Nothing is announced then.
    pub(crate) async fn commit_step(
        &self,
        tx: storage::WriteTx,
        step: Step,
        now: Timestamp,
    ) -> Result<StoredProposal, SaveError> {
        let outbox = step.outbox().to_vec();
        let (stored, change) = match step.save(&*tx, now).await {
            Ok(saved) => saved,
            Err(error) => {
                // Roll back now rather than on drop, so the next writer does
                // not find the database still locked by this transaction.
                tx.rollback().await?;
                return Err(error);
            }
        };
        tx.commit().await?;
        crate::step::wake_lanes(&self.wake, &outbox);
        self.live.publish_all(change.into_iter().collect());
        Ok(stored)
    }

    /// Appends the journal events of steps whose state is already written
    /// ([`write_states`]), commits, and announces the changes: the end of a
    /// batch.
    ///
    /// # Errors
    /// Storage failures; nothing is announced then.
    pub(crate) async fn commit_steps<K>(
        &self,
        tx: storage::WriteTx,
        steps: Vec<(K, Step)>,
    ) -> Result<Vec<(K, StoredProposal)>, StorageError> {
        let mut events = Vec::new();
        let mut changes = Vec::new();
        let mut saved = Vec::with_capacity(steps.len());
        let outbox: Vec<NewWork> = steps
            .iter()
            .flat_map(|(_, step)| step.outbox().iter().cloned())
            .collect();
        storage::work::enqueue(&*tx, &outbox, self.now()).await?;
        for (key, step) in steps {
            let (stored, step_events, change) = step.finish();
            events.extend(step_events);
            changes.extend(change);
            saved.push((key, stored));
        }
        storage::journal::append(&*tx, events).await?;
        tx.commit().await?;
        crate::step::wake_lanes(&self.wake, &outbox);
        self.live.publish_all(changes);
        Ok(saved)
    }
}
