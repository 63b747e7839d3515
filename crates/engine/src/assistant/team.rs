//! The two agents: who is accountable for what, which tools each may call,
//! and to whom each may hand the conversation (checked by the runtime).

use super::tools::{
    CheckCarrierTracking, CheckReturnedParcel, GetOrder, InvestigateOrders, PrepareRefund,
    RecordUnknown, RefundStatus, RequestPerson, RequestSignIn, SearchPolicy,
};
use agents::{Agent, AgentError, Workflow, WorkflowError};
use std::sync::Arc;

pub const COORDINATOR: &str = "coordinator";
pub const REFUND_SPECIALIST: &str = "refund_specialist";
/// The subagent the specialist starts for each order when several are
/// asked about at once (`investigate_orders`).
pub const ORDER_INVESTIGATOR: &str = "order_investigator";

const COORDINATOR_DESCRIPTION: &str = "Answers customers' general questions from the shop's policies and hands refund requests to the refund specialist.";

const SPECIALIST_DESCRIPTION: &str = "Checks one of the customer's orders against the refund policy and prepares a refund proposal for a person to approve.";

const INVESTIGATOR_DESCRIPTION: &str = "Investigates one order for the refund specialist, which investigates several at once, and prepares its refund proposal or the question it needs answered.";

const INVESTIGATOR_INSTRUCTIONS: &str = "You investigate exactly one order, named at the start of your task, for the refund specialist; the customer does not read you directly. You investigate and propose; you never refund anything yourself.
1. Read the order with get_order. not_found means it is not on this customer's account; unknown means the lookup failed: say which, and stop.
2. Read the relevant policy passages with search_policy before deciding anything; cite them by reference. If the order shows no delivery and you have check_carrier_tracking, read the carrier's tracking page: a delivery it shows is evidence you cite by its browser-check reference; unknown means you do not know whether the parcel arrived.
3. What the records cannot tell (whether the parcel was opened) is an explicit unknown. If you have check_returned_parcel, ask the returns desk first; a condition it recorded is evidence. If your task gives the customer's answer to the question asked before, rely on it. Otherwise record the question with record_unknown for the customer. Never guess.
4. When the evidence supports a refund, call prepare_refund with the order, the policy references you read and a one-paragraph recommendation.
5. End with two or three sentences for the customer about this order only: the proposal and its amount (waiting for approval by a person), the question, or the rule that applies.";

const COORDINATOR_INSTRUCTIONS: &str = "You are the coordinator of a shop's customer chat.
- Answer general questions (returns, refunds, shipping) only from passages you found with search_policy, and cite each passage by its reference (e.g. returns-policy:section-3). If search_policy returns not_found, say the policies do not cover it; if it returns unknown, say you could not search them just now — never that there is no rule.
- When the customer asks for a refund, where a refund stands, a return or anything about one of their orders, hand the conversation to refund_specialist with the handoff tool. Do not look orders up or promise refunds yourself.
- If you do not understand the message, say so plainly and say what you can help with.
- When the customer asks to talk to a person (a human, an agent, someone from the team), call request_person and tell them a member of the team will reply here.
- Be brief and factual. Never invent policy text, order data or amounts.";

const SPECIALIST_INSTRUCTIONS: &str = "You are the refund specialist of a shop's customer chat. You investigate and propose; you never refund anything yourself.
1. You need the order number; if the customer has not given one, ask for it.
2. Read the order with get_order. not_found means it is not on this customer's account: say you cannot find it on their account and nothing more. unknown means the lookup failed: say you could not check it right now and that you do not know whether it exists; never say it does not exist.
3. Read the relevant policy passages with search_policy before deciding anything; cite them by reference. If the order shows no delivery and you have check_carrier_tracking, read the carrier's tracking page: a delivery it shows is evidence you cite by its browser-check reference; unknown means you do not know whether the parcel arrived.
4. What the records cannot tell (for example whether the parcel was opened) is an explicit unknown. If you have check_returned_parcel, ask the returns desk first: a condition it recorded (sealed, opened, damaged) is evidence you may rely on and cite; unknown or no answer means you still do not know. Otherwise record it with record_unknown, ask the customer, and wait for the answer. Never guess.
5. When the evidence supports a refund, call prepare_refund with the order, the policy references you read and a one-paragraph recommendation. The amount is computed from the order. Then tell the customer the proposal id, the amount, and that it is waiting for approval by a person — not that they have been refunded.
6. If the policy does not allow a full refund, explain the rule that applies, citing it, and do not prepare one.
5a. When a message asks about two or more orders for refunds, or answers questions you asked about several, call investigate_orders with their numbers: one investigator per order works in parallel. Then tell the customer each order's result in one line: the proposal and its amount, the question, or the rule that applies.
7. When the customer asks where a refund stands (\"where is my refund\", \"status of 4822\"), call refund_status and answer from its result: where it stands, what happens next and when. Never prepare a refund to answer a status question.
8. When the customer asks to talk to a person (a human, an agent, someone from the team), call request_person and tell them a member of the team will reply here.
9. When a tool answers that the customer has not signed in, call request_sign_in: it asks them to sign in and waits. When it answers signed_in, repeat the refused call; when it answers unknown, tell them to sign in and ask again.
10. If the customer asks about something unrelated to refunds or their orders, hand the conversation back to coordinator.";

/// Why the built-in definitions were refused by the runtime.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Workflow(#[from] WorkflowError),
}

/// What the team can reach beyond this group's own records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeamOptions {
    /// The specialist may ask the returns desk (another agent group) about
    /// returned parcels (`check_returned_parcel`).
    pub returns_desk: bool,
    /// The specialist and its investigators may read the carrier's
    /// tracking pages in the browser lane (`check_carrier_tracking`).
    pub carrier: bool,
}

