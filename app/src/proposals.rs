//! Server functions over proposals: the review queue, one proposal, and the
//! approver's decisions. The same engine use cases serve the JSON API.

use crate::error::AppError;
use domain::proposal::{Approval, ProposalState, RefundProposal};
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

/// A proposal as the interface shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalCard {
    pub proposal: RefundProposal,
    pub state: ProposalState,
    /// The version of `state` (it grows with every change): a live
    /// announcement of a newer one replaces what was read.
    #[serde(default)]
    pub state_version: i64,
    /// The customer's display name.
    pub customer: String,
    /// Distinct approvers it needs under today's policy (2: four eyes).
    pub approvals_required: u8,
    /// The order as it is now (none if it no longer exists), to compare
    /// with the version the proposal cites.
    pub order: Option<domain::OrderSnapshot>,
    /// Other proposals for the same order that are still live: approving
    /// both could refund the order twice, so the card says so.
    #[serde(default)]
    pub other_live: Vec<String>,
    /// For an approver looking at a proposal awaiting approval: every check
    /// the engine applies, run for them now, so a refusal shows before
    /// Confirm (empty for everyone else).
    #[serde(default)]
    pub checks: Vec<domain::proposal::PreDecisionCheck>,
    /// The viewer has already given one of its approvals.
    #[serde(default)]
    pub approved_by_me: bool,
}

impl ProposalCard {
    /// Why the viewer may not approve it, when the engine would refuse.
    pub fn blocked_because(&self) -> Option<&str> {
        domain::proposal::blocking_reason(&self.checks)
    }
}

/// One journal event on the proposal's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineEntry {
    pub seq: i64,
    pub at: domain::Timestamp,
    pub actor: String,
    pub kind: String,
    pub from_status: Option<String>,
    pub to_status: Option<String>,
    pub payload: String,
}

/// A receipt from the payment provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptInfo {
    pub provider: String,
    pub provider_refund_id: String,
    pub amount: domain::Money,
    pub status: String,
    pub recorded_at: domain::Timestamp,
}

/// A decision with the name of the person who made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionInfo {
    pub approval: Approval,
    pub approver: String,
}

/// Everything the proposal page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalDetails {
    pub card: ProposalCard,
    pub decisions: Vec<DecisionInfo>,
    pub receipt: Option<ReceiptInfo>,
    pub timeline: Vec<TimelineEntry>,
    /// The viewer may resolve it now (it waits for a person and they are an
    /// approver or manager).
    pub may_resolve: bool,
}

#[cfg(feature = "ssr")]
mod backend {
    use super::*;
    use crate::server;
    use storage::proposals::StoredProposal;

    use crate::desk;

    /// A list the engine refused (this account may list none) or could
    /// not read.
    pub fn list_error(error: engine::proposals::ListError) -> AppError {
        match error {
            engine::proposals::ListError::NotAllowed => {
                server::fail(AppError::Forbidden(error.to_string()))
            }
            engine::proposals::ListError::Storage(inner) => server::internal(&inner),
        }
    }

    pub async fn card(stored: StoredProposal) -> Result<ProposalCard, AppError> {
        let mut cards = cards(vec![stored]).await?;
        cards.pop().ok_or_else(|| server::fail(AppError::Internal))
    }

