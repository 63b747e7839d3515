//! Reading proposals, their decisions, receipts and journal.

use crate::core::Engine;
use domain::proposal::Approval;
use storage::StorageError;
use storage::journal::{JournalEvent, JournalFilter};
use storage::proposals::{ProposalFilter, StoredProposal};
use storage::receipts::StoredReceipt;

/// Everything a reviewer or auditor sees about one proposal.
#[derive(Debug, Clone)]
pub struct ProposalDetail {
    pub stored: StoredProposal,
    pub decisions: Vec<Approval>,
    pub receipt: Option<StoredReceipt>,
    pub events: Vec<JournalEvent>,
}

impl Engine {
    /// # Errors
    /// Database failures.
    pub async fn proposal(&self, id: &str) -> Result<Option<ProposalDetail>, StorageError> {
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

    /// # Errors
    /// Database failures.
    pub async fn proposals(
        &self,
        filter: &ProposalFilter,
        limit: u64,
        offset: u64,
    ) -> Result<Vec<StoredProposal>, StorageError> {
        storage::proposals::list(self.db.conn(), filter, limit.min(500), offset).await
    }
}
