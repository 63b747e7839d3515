//! "Where is my refund?": answered from the proposal's real state, with
//! what happens next and when, and never by preparing another proposal,
//! on the offline rules and on a model server alike.

use crate::model_path::{calls, chat_on, text};
use crate::support::Chat;
use engine::proposals::{EvidenceRef, SubmitProposal};
use serde_json::json;
use storage::proposals::StoredProposal;

/// A refund of order `order_id` an outside agent proposed, awaiting approval.
async fn awaiting_approval(chat: &Chat, order_id: &str) -> StoredProposal {
    let agent = chat.actor("agent").await;
    chat.engine
        .proposals
        .submit_proposal(
            &agent,
            SubmitProposal {
                order_id: order_id.into(),
                amount_minor: None,
                currency: None,
                lines: Vec::new(),
                evidence: vec![
                    EvidenceRef {
                        reference: format!("order:{order_id}"),
                        version: None,
                        quote: None,
                    },
                    EvidenceRef {
                        reference: "returns-policy:section-3".into(),
                        version: None,
                        quote: None,
                    },
                ],
                open_questions: Vec::new(),
                recommendation: "Unopened, within 30 days.".into(),
                agent: None,
                conversation_id: None,
                supersedes: None,
            },
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn a_customer_asking_where_their_refund_stands_is_told_its_status_and_when_it_is_decided_and_no_proposal_is_made()
 {
    let chat = Chat::offline().await;
    let live = awaiting_approval(&chat, "4822").await;
    let (customer, id) = chat.open("customer2").await;
    let before = chat.proposals_for("4822").await.len();

    let answer = chat
        .say(&customer, &id, "What is the status of my refund for 4822?")
        .await;

    assert_eq!(answer.proposal_id, None);
    for expected in [
        live.proposal.id.as_str(),
        "waiting for approval by a member of our staff",
        "they decide by",
        "Nothing has been refunded yet",
    ] {
        assert!(
            answer.reply.contains(expected),
            "{expected:?} in {}",
            answer.reply
        );
    }
    assert_eq!(chat.proposals_for("4822").await.len(), before);

    // Without an order number: the customer's latest refunds.
    let again = chat.say(&customer, &id, "where is my refund?").await;
    assert_eq!(again.proposal_id, None);
    assert!(again.reply.contains(&live.proposal.id), "{}", again.reply);
    assert_eq!(chat.proposals_for("4822").await.len(), before);
}

#[tokio::test]
async fn a_status_question_on_an_order_without_a_refund_says_nothing_is_under_way_and_starts_nothing()
 {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;

    let answer = chat.say(&customer, &id, "status of 4821").await;

    assert!(
        answer
            .reply
            .starts_with("There is no refund request for order 4821 yet"),
        "{}",
        answer.reply
    );
    assert!(chat.proposals_for("4821").await.is_empty());
}

#[tokio::test]
async fn a_model_answers_a_status_question_from_the_refund_status_tool_and_no_proposal_is_made() {
    let (chat, _server) = chat_on(vec![
        calls(&[(
            "call_handoff",
            "handoff",
            json!({ "to": "refund_specialist", "reason": "refund status" }),
        )]),
        calls(&[(
            "call_status",
            "refund_status",
            json!({ "order_id": "4822" }),
        )]),
        text("Your refund for order 4822 is waiting for approval."),
    ])
    .await;
    let live = awaiting_approval(&chat, "4822").await;
    let (customer, id) = chat.open("customer2").await;
    let before = chat.proposals_for("4822").await.len();

    let answer = chat
        .say(&customer, &id, "What is the status of my refund for 4822?")
        .await;

    assert_eq!(answer.proposal_id, None);
    let conversation = chat.reload(&customer, &id).await;
    let status = crate::support::result_of(&conversation, "call_status");
    assert_eq!(status["outcome"], "found", "{status}");
    let refunds = status["value"]["refunds"].as_array().unwrap();
    assert_eq!(refunds.len(), 1, "{status}");
    assert_eq!(refunds[0]["proposal_id"], live.proposal.id.as_str());
    assert_eq!(refunds[0]["status"], "awaiting_approval");
    assert!(
        status["value"]["summary"]
            .as_str()
            .unwrap()
            .contains("waiting for approval by a member of our staff"),
        "{status}"
    );
    assert_eq!(chat.proposals_for("4822").await.len(), before);
}

#[tokio::test]
async fn the_status_tool_never_reads_another_customers_order() {
    let (chat, _server) = chat_on(vec![
        calls(&[(
            "call_handoff",
            "handoff",
            json!({ "to": "refund_specialist", "reason": "refund status" }),
        )]),
        calls(&[(
            "call_status",
            "refund_status",
            json!({ "order_id": "4822" }),
        )]),
        text("I can't find that order on your account."),
    ])
    .await;
    awaiting_approval(&chat, "4822").await;
    // Order 4822 is customer2's; this is another customer.
    let (customer, id) = chat.open("customer").await;

    chat.say(&customer, &id, "status of 4822").await;

    let conversation = chat.reload(&customer, &id).await;
    let status = crate::support::result_of(&conversation, "call_status");
    assert_eq!(status["outcome"], "not_found", "{status}");
    assert!(!status.to_string().contains("prp_"), "{status}");
}