/// The coordinator → refund specialist workflow with the standard tools.
///
/// # Errors
/// A definition breaks the runtime's rules (a test keeps them valid).
pub fn standard_workflow() -> Result<Workflow, DefinitionError> {
    workflow_with(GetOrder::new())
}

/// The standard workflow with what `options` connects.
///
/// # Errors
/// As [`standard_workflow`].
pub fn workflow_for(options: TeamOptions) -> Result<Workflow, DefinitionError> {
    team(GetOrder::new(), options)
}

/// The same workflow with a given order reader (tests use one that fails).
///
/// # Errors
/// As [`standard_workflow`].
pub fn workflow_with(get_order: GetOrder) -> Result<Workflow, DefinitionError> {
    team(get_order, TeamOptions::default())
}

fn team(get_order: GetOrder, options: TeamOptions) -> Result<Workflow, DefinitionError> {
    let investigator = investigator(get_order.clone(), options)?;
    let (coordinator, specialist) = agents(get_order, options)?;
    Ok(Workflow::new(
        vec![coordinator, specialist, investigator],
        COORDINATOR,
    )?)
}

/// The order investigator: the specialist's evidence tools for one order,
/// no handoffs, no person, and no investigators of its own.
fn investigator(get_order: GetOrder, options: TeamOptions) -> Result<Agent, AgentError> {
    let mut investigator = Agent::builder(ORDER_INVESTIGATOR)
        .description(INVESTIGATOR_DESCRIPTION)
        .instructions(INVESTIGATOR_INSTRUCTIONS)
        .tool(Arc::new(get_order))
        .tool(Arc::new(SearchPolicy));
    if options.returns_desk {
        investigator = investigator.tool(Arc::new(CheckReturnedParcel));
    }
    // Investigators of several orders read their carriers' pages too,
    // each queued for the one browser like any other conversation.
    if options.carrier {
        investigator = investigator.tool(Arc::new(CheckCarrierTracking));
    }
    investigator
        .tool(Arc::new(RecordUnknown))
        .tool(Arc::new(PrepareRefund))
        .build()
}

fn agents(get_order: GetOrder, options: TeamOptions) -> Result<(Agent, Agent), AgentError> {
    let coordinator = Agent::builder(COORDINATOR)
        .description(COORDINATOR_DESCRIPTION)
        .instructions(COORDINATOR_INSTRUCTIONS)
        .tool(Arc::new(SearchPolicy))
        .tool(Arc::new(RequestPerson))
        .can_handoff_to(REFUND_SPECIALIST)
        .build()?;
    let mut specialist = Agent::builder(REFUND_SPECIALIST)
        .description(SPECIALIST_DESCRIPTION)
        .instructions(SPECIALIST_INSTRUCTIONS)
        .tool(Arc::new(get_order))
        .tool(Arc::new(SearchPolicy));
    if options.returns_desk {
        specialist = specialist.tool(Arc::new(CheckReturnedParcel));
    }
    if options.carrier {
        specialist = specialist.tool(Arc::new(CheckCarrierTracking));
    }
    let specialist = specialist
        .tool(Arc::new(RecordUnknown))
        .tool(Arc::new(PrepareRefund))
        .tool(Arc::new(InvestigateOrders))
        .tool(Arc::new(RefundStatus))
        .tool(Arc::new(RequestPerson))
        .tool(Arc::new(RequestSignIn))
        .can_handoff_to(COORDINATOR)
        .build()?;
    Ok((coordinator, specialist))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_are_valid_and_each_has_one_accountable_sentence() {
        let (coordinator, specialist) = agents(GetOrder::new(), TeamOptions::default()).unwrap();
        assert!(coordinator.description().ends_with('.'));
        assert_eq!(coordinator.can_handoff_to(), [REFUND_SPECIALIST]);
        assert_eq!(specialist.can_handoff_to(), [COORDINATOR]);
        let tools: Vec<&str> = specialist.tools().iter().map(|t| t.name()).collect();
        assert_eq!(
            tools,
            [
                "get_order",
                "search_policy",
                "record_unknown",
                "prepare_refund",
                "investigate_orders",
                "refund_status",
                "request_person",
                "request_sign_in"
            ]
        );
        assert!(coordinator.tool("get_order").is_none());
        assert!(standard_workflow().is_ok());
    }

    #[test]
    fn an_order_investigator_cannot_start_investigators_so_nested_work_never_waits_on_its_own_lane()
    {
        for options in [
            TeamOptions::default(),
            TeamOptions {
                returns_desk: true,
                ..TeamOptions::default()
            },
        ] {
            let investigator = investigator(GetOrder::new(), options).unwrap();
            assert!(investigator.tool("investigate_orders").is_none());
            assert!(investigator.can_handoff_to().is_empty());
            assert!(investigator.tool("request_person").is_none());
            let workflow = workflow_for(options).unwrap();
            assert!(workflow.agent(ORDER_INVESTIGATOR).is_some());
        }
    }

    #[test]
    fn only_a_team_connected_to_a_returns_desk_can_ask_it() {
        let with_desk = TeamOptions {
            returns_desk: true,
            ..TeamOptions::default()
        };
        let (_, specialist) = agents(GetOrder::new(), with_desk).unwrap();
        assert!(specialist.tool("check_returned_parcel").is_some());
        let (_, specialist) = agents(GetOrder::new(), TeamOptions::default()).unwrap();
        assert!(specialist.tool("check_returned_parcel").is_none());
        assert!(workflow_for(with_desk).is_ok());
    }
}
