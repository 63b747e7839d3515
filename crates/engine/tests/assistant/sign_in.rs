//! The seed's opening scene: a visitor chats before signing in; when the
//! agent needs their orders it asks them to sign in and waits inside the
//! turn. Signing in (elsewhere: another tab, another replica) resumes that
//! same turn as the customer they signed in as; Stop during the wait lands
//! at once; a wait nobody answers ends as "not signed in", never as a
//! guess.

use crate::support::{Chat, until};
use chrono::Duration;
use engine::Actor;
use engine::assistant::{ChatError, Priority, TurnControl, TurnEnd, TurnResult};
use engine::clock::ManualClock;
use std::time::Duration as StdDuration;
use tokio::task::JoinHandle;

const ASK: &str = "check order 4821 and refund it if it qualifies";

/// A visitor's conversation with its first message sent; returns once the
/// turn waits for the sign-in.
async fn visitor_waiting(chat: &Chat, visitor: &Actor) -> (String, JoinHandle<TurnResult>) {
    let mut live = chat.engine.live.subscribe();
    let conversation = chat
        .engine
        .chat
        .create_conversation(visitor, None)
        .await
        .unwrap();
    assert_eq!(conversation.customer_id, None);
    let id = conversation.id.clone();
    let engine = chat.engine.clone();
    let sender = visitor.clone();
    let turn_id = id.clone();
    let turn = tokio::spawn(async move {
        engine
            .chat
            .chat_turn(&sender, &turn_id, ASK, Priority::Later, TurnControl::new())
            .await
            .unwrap()
            .answered()
            .expect("the visitor's message got its own turn")
    });
    until(chat, visitor, &id, &mut live, |c, _| c.waiting_for_sign_in).await;
    (id, turn)
}

async fn ended(turn: JoinHandle<TurnResult>) -> TurnResult {
    tokio::time::timeout(StdDuration::from_secs(20), turn)
        .await
        .expect("the turn never ended")
        .unwrap()
}

#[tokio::test]
async fn a_visitor_who_signs_in_while_the_agent_waits_gets_the_same_turn_answered_as_their_account()
{
    let chat = Chat::offline().await;
    let visitor = Actor::guest("gst_visitor_1");
    let (id, turn) = visitor_waiting(&chat, &visitor).await;
    // Nothing of the customer's was read before they signed in.
    let waiting = chat.reload(&visitor, &id).await;
    assert!(waiting.running && waiting.customer_id.is_none());

    let customer = chat.actor("customer").await;
    let bound = chat
        .engine
        .chat
        .visitor_signed_in("gst_visitor_1", &customer)
        .await
        .unwrap();
    assert_eq!(bound, std::slice::from_ref(&id));
    let result = ended(turn).await;

    assert_eq!(result.turn, 1, "the same turn went on");
    assert_eq!(result.end, TurnEnd::Answered);
    assert!(result.reply.contains("opened"), "{}", result.reply);
    let conversation = chat.reload(&customer, &id).await;
    assert_eq!(conversation.owner_id, customer.user_id);
    assert_eq!(
        conversation.customer_id.as_deref(),
        Some(customer.user_id.as_str())
    );
    assert!(!conversation.waiting_for_sign_in);
    // The order was read as the customer, after the refusal and the wait.
    let calls: Vec<String> = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "tool_call_finished")
        .map(|e| {
            format!(
                "{} {}",
                e.event["tool"].as_str().unwrap_or(""),
                e.event["outcome"].as_str().unwrap_or("")
            )
        })
        .collect();
    let position = |wanted: &str| {
        calls
            .iter()
            .position(|c| c == wanted)
            .unwrap_or_else(|| panic!("no {wanted} in {calls:?}"))
    };
    assert!(position("get_order refused") < position("request_sign_in found"));
    assert!(position("request_sign_in found") < position("get_order found"));
    // It is the customer's now: the visitor's id writes to it no more.
    let late = chat
        .engine
        .chat
        .chat_turn(&visitor, &id, "hello", Priority::Later, TurnControl::new())
        .await;
    assert!(matches!(late, Err(ChatError::ReadOnly(_))), "{late:?}");
}

