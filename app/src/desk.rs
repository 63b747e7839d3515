//! The approver's desk on the server: the engine's own approval rules and
//! execution's revalidation, run for the signed-in approver against each
//! card they are shown (`domain::proposal::pre_decision_checks`), so what
//! Confirm would be refused for shows before the click.

use crate::error::AppError;
use crate::server;
use domain::proposal::{
    ApprovalContext, ApprovalPolicy, Approver, PreDecisionCheck, ProposalStatus,
    pre_decision_checks,
};
use domain::{OrderSnapshot, Role};
use std::collections::{HashMap, HashSet};
use storage::proposals::StoredProposal;

/// Who is looking, with what the approval rules read about them.
pub struct Desk {
    viewer: Option<Viewer>,
}

struct Viewer {
    id: String,
    roles: domain::RoleSet,
    /// Their limit per currency, read once per currency (None: no limit).
    limits: HashMap<String, Option<i64>>,
    /// (conversation, person) pairs where a person spoke for the team.
    spoke: HashSet<(String, String)>,
}

impl Desk {
    /// The desk for the caller of this server function, prepared for the
    /// `shown` proposals. Anyone but an approver gets no checks.
    ///
    /// # Errors
    /// [`AppError::Internal`] on storage failures.
    pub async fn for_viewer(shown: &[StoredProposal]) -> Result<Desk, AppError> {
        let Some(me) = server::identity().filter(|me| me.roles.contains(Role::Approver)) else {
            return Ok(Desk { viewer: None });
        };
        let ctx = server::context()?;
        let conversations: Vec<String> = shown
            .iter()
            .filter(|s| s.status() == ProposalStatus::AwaitingApproval)
            .filter_map(|s| s.proposal.provenance.conversation_id.clone())
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let spoke = storage::handovers::people_who_spoke_in(ctx.db.conn(), &conversations)
            .await
            .map_err(|e| server::internal(&e))?;
        Ok(Desk {
            viewer: Some(Viewer {
                id: me.user_id,
                roles: me.roles,
                limits: HashMap::new(),
                spoke,
            }),
        })
    }

    /// Whether the viewer has given one of the proposal's approvals.
    pub fn approved(&self, stored: &StoredProposal) -> bool {
        self.viewer.as_ref().is_some_and(|viewer| {
            stored
                .state
                .approvals()
                .iter()
                .any(|a| a.approver_id == viewer.id)
        })
    }

    /// The checklist for the viewer deciding `stored` now; empty when the
    /// viewer is no approver or the proposal no longer awaits approval.
    ///
    /// # Errors
    /// [`AppError::Internal`] on storage failures.
    pub async fn checks(
        &mut self,
        stored: &StoredProposal,
        order: Option<&OrderSnapshot>,
        other_live: usize,
        policy: &ApprovalPolicy,
    ) -> Result<Vec<PreDecisionCheck>, AppError> {
        let Some(viewer) = self.viewer.as_mut() else {
            return Ok(Vec::new());
        };
        if stored.status() != ProposalStatus::AwaitingApproval {
            return Ok(Vec::new());
        }
        let currency = stored.proposal.amount.currency.code();
        if !viewer.limits.contains_key(currency) {
            let ctx = server::context()?;
            // As the approve use case reads it: the stored limit, else the default.
            let limit = storage::limits::approval_limit(ctx.db.conn(), &viewer.id, currency)
                .await
                .map_err(|e| server::internal(&e))?
                .or(ctx.engine.settings.default_approval_limit_minor);
            viewer.limits.insert(currency.to_owned(), limit);
        }
        let spoke = stored
            .proposal
            .provenance
            .conversation_id
            .as_ref()
            .is_some_and(|c| viewer.spoke.contains(&(c.clone(), viewer.id.clone())));
        let approver = Approver {
            id: viewer.id.clone(),
            roles: viewer.roles.clone(),
            limit_minor: viewer.limits[currency],
            spoke_in_conversation: spoke,
        };
        let ctx = ApprovalContext {
            approver: &approver,
            proposal: &stored.proposal,
            state: &stored.state,
            digest_shown: &stored.proposal.action_digest,
            policy,
            now: engine::now(),
        };
        Ok(pre_decision_checks(&ctx, order, other_live))
    }
}
