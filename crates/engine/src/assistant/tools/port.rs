//! The tools' port: exactly the operations the agents' tools may ask of
//! the application, and nothing else. A tool holds this trait object (in
//! its [`super::super::scope::TurnScope`]), never the engine, so what a
//! conversation can read or change is this list.

use crate::assistant::handover::Handover;
use crate::core::Actor;
use crate::policies::{PolicyError, PolicyHit};
use crate::proposals::{Proposer, SubmitError, SubmitProposal};
use async_trait::async_trait;
use domain::{OrderSnapshot, Timestamp};
use storage::StorageError;
use storage::proposals::StoredProposal;

#[async_trait]
pub trait ToolPort: Send + Sync {
    /// What time it is on the application's clock.
    fn now(&self) -> Timestamp;

    /// The live order, whoever's it is: the tool decides whether the
    /// conversation's customer may see it.
    async fn order(&self, order_id: &str) -> Result<Option<OrderSnapshot>, StorageError>;

    /// A customer's orders, newest first.
    async fn customer_orders(&self, customer_id: &str) -> Result<Vec<OrderSnapshot>, StorageError>;

    /// Passages of the policies in force matching `question`.
    fn search_policy(&self, question: &str, limit: usize) -> Result<Vec<PolicyHit>, PolicyError>;

    /// The order's proposals not yet in a final state, oldest first.
    async fn live_proposals(&self, order_id: &str) -> Result<Vec<StoredProposal>, StorageError>;

    /// The order's proposals, newest first, at most `limit`.
    async fn order_proposals(
        &self,
        order_id: &str,
        limit: u64,
    ) -> Result<Vec<StoredProposal>, StorageError>;

    /// Submits a refund proposal through the same checks every proposer
    /// meets.
    async fn submit_refund(
        &self,
        proposer: Proposer<'_>,
        input: SubmitProposal,
    ) -> Result<StoredProposal, SubmitError>;

    /// Asks the returns desk (another agent group) what it recorded about
    /// `order_id`'s returned parcel, for conversation `conversation_id`,
    /// and waits a short while for its answer. None when no returns desk is
    /// connected.
    async fn ask_returns_desk(
        &self,
        order_id: &str,
        conversation_id: &str,
    ) -> Result<Option<crate::gateway::OutboxTaskView>, crate::gateway::SendError>;

    /// Reads the carrier's tracking page for `order_id`'s shipment in the
    /// exclusive browser lane, for conversation `conversation_id`, and
    /// records the reading with its screenshot. Cancel-safe: dropped at
    /// Stop, the browser is killed and the lane moves on.
    async fn check_carrier(
        &self,
        order_id: &str,
        conversation_id: &str,
    ) -> Result<crate::assistant::carrier::CarrierCheck, crate::assistant::carrier::CarrierCheckError>;

    /// Lets the subagents of a preempted turn run on in the background and
    /// records what they find in their conversation once they end (or
    /// stops them when the conversation's Stop is pressed).
    fn continue_in_background(&self, work: crate::assistant::subagents::BackgroundWork);

    /// Waits until the visitor holding conversation `conversation_id` signs
    /// in (returning who they signed in as) or `until` passes, holding no
    /// connection meanwhile. The conversation says it waits, so its pages
    /// ask the visitor to sign in. Cancel-safe: dropped at Stop.
    async fn await_sign_in(
        &self,
        conversation_id: &str,
        until: Timestamp,
    ) -> Result<super::request_sign_in::SignIn, StorageError>;

    /// Asks for a person to join conversation `conversation_id`, from a
    /// turn `actor` started.
    async fn request_person(
        &self,
        actor: &Actor,
        conversation_id: &str,
    ) -> Result<Handover, StorageError>;
}
