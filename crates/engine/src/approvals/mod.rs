//! Approving and rejecting proposals: approval is data, bound to the
//! authenticated person, the proposal and the exact action digest they saw.

pub mod approve;
pub mod decide;

pub use decide::DecisionError;

use crate::core::EngineSettings;
use crate::execution::Execution;
use crate::payment_refs::PaymentRefs;
use runner::batch::Combiner;
use std::sync::Arc;
use storage::Database;

/// Approving and rejecting: what it holds is all it uses. Concurrent
/// approvals are combined into batches it owns; the refunds they release
/// go to the work runner and are executed by [`Execution`].
#[derive(Clone)]
pub struct Approvals {
    pub(crate) db: Database,
    pub(crate) settings: Arc<EngineSettings>,
    pub(crate) execution: Execution,
    pub(crate) batch: Arc<Combiner<approve::ApproveRequest>>,
    /// Which payment each proposal refunds (content never changes).
    pub(crate) payment_refs: Arc<PaymentRefs>,
    /// Approvals and rejections are interactive work background lanes
    /// give way to.
    pub(crate) activity: runner::Activity,
    /// Owns the decisions that run to completion after their caller left.
    pub(crate) tasks: runner::Supervisor,
}

impl Approvals {
    pub(crate) fn new(
        db: Database,
        settings: Arc<EngineSettings>,
        execution: Execution,
        batch: Arc<Combiner<approve::ApproveRequest>>,
        payment_refs: Arc<PaymentRefs>,
        activity: runner::Activity,
        tasks: runner::Supervisor,
    ) -> Self {
        Approvals {
            db,
            settings,
            execution,
            batch,
            payment_refs,
            activity,
            tasks,
        }
    }
}

impl Approvals {
    /// The current time on the engine's clock.
    pub fn now(&self) -> domain::Timestamp {
        self.execution.now()
    }
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}