    /// Each id once, in order: what a page's reads ask for.
    fn distinct(ids: impl Iterator<Item = String>) -> Vec<String> {
        let mut ids: Vec<String> = ids.collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// Cards for many proposals with one read of their orders, one of
    /// their customers' names, and one policy lookup per currency however
    /// many cards share them.
    pub async fn cards(stored: Vec<StoredProposal>) -> Result<Vec<ProposalCard>, AppError> {
        use std::collections::HashMap;
        let ctx = server::context()?;
        let conn = ctx.db.conn();
        let order_ids = distinct(stored.iter().map(|s| s.proposal.order_id.clone()));
        let orders = storage::orders::get_many(conn, &order_ids)
            .await
            .map_err(|e| server::internal(&e))?;
        let live = storage::proposals::live_on_orders(conn, &order_ids)
            .await
            .map_err(|e| server::internal(&e))?;
        let mut desk = desk::Desk::for_viewer(&stored).await?;
        let customer_ids = distinct(
            stored
                .iter()
                .filter_map(|s| s.proposal.provenance.on_behalf_of.clone()),
        );
        let customers = storage::users::display_names_by_id(conn, &customer_ids)
            .await
            .map_err(|e| server::internal(&e))?;
        let mut policies = HashMap::new();
        let mut cards = Vec::with_capacity(stored.len());
        for stored in stored {
            let customer = stored
                .proposal
                .provenance
                .on_behalf_of
                .as_ref()
                .and_then(|id| customers.get(id))
                .map_or_else(|| "unknown customer".to_owned(), Clone::clone);
            let currency = stored.proposal.amount.currency.code();
            if !policies.contains_key(currency) {
                let policy = ctx
                    .engine
                    .approvals
                    .approval_policy(conn, currency)
                    .await
                    .map_err(|e| server::internal(&e))?;
                policies.insert(currency.to_owned(), policy);
            }
            let other_live: Vec<String> = live
                .iter()
                .filter(|(order, id)| {
                    *order == stored.proposal.order_id && *id != stored.proposal.id
                })
                .map(|(_, id)| id.clone())
                .collect();
            let order = orders.get(&stored.proposal.order_id);
            let checks = desk
                .checks(&stored, order, other_live.len(), &policies[currency])
                .await?;
            cards.push(ProposalCard {
                approved_by_me: desk.approved(&stored),
                checks,
                other_live,
                customer,
                approvals_required: policies[currency].required_approvals(stored.proposal.amount),
                order: orders.get(&stored.proposal.order_id).cloned(),
                proposal: stored.proposal,
                state: stored.state,
                state_version: stored.state_version,
            });
        }
        Ok(cards)
    }
}

/// Cards for stored proposals, as the caller sees them (the review queue
/// builds its lists with it).
///
/// # Errors
/// [`AppError::Internal`] on storage failures.
#[cfg(feature = "ssr")]
pub async fn cards_for(
    stored: Vec<storage::proposals::StoredProposal>,
) -> Result<Vec<ProposalCard>, AppError> {
    backend::cards(stored).await
}

/// Recent proposals the caller may see (staff: all), newest first.
#[server(prefix = "/fn", endpoint = "recent_proposals", input = server_fn::codec::GetUrl)]
pub async fn recent_proposals() -> Result<Vec<ProposalCard>, AppError> {
    use crate::server;
    let me = server::require_user()?;
    let ctx = server::context()?;
    let stored = ctx
        .engine
        .proposals
        .list_for(&me.actor(), Default::default(), 50, 0)
        .await
        .map_err(backend::list_error)?;
    let cards = backend::cards(stored).await?;
    Ok(cards)
}

/// One proposal with its decisions, receipt and timeline.
#[server(prefix = "/fn", endpoint = "proposal_page", input = server_fn::codec::GetUrl)]
pub async fn proposal_page(id: String) -> Result<ProposalDetails, AppError> {
    use crate::server;
    let me = server::require_user()?;
    let ctx = server::context()?;
    let missing = || server::fail(AppError::NotFound(format!("no proposal {id}")));
    let detail = ctx
        .engine
        .proposals
        .detail_for(&me.actor(), id.trim())
        .await
        .map_err(|e| server::internal(&e))?
        .ok_or_else(missing)?;
    let approver_ids: Vec<String> = detail
        .decisions
        .iter()
        .map(|a| a.approver_id.clone())
        .collect();
    let approvers = storage::users::display_names_by_id(ctx.db.conn(), &approver_ids)
        .await
        .map_err(|e| server::internal(&e))?;
    let decisions = detail
        .decisions
        .iter()
        .cloned()
        .map(|approval| DecisionInfo {
            approver: approvers
                .get(&approval.approver_id)
                .cloned()
                .unwrap_or_else(|| approval.approver_id.clone()),
            approval,
        })
        .collect();
    let receipt = detail.receipt.as_ref().map(|r| ReceiptInfo {
        provider: r.provider.clone(),
        provider_refund_id: r.provider_refund_id.clone(),
        amount: domain::Money::new(
            r.amount_minor,
            domain::Currency::parse(&r.currency).unwrap_or(domain::Currency::EUR),
        ),
        status: r.status.clone(),
        recorded_at: r.recorded_at,
    });
    let timeline = detail
        .events
        .iter()
        .map(|e| TimelineEntry {
            seq: e.seq,
            at: e.at,
            actor: e.actor.clone(),
            kind: e.kind.clone(),
            from_status: e.from_status.clone(),
            to_status: e.to_status.clone(),
            payload: e.payload.clone(),
        })
        .collect();
    let may_resolve =
        domain::proposal::may_resolve(&me.roles) && waits_for_a_person(&detail.stored.state);
    Ok(ProposalDetails {
        card: backend::card(detail.stored).await?,
        decisions,
        receipt,
        timeline,
        may_resolve,
    })
}

/// Whether only a person can move the proposal on.
pub fn waits_for_a_person(state: &ProposalState) -> bool {
    matches!(
        state,
        ProposalState::NeedsAttention { .. }
            | ProposalState::OutcomeUnknown {
                escalated: true,
                ..
            }
    )
}

/// How a person resolves a proposal that needs attention; the provider
/// checks each claim before anything is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolveChoice {
    /// The provider holds the refund: name its id.
    RefundConfirmed,
    /// No refund exists; send again under a new key after a fresh approval.
    NoRefundRetry,
    /// No refund exists; nothing more to do.
    NoRefund,
    /// Closed without a refund.
    Closed,
}

