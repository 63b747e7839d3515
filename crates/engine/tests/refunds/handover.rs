//! A person who took over the conversation a refund was prepared in spoke
//! for the team there, and may not approve that refund.

use crate::support::Harness;
use domain::proposal::ApproveError;
use engine::approvals::DecisionError;
use engine::assistant::TurnControl;

#[tokio::test]
async fn staff_who_took_over_the_chat_cannot_approve_the_refund_prepared_in_it() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let conversation = h
        .engine
        .chat
        .create_conversation(&customer, None)
        .await
        .unwrap();
    let id = conversation.id;
    for text in [
        "check order 4821 and refund it if it qualifies",
        "no, still sealed",
    ] {
        h.engine
            .chat
            .chat_turn(
                &customer,
                &id,
                text,
                engine::assistant::Priority::Later,
                TurnControl::new(),
            )
            .await
            .unwrap()
            .answered()
            .expect("no turn was running");
    }
    let stored = h.engine.chat.conversation(&customer, &id).await.unwrap();
    let (_, proposal_id) = stored.proposals.first().cloned().expect("a proposal");
    let proposal = storage::proposals::get(h.engine.db.conn(), &proposal_id)
        .await
        .unwrap()
        .unwrap();

    let approver = h.actor("approver").await;
    h.engine.chat.take_over(&approver, &id).await.unwrap();
    h.engine
        .chat
        .person_reply(&approver, &id, "I'll make sure this gets approved today.")
        .await
        .unwrap();
    let error = h
        .engine
        .approvals
        .approve(&approver, &proposal_id, &proposal.proposal.action_digest)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            DecisionError::Denied(ApproveError::SpokeInConversation)
        ),
        "{error}"
    );
    // Handing the conversation back does not undo having spoken in it.
    h.engine.chat.hand_back(&approver, &id).await.unwrap();
    assert!(
        h.engine
            .approvals
            .approve(&approver, &proposal_id, &proposal.proposal.action_digest)
            .await
            .is_err()
    );

    // Someone who did not speak there approves it.
    let other = h.actor("approver2").await;
    h.engine
        .approvals
        .approve(&other, &proposal_id, &proposal.proposal.action_digest)
        .await
        .unwrap();
}
