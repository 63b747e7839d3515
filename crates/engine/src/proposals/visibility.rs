//! Who may see a proposal: staff every one; an agent account those it asked
//! for; a customer the refunds to them. A widget session, on top of that,
//! only the proposals prepared in the conversations it opened itself: the
//! host site's page must not become a window onto the customer's other
//! refunds. What a caller may not see does not exist for them (the edges
//! answer 404, never 403).

use super::queries::ProposalDetail;
use crate::core::{Actor, Engine};
use domain::Role;
use domain::proposal::RefundProposal;
use storage::StorageError;

const STAFF: &[Role] = &[Role::Approver, Role::Manager, Role::Admin];

/// The role rule, without the widget lane (which needs the database).
#[must_use]
pub fn may_see(actor: &Actor, proposal: &RefundProposal) -> bool {
    let provenance = &proposal.provenance;
    actor.roles.any_of(STAFF)
        || provenance.requested_by == actor.user_id
        || provenance.on_behalf_of.as_deref() == Some(actor.user_id.as_str())
}

impl Engine {
    /// The proposal with its decisions, receipt and journal, if `actor` may
    /// see it; `None` both when it does not exist and when it is not theirs.
    ///
    /// # Errors
    /// Database failures.
    pub async fn proposal_for(
        &self,
        actor: &Actor,
        id: &str,
    ) -> Result<Option<ProposalDetail>, StorageError> {
        let Some(detail) = self.proposal(id).await? else {
            return Ok(None);
        };
        let visible = may_see(actor, &detail.stored.proposal)
            && self
                .within_widget_lane(actor, &detail.stored.proposal)
                .await?;
        Ok(visible.then_some(detail))
    }

    /// Whether `actor` may follow this proposal's changes live (the same
    /// rule as [`Engine::proposal_for`], without loading its history).
    ///
    /// # Errors
    /// Database failures.
    pub async fn may_watch_proposal(
        &self,
        actor: &Actor,
        proposal_id: &str,
    ) -> Result<bool, StorageError> {
        let Some(stored) = storage::proposals::get(self.db.conn(), proposal_id).await? else {
            return Ok(false);
        };
        Ok(may_see(actor, &stored.proposal)
            && self.within_widget_lane(actor, &stored.proposal).await?)
    }

    /// True for every credential but a widget session; for one, true only
    /// when the proposal was prepared in a conversation it opened.
    async fn within_widget_lane(
        &self,
        actor: &Actor,
        proposal: &RefundProposal,
    ) -> Result<bool, StorageError> {
        let Some(session) = &actor.widget_session else {
            return Ok(true);
        };
        let Some(conversation_id) = &proposal.provenance.conversation_id else {
            return Ok(false);
        };
        let conversation = storage::conversations::get(self.db.conn(), conversation_id).await?;
        Ok(conversation.is_some_and(|c| c.widget_session_id.as_deref() == Some(session.as_str())))
    }
}
