//! The brief's flow, scripted: coordinator → specialist → evidence → an
//! explicit unknown asked of the customer → a proposal awaiting approval.

use crate::support::{Chat, call, handoff, result_of, say};
use agents::ScriptedModel;
use domain::Currency;
use domain::proposal::{Asker, OpenQuestion, ProposalStatus};
use engine::assistant::TurnEnd;
use serde_json::json;
use std::sync::Arc;

fn flagship_script() -> Vec<agents::ModelResponse> {
    vec![
        handoff("c1", "refund_specialist"),
        call("c2", "get_order", json!({ "order_id": "4821" })),
        call(
            "c3",
            "search_policy",
            json!({ "query": "return unopened items within 30 days of delivery" }),
        ),
        call(
            "c4",
            "record_unknown",
            json!({ "question": "Was the item opened?", "order_id": "4821" }),
        ),
        say("Order 4821 was delivered 12 days ago. Was the item opened?"),
        // Turn 2, after the customer's answer.
        call(
            "c5",
            "prepare_refund",
            json!({
                "order_id": "4821",
                "policy_references": ["returns-policy:section-3"],
                "recommendation": "Delivered 12 days ago and unopened: refund in full under section 3."
            }),
        ),
        say("Proposal prepared; it is waiting for approval."),
    ]
}

#[tokio::test]
async fn the_flagship_flow_ends_in_a_proposal_for_7900_eur_citing_the_order_and_section_3() {
    let model = Arc::new(ScriptedModel::new(flagship_script()));
    let chat = Chat::scripted(model.clone()).await;
    let (customer, id) = chat.open("customer").await;

    let first = chat
        .say(
            &customer,
            &id,
            "check order 4821 and refund it if it qualifies",
        )
        .await;
    assert_eq!(first.agent, "refund_specialist");
    assert_eq!(first.end, TurnEnd::Answered);
    assert_eq!(first.proposal_id, None);
    assert_eq!(first.questions, ["Was the item opened?"]);
    let sources: Vec<&str> = first.evidence.iter().map(|p| p.source.as_str()).collect();
    assert!(sources.contains(&"order:4821"), "{sources:?}");
    assert!(sources.contains(&"returns-policy:section-3"), "{sources:?}");

    let second = chat.say(&customer, &id, "no, still sealed").await;
    let proposal_id = second.proposal_id.clone().expect("a proposal");
    let stored = chat.proposal(&proposal_id).await;
    let proposal = &stored.proposal;
    assert_eq!(proposal.amount.amount_minor, 7900);
    assert_eq!(proposal.amount.currency, Currency::EUR);
    assert_eq!(proposal.order_id, "4821");
    assert_eq!(stored.status(), ProposalStatus::AwaitingApproval);
    let cited: Vec<&str> = proposal
        .evidence
        .iter()
        .map(|e| e.reference.as_str())
        .collect();
    assert_eq!(cited, ["order:4821", "returns-policy:section-3"]);
    assert_eq!(proposal.provenance.agent, "refund_specialist");
    assert_eq!(
        proposal.provenance.conversation_id.as_deref(),
        Some(id.as_str())
    );
    assert_eq!(proposal.provenance.requested_by, customer.user_id);
    let evidence: Vec<&str> = second.evidence.iter().map(|p| p.source.as_str()).collect();
    assert_eq!(evidence, cited);

    // The conversation is stored, consistent, linked to the proposal, and
    // its events record every model call, tool call and handoff.
    let stored = chat.reload(&customer, &id).await;
    stored.state.check_consistency().unwrap();
    assert_eq!(stored.turns, 2);
    assert!(!stored.running);
    assert_eq!(stored.active_agent, "refund_specialist");
    assert_eq!(stored.proposals, [("4821".to_owned(), proposal_id)]);
    let kinds = chat.event_kinds(&customer, &id).await;
    for kind in [
        "turn_started",
        "model_call_started",
        "handoff_accepted",
        "tool_call_finished",
        "turn_finished",
    ] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "{kind} missing from {kinds:?}"
        );
    }
    // The specialist's model saw only the specialist's tools.
    let requests = model.requests();
    let tools: Vec<&str> = requests[1].tools.iter().map(|t| t.name.as_str()).collect();
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
            "request_sign_in",
            "handoff"
        ]
    );
}

#[tokio::test]
async fn the_unknown_is_asked_of_the_customer_and_recorded_in_the_proposal_with_their_answer() {
    let chat = Chat::scripted(Arc::new(ScriptedModel::new(flagship_script()))).await;
    let (customer, id) = chat.open("customer").await;
    chat.say(
        &customer,
        &id,
        "check order 4821 and refund it if it qualifies",
    )
    .await;

    let stored = chat.reload(&customer, &id).await;
    let recorded = result_of(&stored, "c4");
    assert_eq!(recorded["outcome"], "found");
    assert_eq!(recorded["value"]["question"], "Was the item opened?");
    assert_eq!(recorded["value"]["ask"], "customer");
    assert!(
        recorded["value"]["instruction"]
            .as_str()
            .unwrap()
            .contains("Ask the customer")
    );

    let second = chat.say(&customer, &id, "no, still sealed").await;
    let proposal = chat.proposal(&second.proposal_id.unwrap()).await.proposal;
    assert_eq!(
        proposal.open_questions,
        [OpenQuestion {
            question: "Was the item opened?".into(),
            ask: Asker::Customer,
            answer: Some("no, still sealed".into()),
            answered_in: Some(
                crate::answers::answered_in(&chat, &customer, &id, "no, still sealed").await
            ),
        }]
    );
}

#[tokio::test]
async fn an_unknown_nobody_has_answered_yet_goes_into_the_proposal_as_open() {
    let chat = Chat::scripted(Arc::new(ScriptedModel::new(vec![
        handoff("c1", "refund_specialist"),
        call("c2", "get_order", json!({ "order_id": "4821" })),
        call("c3", "search_policy", json!({ "query": "unopened items" })),
        call(
            "c4",
            "record_unknown",
            json!({ "question": "Was the parcel opened?", "order_id": "4821", "ask": "approver" }),
        ),
        call(
            "c5",
            "prepare_refund",
            json!({
                "order_id": "4821",
                "policy_references": ["returns-policy:section-3"],
                "recommendation": "Within 30 days; whether it was opened is unknown."
            }),
        ),
        say("Prepared."),
    ])))
    .await;
    let (customer, id) = chat.open("customer").await;
    let turn = chat.say(&customer, &id, "refund order 4821 please").await;
    let proposal = chat.proposal(&turn.proposal_id.unwrap()).await.proposal;
    assert_eq!(proposal.open_questions.len(), 1);
    assert!(proposal.open_questions[0].is_open());
    assert_eq!(proposal.open_questions[0].ask, Asker::Approver);
}
