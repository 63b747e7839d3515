//! A new proposal's row and its first journal event, written the same way
//! whoever creates it: an agent's submission, or a person's "no refund,
//! send again" resolution.

use crate::step::{Step, due_at};
use domain::Timestamp;
use domain::proposal::{ProposalState, ProposalStatus, RefundProposal};
use serde_json::{Value, json};
use storage::proposals::StoredProposal;
use storage::{ConnectionTrait, StorageError};

/// Inserts `proposal`, awaiting approval, and returns its step holding the
/// `proposed` event (`extra` fields join the event's payload); the caller
/// saves the step in the same transaction.
///
/// # Errors
/// Storage failures (a duplicate id among them).
pub(crate) async fn insert_proposed(
    db: &impl ConnectionTrait,
    proposal: RefundProposal,
    actor: &str,
    extra: Value,
    now: Timestamp,
) -> Result<Step, StorageError> {
    let state = ProposalState::initial(&proposal);
    storage::proposals::insert(db, &proposal, &state, due_at(&state, now), now).await?;
    let mut payload = json!({
        "agent": proposal.provenance.agent,
        "amount": proposal.amount.display(),
        "action_digest": proposal.action_digest,
        "evidence": proposal.evidence.iter().map(|e| &e.reference).collect::<Vec<_>>(),
        "supersedes": proposal.supersedes,
    });
    if let (Some(fields), Value::Object(more)) = (payload.as_object_mut(), extra) {
        fields.extend(more);
    }
    let mut created = Step::new(StoredProposal {
        proposal,
        state,
        state_version: 1,
        updated_at: now,
    });
    created.record(
        domain::proposal::event::PROPOSED,
        actor,
        None,
        Some(ProposalStatus::AwaitingApproval),
        payload,
        now,
    );
    Ok(created)
}
