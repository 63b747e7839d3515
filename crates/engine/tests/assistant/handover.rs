//! A person can take over a conversation: the customer asks for one, staff
//! take it over from the inbox and reply under their own name, the agents
//! stay silent until the person hands it back, and every step is journaled.

use crate::support::{Chat, call, say};
use agents::ScriptedModel;
use engine::assistant::TurnEnd;
use engine::assistant::handover::{Handover, InboxStatus, REQUESTED_REPLY};
use serde_json::json;
use std::sync::Arc;
use storage::journal::JournalFilter;

/// The kinds and actors of the conversation's journal stream.
async fn journaled(chat: &Chat, id: &str) -> Vec<(String, String)> {
    let (events, _) = storage::journal::list(
        chat.engine.db.conn(),
        &JournalFilter {
            stream: Some(engine::assistant::handover::conversation_stream(id)),
            ..JournalFilter::default()
        },
        0,
        100,
    )
    .await
    .unwrap();
    events.into_iter().map(|e| (e.kind, e.actor)).collect()
}

#[tokio::test]
async fn a_customer_who_asks_for_a_human_gets_a_person_and_the_agents_stay_silent_until_handed_back()
 {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    let approver = chat.actor("approver").await;

    let asked = chat.say(&customer, &id, "can I talk to a human?").await;
    assert_eq!(asked.end, TurnEnd::Answered);
    assert_eq!(asked.reply, REQUESTED_REPLY);
    assert!(matches!(
        chat.engine.chat.handover(&customer, &id).await.unwrap(),
        Handover::Waiting { .. }
    ));
    let inbox = chat.engine.chat.inbox(&approver).await.unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].conversation_id, id);
    assert_eq!(inbox[0].customer_name, "Cora Customer");
    assert_eq!(inbox[0].status, InboxStatus::Waiting);

    // Waiting for a person: a refund request is kept for them, not answered.
    let turns_before = chat.reload(&customer, &id).await.turns;
    let events_before = chat.event_kinds(&customer, &id).await.len();
    let kept = chat
        .say(
            &customer,
            &id,
            "check order 4821 and refund it if it qualifies",
        )
        .await;
    assert_eq!(kept.end, TurnEnd::ForPerson);
    assert_eq!(kept.reply, "");
    assert_eq!(kept.proposal_id, None);

    let taken = chat.engine.chat.take_over(&approver, &id).await.unwrap();
    assert!(
        matches!(&taken, Handover::TakenOver { person_name, .. } if person_name == "Ada Approver"),
        "{taken:?}"
    );
    let inbox = chat.engine.chat.inbox(&approver).await.unwrap();
    assert!(
        matches!(&inbox[0].status, InboxStatus::TakenOver { person_name, .. } if person_name == "Ada Approver")
    );
    assert_eq!(
        inbox[0].last_customer_message.as_deref(),
        Some("check order 4821 and refund it if it qualifies")
    );
    chat.engine
        .chat
        .person_reply(&approver, &id, "Hi Cora, I'm looking at order 4821 myself.")
        .await
        .unwrap();
    let seen = chat.reload(&customer, &id).await;
    let last = seen.state.messages().last().unwrap();
    assert_eq!(last.agent.as_deref(), Some("person:Ada Approver"));
    assert_eq!(last.content, "Hi Cora, I'm looking at order 4821 myself.");

    // Held by a person: the customer's reply goes to them; no agent runs.
    let thanks = chat.say(&customer, &id, "thanks!").await;
    assert_eq!(thanks.end, TurnEnd::ForPerson);
    assert_eq!(thanks.agent, "Ada Approver");
    let silent = chat.reload(&customer, &id).await;
    assert_eq!(silent.turns, turns_before, "no agent turn started");
    assert_eq!(chat.event_kinds(&customer, &id).await.len(), events_before);
    assert!(silent.proposals.is_empty());
    assert_eq!(silent.state.messages().last().unwrap().content, "thanks!");

    assert_eq!(
        chat.engine.chat.hand_back(&approver, &id).await.unwrap(),
        Handover::Agents
    );
    assert!(chat.engine.chat.inbox(&approver).await.unwrap().is_empty());
    let answered = chat
        .say(
            &customer,
            &id,
            "what is your returns policy for unopened items?",
        )
        .await;
    assert_eq!(answered.end, TurnEnd::Answered);
    assert_eq!(answered.agent, "coordinator");
    assert!(
        answered.reply.contains("returns-policy"),
        "{}",
        answered.reply
    );

    assert_eq!(
        journaled(&chat, &id).await,
        [
            ("handover_requested".to_owned(), "user:customer".to_owned()),
            ("handover_taken".to_owned(), "user:approver".to_owned()),
            ("handover_returned".to_owned(), "user:approver".to_owned()),
        ]
    );
    let report = storage::journal::verify_chain(chat.engine.db.conn())
        .await
        .unwrap();
    assert!(
        matches!(report, storage::journal::ChainReport::Intact { .. }),
        "{report:?}"
    );
}

