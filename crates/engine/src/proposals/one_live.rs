//! One live proposal per order and request: inside the submission's
//! transaction (the order locked first), the order's live proposals are
//! read and a new proposal that overlaps any of them, other than the one it
//! says it replaces, is refused naming them (`domain::proposal::overlapping`
//! decides). Without this an agent, ours or an outside one, could leave two
//! approvable proposals for the same refund in the queue.

use super::SubmitError;
use domain::proposal::{LiveClaim, ProposalStatus, overlapping};
use domain::{Money, OrderSnapshot};
use storage::ConnectionTrait;
use storage::proposals::{ProposalFilter, StoredProposal};

/// The live proposals on one order: the most a single order can hold is
/// bounded by its refundable amount, so one page reads them all.
const MOST_LIVE_PER_ORDER: u64 = 500;

/// A live proposal the new one overlaps, as the refusal names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveProposal {
    pub id: String,
    pub status: ProposalStatus,
}

/// Refuses a proposal for `lines` and `amount` on `order` that overlaps a
/// live one other than `replaces`.
///
/// # Errors
/// [`SubmitError::OverlapsLive`] naming the live proposals; storage failures.
pub(crate) async fn refuse_overlap(
    db: &impl ConnectionTrait,
    order: &OrderSnapshot,
    lines: &[String],
    amount: Money,
    left: Money,
    replaces: Option<&str>,
) -> Result<(), SubmitError> {
    let live = live_on_order(db, &order.id).await?;
    let claims: Vec<LiveClaim<'_>> = live
        .iter()
        .map(|stored| LiveClaim {
            id: &stored.proposal.id,
            status: stored.status(),
            lines: &stored.proposal.lines,
            amount_minor: stored.proposal.amount.amount_minor,
        })
        .collect();
    let overlapped = overlapping(
        lines,
        amount.amount_minor,
        left.amount_minor,
        &claims,
        replaces,
    );
    if overlapped.is_empty() {
        return Ok(());
    }
    Err(SubmitError::OverlapsLive {
        order_id: order.id.clone(),
        live: live
            .iter()
            .filter(|stored| overlapped.contains(&stored.proposal.id.as_str()))
            .map(|stored| LiveProposal {
                id: stored.proposal.id.clone(),
                status: stored.status(),
            })
            .collect(),
    })
}

/// The order's proposals not yet in a final state, oldest first.
///
/// # Errors
/// Storage failures.
pub(crate) async fn live_on_order(
    db: &impl ConnectionTrait,
    order_id: &str,
) -> Result<Vec<StoredProposal>, storage::StorageError> {
    let filter = ProposalFilter {
        statuses: ProposalStatus::ALL
            .into_iter()
            .filter(|status| !status.is_terminal())
            .collect(),
        order_id: Some(order_id.to_owned()),
        ..ProposalFilter::default()
    };
    let mut live = storage::proposals::list(db, &filter, MOST_LIVE_PER_ORDER, 0).await?;
    live.sort_by_key(|stored| stored.proposal.created_at);
    Ok(live)
}
