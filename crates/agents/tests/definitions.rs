//! Invalid agent and workflow definitions are refused when they are built.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use agents::{Agent, AgentError, HANDOFF_TOOL, ToolOutcome, Workflow, WorkflowError};
use common::{FakeTool, agent};

#[test]
fn an_agent_with_an_empty_description_is_refused() {
    let err = Agent::builder("coordinator")
        .description("   ")
        .build()
        .unwrap_err();
    assert!(matches!(err, AgentError::InvalidDescription { .. }));
}

#[test]
fn an_agent_with_a_multi_sentence_description_is_refused() {
    let err = Agent::builder("coordinator")
        .description("Answers questions. Also issues refunds.")
        .build()
        .unwrap_err();
    assert!(matches!(err, AgentError::InvalidDescription { .. }));
}

#[test]
fn an_agent_with_one_accountable_sentence_is_accepted() {
    let agent = Agent::builder("refund_specialist")
        .description("Checks refund eligibility and prepares proposals.")
        .build()
        .unwrap();
    assert_eq!(
        agent.description(),
        "Checks refund eligibility and prepares proposals."
    );
}

#[test]
fn an_unknown_handoff_target_is_refused_when_the_workflow_is_built() {
    let err = Workflow::new(
        vec![agent("coordinator", vec![], &["refund_specialsit"])],
        "coordinator",
    )
    .unwrap_err();
    assert_eq!(
        err,
        WorkflowError::UnknownHandoffTarget {
            agent: "coordinator".into(),
            target: "refund_specialsit".into()
        }
    );
}

#[test]
fn duplicate_agent_names_and_a_missing_root_are_refused() {
    let err =
        Workflow::new(vec![agent("a", vec![], &[]), agent("a", vec![], &[])], "a").unwrap_err();
    assert_eq!(err, WorkflowError::DuplicateAgent { name: "a".into() });

    let err = Workflow::new(vec![agent("a", vec![], &[])], "root").unwrap_err();
    assert_eq!(
        err,
        WorkflowError::UnknownRoot {
            root: "root".into()
        }
    );

    assert_eq!(
        Workflow::new(vec![], "a").unwrap_err(),
        WorkflowError::Empty
    );
}

#[test]
fn tool_sets_with_duplicate_or_reserved_names_are_refused() {
    let err = Agent::builder("a")
        .description("Does one thing.")
        .tool(FakeTool::new("get_order", ToolOutcome::not_found("x")))
        .tool(FakeTool::new("get_order", ToolOutcome::not_found("x")))
        .build()
        .unwrap_err();
    assert!(matches!(err, AgentError::DuplicateTool { .. }));

    let err = Agent::builder("a")
        .description("Does one thing.")
        .tool(FakeTool::new(HANDOFF_TOOL, ToolOutcome::not_found("x")))
        .build()
        .unwrap_err();
    assert!(matches!(err, AgentError::ReservedToolName { .. }));
}

#[test]
fn bad_names_and_self_handoffs_are_refused() {
    let err = Agent::builder("refund specialist")
        .description("Does one thing.")
        .build()
        .unwrap_err();
    assert!(matches!(err, AgentError::InvalidName { .. }));

    let err = Agent::builder("a")
        .description("Does one thing.")
        .can_handoff_to("a")
        .build()
        .unwrap_err();
    assert!(matches!(err, AgentError::SelfHandoff { .. }));
}