#[tokio::test]
async fn stop_while_the_agent_waits_for_a_sign_in_lands_at_once_and_binds_nothing() {
    let chat = Chat::offline().await;
    let visitor = Actor::guest("gst_visitor_2");
    let (id, turn) = visitor_waiting(&chat, &visitor).await;

    let receipt = chat.engine.chat.stop_turn(&visitor, &id).await.unwrap();
    assert!(receipt.turn_stopping);
    let result = ended(turn).await;
    assert!(
        matches!(result.end, TurnEnd::Stopped { .. }),
        "{:?}",
        result.end
    );
    let conversation = chat.reload(&visitor, &id).await;
    assert!(!conversation.running && !conversation.waiting_for_sign_in);
    assert_eq!(conversation.customer_id, None);
    // Signing in afterwards binds the conversation, but no turn runs on.
    let customer = chat.actor("customer").await;
    chat.engine
        .chat
        .visitor_signed_in("gst_visitor_2", &customer)
        .await
        .unwrap();
    assert!(!chat.reload(&customer, &id).await.running);
}

#[tokio::test]
async fn a_sign_in_that_never_comes_ends_the_wait_as_not_signed_in_after_ten_minutes() {
    let clock = ManualClock::starting_at(engine::now());
    let mut chat = Chat::offline().await;
    chat.engine = chat.engine.clone().with_clock(clock.clock());
    let visitor = Actor::guest("gst_visitor_3");
    let (id, turn) = visitor_waiting(&chat, &visitor).await;

    clock.advance(Duration::minutes(11));
    let result = ended(turn).await;
    assert_eq!(result.end, TurnEnd::Answered);
    assert!(result.reply.contains("sign in"), "{}", result.reply);
    let conversation = chat.reload(&visitor, &id).await;
    assert_eq!(conversation.customer_id, None);
    assert!(!conversation.waiting_for_sign_in);
}

#[tokio::test]
async fn another_visitor_and_staff_signing_in_cannot_take_a_visitors_conversation() {
    let chat = Chat::offline().await;
    let visitor = Actor::guest("gst_visitor_4");
    let opened = chat
        .engine
        .chat
        .create_conversation(&visitor, None)
        .await
        .unwrap();
    let stranger = Actor::guest("gst_someone_else");
    assert!(
        chat.engine
            .chat
            .conversation(&stranger, &opened.id)
            .await
            .is_err()
    );
    assert!(
        chat.engine
            .chat
            .stop_turn(&stranger, &opened.id)
            .await
            .is_err()
    );
    // An approver signing in on the visitor's browser leaves it a visitor's.
    let approver = chat.actor("approver").await;
    let bound = chat
        .engine
        .chat
        .visitor_signed_in("gst_visitor_4", &approver)
        .await
        .unwrap();
    assert!(bound.is_empty());
    assert_eq!(chat.reload(&visitor, &opened.id).await.customer_id, None);
}

#[tokio::test]
async fn a_visitor_gets_policy_answers_without_being_asked_to_sign_in() {
    let chat = Chat::offline().await;
    let visitor = Actor::guest("gst_visitor_5");
    let opened = chat
        .engine
        .chat
        .create_conversation(&visitor, None)
        .await
        .unwrap();
    let result = chat
        .say(
            &visitor,
            &opened.id,
            "what is your returns policy for unopened items?",
        )
        .await;
    assert_eq!(result.end, TurnEnd::Answered);
    assert!(!result.evidence.is_empty(), "the policy is cited");
    let kinds = chat.event_kinds(&visitor, &opened.id).await;
    assert!(!kinds.is_empty());
    let asked = chat
        .engine
        .chat
        .conversation_events(&visitor, &opened.id)
        .await
        .unwrap()
        .into_iter()
        .any(|e| e.event["tool"] == "request_sign_in");
    assert!(!asked, "nobody's records were needed");
    assert_eq!(chat.reload(&visitor, &opened.id).await.customer_id, None);
}
