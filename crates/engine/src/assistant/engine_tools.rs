//! The chat service's side of the tools' port: each operation a tool may
//! ask for, answered by the service that owns it (proposals, policies) or
//! by the chat itself (orders read, a person asked for).

use super::Chat;
use super::handover::Handover;
use super::tools::ToolPort;
use super::tools::request_sign_in::SignIn;
use crate::core::Actor;
use crate::gateway::{OutboundTask, OutboxTaskView, RETURNS_INSPECTION, SendError};
use crate::policies::{PolicyError, PolicyHit};
use crate::proposals::{Proposer, SubmitError, SubmitProposal};
use async_trait::async_trait;
use domain::{OrderSnapshot, Timestamp};
use gateway::{Budget, TaskKind};
use serde_json::json;
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

    async fn ask_returns_desk(
        &self,
        order_id: &str,
        conversation_id: &str,
    ) -> Result<Option<OutboxTaskView>, SendError> {
        let Some(desk) = &self.returns_desk else {
            return Ok(None);
        };
        let now = self.clock.now();
        let task = desk
            .sender
            .send(OutboundTask {
                to: desk.group.clone(),
                kind: TaskKind::parse(RETURNS_INSPECTION)
                    .map_err(|e| SendError::Invalid(gateway::Refusal::Malformed(e.to_string())))?,
                input: json!({ "order_id": order_id }),
                // A lookup of the desk's records: no model, no money, and
                // worth nothing once the customer has been asked instead.
                budget: Budget {
                    model_calls: 0,
                    steps: 4,
                    tokens: 0,
                    money: None,
                    deadline: now + chrono::Duration::minutes(2),
                },
                subject: Some(conversation_id.to_owned()),
            })
            .await?;
        Ok(Some(desk.sender.wait_for(&task.id, desk.wait).await?))
    }

    async fn check_carrier(
        &self,
        order_id: &str,
        conversation_id: &str,
    ) -> Result<crate::assistant::carrier::CarrierCheck, crate::assistant::carrier::CarrierCheckError>
    {
        Chat::check_carrier(self, order_id, conversation_id).await
    }

    fn continue_in_background(&self, work: crate::assistant::subagents::BackgroundWork) {
        self.run_in_background(work);
    }

    async fn await_sign_in(
        &self,
        conversation_id: &str,
        until: Timestamp,
    ) -> Result<SignIn, StorageError> {
        self.await_visitor_sign_in(conversation_id, until).await
    }

    async fn request_person(
        &self,
        actor: &Actor,
        conversation_id: &str,
    ) -> Result<Handover, StorageError> {
        self.request_person_in_turn(actor, conversation_id).await
    }
}