#[tokio::test]
async fn a_model_that_calls_request_person_leaves_the_next_message_to_the_person() {
    // Only one turn's worth of responses: a second model call would fail the turn.
    let model = Arc::new(ScriptedModel::new(vec![
        call("c1", "request_person", json!({})),
        say("A member of our team will reply here."),
    ]));
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;

    let asked = chat.say(&customer, &id, "I'd like a person, please").await;
    assert_eq!(asked.reply, "A member of our team will reply here.");
    assert!(matches!(
        chat.engine.chat.handover(&customer, &id).await.unwrap(),
        Handover::Waiting { .. }
    ));
    let kept = chat.say(&customer, &id, "are you there?").await;
    assert_eq!(kept.end, TurnEnd::ForPerson);
    assert_eq!(
        journaled(&chat, &id).await,
        [("handover_requested".to_owned(), "user:customer".to_owned())]
    );
}

#[tokio::test]
async fn only_the_inbox_roles_may_take_a_conversation_over_and_only_its_holder_replies() {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    chat.engine
        .chat
        .request_person(&customer, &id)
        .await
        .unwrap();
    // The button's request shows the customer the same reply.
    let note = chat.reload(&customer, &id).await;
    assert_eq!(
        note.state.messages().last().unwrap().content,
        REQUESTED_REPLY
    );

    let other_customer = chat.actor("customer2").await;
    let agent = chat.actor("agent").await;
    for outsider in [&customer, &other_customer, &agent] {
        assert!(chat.engine.chat.inbox(outsider).await.is_err());
        assert!(chat.engine.chat.take_over(outsider, &id).await.is_err());
    }
    let approver = chat.actor("approver").await;
    let manager = chat.actor("manager").await;
    chat.engine.chat.take_over(&approver, &id).await.unwrap();
    let refused = chat
        .engine
        .chat
        .person_reply(&manager, &id, "I'll take it from here")
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("Ada Approver"), "{refused}");
    assert!(chat.engine.chat.hand_back(&manager, &id).await.is_err());

    // An admin narrows the inbox to managers: approvers lose it.
    let admin = chat.actor("admin").await;
    chat.engine
        .team_settings
        .set_inbox_roles(
            &engine::settings::ChangedBy::person(&admin),
            &domain::RoleSet::new([domain::Role::Manager]),
        )
        .await
        .unwrap();
    assert!(chat.engine.chat.inbox(&approver).await.is_err());
    assert_eq!(chat.engine.chat.inbox(&manager).await.unwrap().len(), 1);
}

#[tokio::test]
async fn two_people_taking_the_same_chat_over_at_once_leave_it_to_exactly_one_of_them() {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    chat.engine
        .chat
        .request_person(&customer, &id)
        .await
        .unwrap();
    let ada = chat.actor("approver").await;
    let mia = chat.actor("manager").await;
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let attempts = [ada.clone(), mia.clone()].map(|person| {
        let engine = chat.engine.clone();
        let barrier = barrier.clone();
        let id = id.clone();
        tokio::spawn(async move {
            barrier.wait().await;
            engine.chat.take_over(&person, &id).await
        })
    });
    let mut won = 0;
    for attempt in attempts {
        match attempt.await.unwrap() {
            Ok(Handover::TakenOver { .. }) => won += 1,
            Err(engine::assistant::handover::HandoverError::HeldByAnother { .. }) => {}
            Err(other) => panic!("{other}"),
            Ok(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(won, 1);
    let notes = chat
        .reload(&customer, &id)
        .await
        .state
        .messages()
        .iter()
        .filter(|m| {
            m.content
                .ends_with("from our team joined the conversation.")
        })
        .count();
    assert_eq!(notes, 1, "the customer reads that one person joined");
    assert_eq!(journaled(&chat, &id).await.len(), 2);
}
