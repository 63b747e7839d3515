//! Applying commands to a stored proposal inside one transaction: the state
//! changes in memory, each transition queues its journal event, and `save`
//! writes the state (only if nobody moved it meanwhile) and the events.
//!
//! Not a use case: the proposal's lifecycle machinery every use case that
//! moves a proposal shares (proposals, approvals, execution).

use crate::live::ProposalChanged;
use domain::Timestamp;
use domain::proposal::{Command, Effect, ProposalState, ProposalStatus, TransitionError, apply};
use serde_json::Value;
use storage::journal::NewEvent;
use storage::proposals::{StateUpdate, StoredProposal};
use storage::work::NewWork;
use storage::{ConnectionTrait, StorageError};

#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("someone else changed this proposal at the same moment; reload and try again")]
    Conflict,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Errors that say "another writer moved first": the attempt read state
/// that is no longer current, and may be run again from fresh reads.
pub trait ConflictAware {
    fn is_conflict(&self) -> bool;
}

/// How often a use case is attempted when another writer moved first (a
/// conditional update that found a newer state version, or a request that
/// shared its batch with another for the same order) before the conflict is
/// reported. Each retry starts from fresh reads, so it usually ends with the
/// domain's own answer (e.g. "no longer awaiting approval") rather than here.
const ATTEMPTS: u32 = 4;

/// Runs `attempt` again while it reports a conflict, up to [`ATTEMPTS`] times.
///
/// # Errors
/// The last attempt's error.
pub async fn retry_on_conflict<T, E, F>(mut attempt: impl FnMut() -> F) -> Result<T, E>
where
    E: ConflictAware,
    F: std::future::Future<Output = Result<T, E>>,
{
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(error) if error.is_conflict() && tries < ATTEMPTS => tries += 1,
            done => return done,
        }
    }
}

pub struct Step {
    pub stored: StoredProposal,
    read_version: i64,
    events: Vec<NewEvent>,
    changed: bool,
    /// Work the transitions asked for that runs outside this transaction
    /// (a person to tell, a verification to make), written with the state.
    outbox: Vec<NewWork>,
}

impl Step {
    pub fn new(stored: StoredProposal) -> Self {
        let read_version = stored.state_version;
        Step {
            stored,
            read_version,
            events: Vec::new(),
            changed: false,
            outbox: Vec::new(),
        }
    }

    pub fn state(&self) -> &ProposalState {
        &self.stored.state
    }

    pub fn status(&self) -> ProposalStatus {
        self.stored.state.status()
    }

    /// Applies a command; returns the effects it asks for.
    ///
    /// # Errors
    /// The command does not fit the current state.
    pub fn apply(
        &mut self,
        command: Command,
        actor: &str,
        payload: Value,
        now: Timestamp,
    ) -> Result<Vec<Effect>, TransitionError> {
        let from = self.status();
        let verifies = matches!(command, Command::RecordVerified { .. });
        let transition = apply(&self.stored.proposal, &self.stored.state, command, now)?;
        self.interpret(&transition.effects, verifies, now);
        self.record(
            transition.event,
            actor,
            Some(from),
            Some(transition.next.status()),
            payload,
            now,
        );
        self.stored.state = transition.next;
        self.changed = true;
        Ok(transition.effects)
    }

    /// Turns the effects that run outside the transaction into work items
    /// written with it: a person to tell, a verification to make (dropped
    /// again when the same step records the verification). The effects
    /// that act on the provider now (send, status query, revalidation,
    /// booking) are carried out by the use case that applied the command.
    fn interpret(&mut self, effects: &[Effect], verifies: bool, now: Timestamp) {
        let id = self.stored.proposal.id.clone();
        for effect in effects {
            match effect {
                Effect::NotifyPerson { reason } => {
                    self.outbox
                        .push(crate::work::person_notify(&id, reason, now));
                }
                Effect::Verify { .. } => {
                    self.outbox
                        .push(crate::work::proposal_check(&id, now + VERIFICATION_GRACE));
                }
                Effect::Execute
                | Effect::Revalidate
                | Effect::SendRefund { .. }
                | Effect::QueryStatus { .. }
                | Effect::BookRefundOnOrder { .. } => {}
            }
        }
        if verifies {
            self.outbox
                .retain(|work| work.kind != crate::work::PROPOSAL_CHECK);
        }
    }

    /// The work items this step will write with its state.
    pub fn outbox(&self) -> &[NewWork] {
        &self.outbox
    }

