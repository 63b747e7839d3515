//! Proposals: submitted by our agents or by outside agent systems, checked
//! against live records, stored immutably.

mod answers;
pub mod authority;
pub(crate) mod created;
pub(crate) mod one_live;
pub mod queries;
pub mod submit;
pub mod visibility;

pub use authority::{Proposer, STAFF_PROPOSERS, SubmissionLimit};
pub(crate) use created::insert_proposed;
pub use one_live::LiveProposal;
pub(crate) use one_live::live_on_order;
pub use queries::{ListError, ProposalDetail};
pub use submit::{EvidenceRef, SubmitError, SubmitProposal, order_quote};
pub use visibility::may_see;

use crate::clock::Clock;
use crate::live::LiveUpdates;
use crate::payment_refs::PaymentRefs;
use chrono::Duration;
use connectors::PaymentProvider;
use std::sync::Arc;
use storage::Database;

/// The rules a submission is held to.
#[derive(Debug, Clone, Copy)]
pub struct ProposalRules {
    /// How long a new proposal waits for approval.
    pub ttl: Duration,
    /// How many proposals one submitter may submit per rolling window.
    pub submission_limit: SubmissionLimit,
}

/// Submitting proposals and reading them as a given actor may see them.
#[derive(Clone)]
pub struct Proposals {
    db: Database,
    clock: Clock,
    /// Asked whether it can refund an order's payment at all.
    provider: Arc<dyn PaymentProvider>,
    live: LiveUpdates,
    rules: ProposalRules,
    /// Told each new proposal's payment, so approvals need not read it.
    payment_refs: Arc<PaymentRefs>,
}

impl Proposals {
    pub fn new(
        db: Database,
        clock: Clock,
        provider: Arc<dyn PaymentProvider>,
        live: LiveUpdates,
        rules: ProposalRules,
        payment_refs: Arc<PaymentRefs>,
    ) -> Self {
        Proposals {
            db,
            clock,
            provider,
            live,
            rules,
            payment_refs,
        }
    }
}

impl std::fmt::Debug for Proposals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proposals")
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}
