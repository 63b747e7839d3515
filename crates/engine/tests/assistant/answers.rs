//! An answer is a fact with provenance: the customer's reply to the
//! question the agent asked, in the turn right after it, quoted with the
//! message it was given in. Later messages never become more answer, on
//! the offline rules and on a model server alike.

use crate::support::{Chat, call, handoff, say};
use agents::{Role, ScriptedModel};
use domain::proposal::AnsweredIn;
use engine::Actor;
use serde_json::json;
use std::sync::Arc;

/// Where the customer's message `text` stands in the stored conversation,
/// as a proposal must cite it.
pub async fn answered_in(chat: &Chat, actor: &Actor, id: &str, text: &str) -> AnsweredIn {
    let conversation = chat.reload(actor, id).await;
    let messages = conversation.state.messages();
    let index = messages
        .iter()
        .position(|m| m.role == Role::User && m.content == text)
        .unwrap_or_else(|| panic!("no customer message {text:?}"));
    let at = messages[index].at;
    assert!(
        at.is_some(),
        "the customer's message keeps when it was sent"
    );
    AnsweredIn {
        conversation_id: id.to_owned(),
        message_index: index as u64,
        at,
    }
}

#[tokio::test]
async fn thanks_a_request_for_a_person_and_another_order_are_never_recorded_as_the_answer_to_was_the_item_opened()
 {
    // The model asks before it knows the order, and prepares the refund
    // only once the customer names it, three messages after answering.
    let chat = Chat::scripted(Arc::new(ScriptedModel::new(vec![
        handoff("c1", "refund_specialist"),
        call(
            "c2",
            "record_unknown",
            json!({ "question": "Was the item opened?" }),
        ),
        say("Was the item opened?"),
        say("Thanks. Which order is it?"),
        say("You're welcome. Which order number?"),
        say("I can't put you through to a person here, but I can check your order."),
        call("c3", "get_order", json!({ "order_id": "4822" })),
        call(
            "c4",
            "search_policy",
            json!({ "query": "return unopened items within 30 days of delivery" }),
        ),
        call(
            "c5",
            "prepare_refund",
            json!({
                "order_id": "4822",
                "policy_references": ["returns-policy:section-3"],
                "recommendation": "The customer says the tent is still sealed: refund it in full."
            }),
        ),
        say("Proposal prepared; it is waiting for approval."),
    ])))
    .await;
    let (customer, id) = chat.open("customer2").await;
    for message in [
        "I want a refund for my tent",
        "no, still sealed",
        "thanks!",
        "can I talk to a human?",
    ] {
        assert_eq!(chat.say(&customer, &id, message).await.proposal_id, None);
    }
    let last = chat.say(&customer, &id, "check order 4822").await;

    let proposal = chat.proposal(&last.proposal_id.unwrap()).await.proposal;
    let [question] = proposal.open_questions.as_slice() else {
        panic!("one open question: {:?}", proposal.open_questions);
    };
    assert_eq!(question.question, "Was the item opened?");
    assert_eq!(question.answer.as_deref(), Some("no, still sealed"));
    assert_eq!(
        question.answered_in,
        Some(answered_in(&chat, &customer, &id, "no, still sealed").await)
    );
}

#[tokio::test]
async fn a_reply_that_is_not_an_answer_is_asked_again_and_only_the_reply_to_that_is_quoted() {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    chat.say(
        &customer,
        &id,
        "check order 4821 and refund it if it qualifies",
    )
    .await;
    let unclear = chat
        .say(&customer, &id, "hmm, not sure what you mean")
        .await;
    assert_eq!(unclear.proposal_id, None);
    assert!(
        unclear.reply.contains("was the item opened?"),
        "{}",
        unclear.reply
    );

    let answered = chat.say(&customer, &id, "no, still sealed").await;

    let proposal = chat.proposal(&answered.proposal_id.unwrap()).await.proposal;
    let [question] = proposal.open_questions.as_slice() else {
        panic!("one open question: {:?}", proposal.open_questions);
    };
    assert_eq!(question.answer.as_deref(), Some("no, still sealed"));
    assert_eq!(
        question.answered_in,
        Some(answered_in(&chat, &customer, &id, "no, still sealed").await)
    );
}

#[tokio::test]
async fn asking_for_a_person_right_after_was_the_item_opened_never_becomes_its_answer() {
    let chat = Chat::scripted(Arc::new(ScriptedModel::new(vec![
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
        say("Was the item opened?"),
        // "can I talk to a human?"
        call("c5", "request_person", json!({})),
        say("A member of our team will reply here."),
        // After the person hands the conversation back, the model skips
        // asking again.
        call(
            "c6",
            "prepare_refund",
            json!({
                "order_id": "4821",
                "policy_references": ["returns-policy:section-3"],
                "recommendation": "Unopened, within 30 days: refund in full under section 3."
            }),
        ),
        say("Before I go on: was the item opened?"),
    ])))
    .await;
    let (customer, id) = chat.open("customer").await;
    let approver = chat.actor("approver").await;
    chat.say(&customer, &id, "I'd like a refund for order 4821")
        .await;
    chat.say(&customer, &id, "can I talk to a human?").await;
    chat.engine.chat.take_over(&approver, &id).await.unwrap();
    chat.engine.chat.hand_back(&approver, &id).await.unwrap();

    let turn = chat
        .say(&customer, &id, "ok, please just refund order 4821")
        .await;

    assert_eq!(turn.proposal_id, None);
    let conversation = chat.reload(&customer, &id).await;
    let refused = crate::support::result_of(&conversation, "c6");
    assert_eq!(refused["outcome"], "refused", "{refused}");
    assert!(
        refused.to_string().contains("has not answered"),
        "{refused}"
    );
    assert!(chat.proposals_for("4821").await.is_empty());
}