/// What a resolution did: the proposal now, and the new proposal waiting
/// for approval when a new send was asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolveOutcome {
    pub card: ProposalCard,
    pub retry_id: Option<String>,
}

/// Resolve a proposal that needs attention: confirm the refund at the
/// provider, say no refund exists (optionally sending again under a new
/// key after a fresh approval), or close it without a refund.
#[server(prefix = "/fn", endpoint = "resolve_proposal")]
pub async fn resolve_proposal(
    csrf_token: String,
    id: String,
    choice: ResolveChoice,
    provider_refund_id: String,
    note: String,
) -> Result<ResolveOutcome, AppError> {
    use crate::server;
    use engine::execution::resolve::ResolveAs;
    server::check_csrf(&csrf_token)?;
    let me = server::require_user()?;
    let ctx = server::context()?;
    let how = match choice {
        ResolveChoice::RefundConfirmed => ResolveAs::RefundConfirmed {
            provider_refund_id: provider_refund_id.trim().to_owned(),
        },
        ResolveChoice::NoRefundRetry => ResolveAs::NoRefund { retry: true },
        ResolveChoice::NoRefund => ResolveAs::NoRefund { retry: false },
        ResolveChoice::Closed => ResolveAs::Closed,
    };
    let resolved = ctx
        .engine
        .execution
        .resolve(&me.actor(), id.trim(), how, &note)
        .await
        .map_err(|e| server::fail(crate::server_errors::resolve_error(e)))?;
    Ok(ResolveOutcome {
        card: backend::card(resolved.proposal).await?,
        retry_id: resolved.retry.map(|r| r.proposal.id),
    })
}

/// Approve one proposal, bound to the action digest the approver was shown.
#[server(prefix = "/fn", endpoint = "approve_proposal")]
pub async fn approve_proposal(
    csrf_token: String,
    id: String,
    action_digest: String,
) -> Result<ProposalCard, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_user()?;
    let ctx = server::context()?;
    let stored = ctx
        .engine
        .approvals
        .approve(&me.actor(), id.trim(), action_digest.trim())
        .await
        .map_err(|e| server::fail(crate::server_errors::decision_error(e)))?;
    backend::card(stored).await
}

/// Reject one proposal with a reason.
#[server(prefix = "/fn", endpoint = "reject_proposal")]
pub async fn reject_proposal(
    csrf_token: String,
    id: String,
    reason: String,
) -> Result<ProposalCard, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_user()?;
    let ctx = server::context()?;
    let stored = ctx
        .engine
        .approvals
        .reject(&me.actor(), id.trim(), &reason)
        .await
        .map_err(|e| server::fail(crate::server_errors::decision_error(e)))?;
    backend::card(stored).await
}
