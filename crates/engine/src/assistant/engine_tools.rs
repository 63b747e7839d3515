//! The chat service's side of the tools' port: each operation a tool may
//! ask for, answered by the service that owns it (proposals, policies) or
//! by the chat itself (orders read, a person asked for).

use super::Chat;
use super::handover::Handover;
use super::tools::ToolPort;
use crate::core::Actor;
use crate::policies::{PolicyError, PolicyHit};
use crate::proposals::{Proposer, SubmitError, SubmitProposal};
use async_trait::async_trait;
use domain::{OrderSnapshot, Timestamp};
use storage::StorageError;
use storage::proposals::{ProposalFilter, StoredProposal};

#[async_trait]
impl ToolPort for Chat {
    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    async fn order(&self, order_id: &str) -> Result<Option<OrderSnapshot>, StorageError> {
        storage::orders::get(self.db.conn(), order_id).await
    }

    async fn customer_orders(&self, customer_id: &str) -> Result<Vec<OrderSnapshot>, StorageError> {
        storage::orders::list_for_customer(self.db.conn(), customer_id).await
    }

    fn search_policy(&self, question: &str, limit: usize) -> Result<Vec<PolicyHit>, PolicyError> {
        self.policies.search(question, limit)
    }

    async fn live_proposals(&self, order_id: &str) -> Result<Vec<StoredProposal>, StorageError> {
        crate::proposals::live_on_order(self.db.conn(), order_id).await
    }

    async fn order_proposals(
        &self,
        order_id: &str,
        limit: u64,
    ) -> Result<Vec<StoredProposal>, StorageError> {
        let filter = ProposalFilter {
            order_id: Some(order_id.to_owned()),
            ..ProposalFilter::default()
        };
        storage::proposals::list(self.db.conn(), &filter, limit, 0).await
    }

    async fn submit_refund(
        &self,
        proposer: Proposer<'_>,
        input: SubmitProposal,
    ) -> Result<StoredProposal, SubmitError> {
        self.proposals.submit(proposer, input).await
    }

    async fn request_person(
        &self,
        actor: &Actor,
        conversation_id: &str,
    ) -> Result<Handover, StorageError> {
        self.request_person_in_turn(actor, conversation_id).await
    }
}