    /// Queues a journal event that is not a state change (e.g. "proposed").
    pub fn record(
        &mut self,
        kind: &str,
        actor: &str,
        from: Option<ProposalStatus>,
        to: Option<ProposalStatus>,
        payload: Value,
        at: Timestamp,
    ) {
        self.events.push(NewEvent {
            proposal_id: Some(self.stored.proposal.id.clone()),
            order_id: Some(self.stored.proposal.order_id.clone()),
            actor: actor.to_owned(),
            kind: kind.to_owned(),
            from_status: from.map(|s| s.as_str().to_owned()),
            to_status: to.map(|s| s.as_str().to_owned()),
            payload,
            at,
        });
    }

    /// The conditional update this step needs, if it changed anything.
    fn state_update(&self, now: Timestamp) -> Option<StateUpdate> {
        self.changed.then(|| StateUpdate {
            id: self.stored.proposal.id.clone(),
            expected_version: self.read_version,
            state: self.stored.state.clone(),
            due_at: due_at(&self.stored.state, now),
            now,
        })
    }

    fn mark_written(&mut self, now: Timestamp) {
        if self.changed {
            self.stored.state_version = self.read_version + 1;
            self.stored.updated_at = now;
        }
    }

    /// The proposal as written, the journal events to append with it, and
    /// the change to announce after commit.
    pub fn finish(self) -> (StoredProposal, Vec<NewEvent>, Option<ProposalChanged>) {
        let change = self.changed.then(|| ProposalChanged::of(&self.stored));
        (self.stored, self.events, change)
    }

    /// Writes the new state (conditional on the version read) and the
    /// journal events, in the caller's transaction.
    ///
    /// # Errors
    /// [`SaveError::Conflict`] when another transaction moved the proposal.
    pub async fn save(
        self,
        db: &impl ConnectionTrait,
        now: Timestamp,
    ) -> Result<(StoredProposal, Option<ProposalChanged>), SaveError> {
        let (mut written, _) = write_states(db, vec![((), self)], now).await?;
        let Some(((), step)) = written.pop() else {
            return Err(SaveError::Conflict);
        };
        storage::work::enqueue(db, &step.outbox, now).await?;
        let (stored, events, change) = step.finish();
        storage::journal::append(db, events).await?;
        Ok((stored, change))
    }
}

/// Writes the new state of each step that changed, in one conditional
/// update for all (only where the state is still the version read), and
/// splits them into those written and the keys of those that lost a race:
/// another writer moved that proposal first, so nothing else may be written
/// for it.
///
/// # Errors
/// Database failures.
pub async fn write_states<K>(
    db: &impl ConnectionTrait,
    steps: Vec<(K, Step)>,
    now: Timestamp,
) -> Result<(Vec<(K, Step)>, Vec<K>), StorageError> {
    let updates: Vec<StateUpdate> = steps
        .iter()
        .filter_map(|(_, step)| step.state_update(now))
        .collect();
    let moved = storage::proposals::update_states(db, &updates).await?;
    let (mut written, mut lost) = (Vec::with_capacity(steps.len()), Vec::new());
    for (key, mut step) in steps {
        if !step.changed || moved.contains(&step.stored.proposal.id) {
            step.mark_written(now);
            written.push((key, step));
        } else {
            lost.push(key);
        }
    }
    Ok((written, lost))
}

/// How long a success recorded without its verification waits before the
/// reconciler asks the provider for the refunds under its key again (the
/// success is verified as it is recorded; it is left unverified only when
/// the provider did not answer the question about its key).
const VERIFICATION_GRACE: chrono::Duration = chrono::Duration::seconds(2);

/// When the reconciler should next look at a proposal in this state. A
/// succeeded refund is verified as it is recorded, or by the reconciler
/// shortly after.
pub fn due_at(state: &ProposalState, now: Timestamp) -> Option<Timestamp> {
    match state {
        ProposalState::Succeeded { .. } => Some(now + VERIFICATION_GRACE),
        other => other.due_at(),
    }
}

/// Wakes the lanes of work items just committed.
pub(crate) fn wake_lanes(wake: &runner::Wake, items: &[NewWork]) {
    let mut lanes: Vec<&str> = items.iter().map(|item| item.lane.as_str()).collect();
    lanes.sort_unstable();
    lanes.dedup();
    for lane in lanes {
        wake.lane(lane);
    }
}
