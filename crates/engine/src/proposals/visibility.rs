//! Who may see a proposal: staff every one; an agent account those it asked
//! for; a customer the refunds to them. A widget session, on top of that,
//! only the proposals prepared in the conversations it opened itself: the
//! host site's page must not become a window onto the customer's other
//! refunds. What a caller may not see does not exist for them (the edges
//! answer 404, never 403). The one place this rule is written.

use super::Proposals;
use crate::core::Actor;
use domain::Role;
use domain::proposal::RefundProposal;
use storage::StorageError;
use storage::proposals::ProposalFilter;

const STAFF: &[Role] = &[Role::Approver, Role::Manager, Role::Admin];

/// The role rule, without the widget lane (which needs the database).
#[must_use]
pub fn may_see(actor: &Actor, proposal: &RefundProposal) -> bool {
    let provenance = &proposal.provenance;
    actor.roles.any_of(STAFF)
        || provenance.requested_by == actor.user_id
        || provenance.on_behalf_of.as_deref() == Some(actor.user_id.as_str())
}

/// `filter` narrowed to what `actor` may list, or None when they may list
/// nothing: staff everything; an agent account what it asked for; a
/// customer the refunds to them. A widget session lists nothing (it reads
/// the one proposal its conversation prepared).
pub(super) fn narrowed(actor: &Actor, mut filter: ProposalFilter) -> Option<ProposalFilter> {
    if actor.widget_session.is_some() {
        return None;
    }
    if actor.roles.any_of(STAFF) {
        return Some(filter);
    }
    if actor.roles.contains(Role::Agent) {
        filter.requested_by = Some(actor.user_id.clone());
        return Some(filter);
    }
    if actor.roles.contains(Role::Customer) {
        filter.on_behalf_of = Some(actor.user_id.clone());
        return Some(filter);
    }
    None
}

impl Proposals {
    /// The role rule and the widget lane.
    pub(super) async fn visible_to(
        &self,
        actor: &Actor,
        proposal: &RefundProposal,
    ) -> Result<bool, StorageError> {
        Ok(may_see(actor, proposal) && self.within_widget_lane(actor, proposal).await?)
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
