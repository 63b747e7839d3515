//! Reading proposals, their decisions, receipts and journal, as the one
//! asking may see them (the rule is in [`super::visibility`]); the edges
//! (pages, API, live updates) apply no rule of their own.

use super::Proposals;
use crate::core::Actor;
use domain::proposal::Approval;
use storage::StorageError;
use storage::journal::{JournalEvent, JournalFilter};
use storage::proposals::{ProposalFilter, StoredProposal};
use storage::receipts::StoredReceipt;

/// The most proposals one page holds.
pub const MAX_PAGE: u64 = 500;

/// Everything a reviewer or auditor sees about one proposal.
#[derive(Debug, Clone)]
pub struct ProposalDetail {
    pub stored: StoredProposal,
    pub decisions: Vec<Approval>,
    pub receipt: Option<StoredReceipt>,
    pub events: Vec<JournalEvent>,
}

#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// Neither staff, an agent account nor a customer (a shop account, a
    /// widget session, which reads one proposal at a time).
    #[error("this account cannot list proposals")]
    NotAllowed,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl Proposals {
    /// The proposal with its decisions, receipt and journal, if `actor` may
    /// see it; `None` both when it does not exist and when it is not theirs
    /// (the edges answer 404 either way).
    ///
    /// # Errors
    /// Database failures.
    pub async fn detail_for(
        &self,
        actor: &Actor,
        id: &str,
    ) -> Result<Option<ProposalDetail>, StorageError> {
        let Some(detail) = self.detail(id).await? else {
            return Ok(None);
        };
        let visible = self.visible_to(actor, &detail.stored.proposal).await?;
        Ok(visible.then_some(detail))
    }

    /// The proposals matching `filter` that `actor` may see, at most
    /// [`MAX_PAGE`]: awaiting ones soonest expiry first, the rest newest
    /// first. The filter is narrowed to the actor's own (an agent account:
    /// those it asked for; a customer: the refunds to them); staff see all.
    ///
    /// # Errors
    /// [`ListError::NotAllowed`] for anyone else; storage failures
    /// (`OutOfRange` for an offset past what the database can page).
    pub async fn list_for(
        &self,
        actor: &Actor,
        filter: ProposalFilter,
        limit: u64,
        offset: u64,
    ) -> Result<Vec<StoredProposal>, ListError> {
        let filter = super::visibility::narrowed(actor, filter).ok_or(ListError::NotAllowed)?;
        Ok(storage::proposals::list(self.db.conn(), &filter, limit.min(MAX_PAGE), offset).await?)
    }

    /// Whether `actor` may follow this proposal's changes live (the same
    /// rule as [`Proposals::detail_for`], without loading its history).
    ///
    /// # Errors
    /// Database failures.
    pub async fn may_watch(&self, actor: &Actor, proposal_id: &str) -> Result<bool, StorageError> {
        let Some(stored) = storage::proposals::get(self.db.conn(), proposal_id).await? else {
            return Ok(false);
        };
        self.visible_to(actor, &stored.proposal).await
    }

    /// The proposal with its history, whoever asks: for the system's own
    /// workers and tests, never for a person's request.
    ///
    /// # Errors
    /// Database failures.
    pub async fn detail(&self, id: &str) -> Result<Option<ProposalDetail>, StorageError> {
        let conn = self.db.conn();
        let Some(stored) = storage::proposals::get(conn, id).await? else {
            return Ok(None);
        };
        let decisions = storage::approvals::for_proposal(conn, id).await?;
        let receipt = storage::receipts::get(conn, id).await?;
        let filter = JournalFilter {
            proposal_id: Some(id.to_owned()),
            ..JournalFilter::default()
        };
        let (events, _) = storage::journal::list(conn, &filter, 0, 500).await?;
        Ok(Some(ProposalDetail {
            stored,
            decisions,
            receipt,
            events,
        }))
    }
}
