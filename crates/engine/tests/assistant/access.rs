//! Who may open, read, write and stop a conversation, and whose orders its
//! tools may read.

use crate::support::Chat;
use domain::proposal::ProposalStatus;
use engine::assistant::{ChatError, OpenConversationError, TurnControl};

#[tokio::test]
async fn only_the_owner_writes_and_other_customers_cannot_even_see_it() {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    chat.say(&customer, &id, "hello").await;

    let other = chat.actor("customer2").await;
    assert!(matches!(
        chat.engine.chat.conversation(&other, &id).await,
        Err(ChatError::NotFound(_))
    ));
    assert!(matches!(
        chat.engine
            .chat
            .chat_turn(
                &other,
                &id,
                "hello",
                engine::assistant::Priority::Later,
                TurnControl::new()
            )
            .await,
        Err(ChatError::NotFound(_))
    ));
    let approver = chat.actor("approver").await;
    assert_eq!(
        chat.engine
            .chat
            .conversation(&approver, &id)
            .await
            .unwrap()
            .turns,
        1
    );
    assert!(matches!(
        chat.engine
            .chat
            .chat_turn(
                &approver,
                &id,
                "hello",
                engine::assistant::Priority::Later,
                TurnControl::new()
            )
            .await,
        Err(ChatError::ReadOnly(_))
    ));
}

#[tokio::test]
async fn messages_are_validated() {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    for bad in ["", "   ", &"x".repeat(4001)] {
        let result = chat
            .engine
            .chat
            .chat_turn(
                &customer,
                &id,
                bad,
                engine::assistant::Priority::Later,
                TurnControl::new(),
            )
            .await;
        assert!(
            matches!(result, Err(ChatError::InvalidMessage(_))),
            "{result:?}"
        );
    }
}

#[tokio::test]
async fn staff_and_agent_accounts_open_conversations_for_a_named_customer_only() {
    let chat = Chat::offline().await;
    let agent = chat.actor("agent").await;
    assert!(matches!(
        chat.engine.chat.create_conversation(&agent, None).await,
        Err(OpenConversationError::CustomerRequired)
    ));
    let approver = chat.actor("approver").await;
    assert!(matches!(
        chat.engine
            .chat
            .create_conversation(&agent, Some(&approver.user_id))
            .await,
        Err(OpenConversationError::UnknownCustomer(_))
    ));
    let customer = chat.actor("customer").await;
    let customer2 = chat.actor("customer2").await;
    assert!(matches!(
        chat.engine
            .chat
            .create_conversation(&customer, Some(&customer2.user_id))
            .await,
        Err(OpenConversationError::NotAllowed)
    ));

    // The agent account works for `customer`: its tools see that customer's
    // orders only, and the proposal is requested by the agent account.
    let opened = chat
        .engine
        .chat
        .create_conversation(&agent, Some(&customer.user_id))
        .await
        .unwrap();
    let refused = chat
        .say(
            &agent,
            &opened.id,
            "check order 4822 and refund it if it qualifies",
        )
        .await;
    assert!(
        refused.reply.contains("can't find an order 4822"),
        "{}",
        refused.reply
    );
    chat.say(
        &agent,
        &opened.id,
        "check order 4821 and refund it if it qualifies",
    )
    .await;
    let done = chat.say(&agent, &opened.id, "no, still sealed").await;
    let stored = chat.proposal(&done.proposal_id.unwrap()).await;
    assert_eq!(stored.status(), ProposalStatus::AwaitingApproval);
    assert_eq!(stored.proposal.provenance.requested_by, agent.user_id);
    assert_eq!(
        stored.proposal.provenance.on_behalf_of.as_deref(),
        Some(customer.user_id.as_str())
    );
    // The customer may read the conversation held about them.
    assert_eq!(
        chat.engine
            .chat
            .conversation(&customer, &opened.id)
            .await
            .unwrap()
            .turns,
        3
    );
}

#[tokio::test]
async fn a_returning_customer_resumes_the_conversation_they_used_last() {
    let chat = Chat::offline().await;
    let customer = chat.actor("customer").await;
    assert_eq!(
        chat.engine
            .chat
            .latest_conversation(&customer)
            .await
            .unwrap(),
        None
    );
    let (_, first) = chat.open("customer").await;
    let (_, second) = chat.open("customer").await;
    let latest = chat
        .engine
        .chat
        .latest_conversation(&customer)
        .await
        .unwrap();
    assert_eq!(latest.map(|c| c.id), Some(second.clone()));
    // Writing to the older one makes it the latest again.
    chat.say(&customer, &first, "hello").await;
    let latest = chat
        .engine
        .chat
        .latest_conversation(&customer)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((latest.id.as_str(), latest.turns), (first.as_str(), 1));
    // Only conversations they opened: a staff member's one about them is not theirs to resume.
    let approver = chat.actor("approver").await;
    chat.engine
        .chat
        .create_conversation(&approver, Some(&customer.user_id))
        .await
        .unwrap();
    assert_eq!(
        chat.engine
            .chat
            .latest_conversation(&customer)
            .await
            .unwrap()
            .map(|c| c.id),
        Some(first)
    );
    assert_eq!(
        chat.engine
            .chat
            .latest_conversation(&approver)
            .await
            .unwrap()
            .and_then(|c| c.customer_id),
        Some(customer.user_id)
    );
}
