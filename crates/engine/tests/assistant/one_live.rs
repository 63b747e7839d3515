//! One live proposal per order and request, in the chat: when a proposal
//! for the order is already in flight, the specialist answers with its
//! status instead of preparing a duplicate that approvers would see twice.

use crate::support::Chat;
use domain::proposal::ProposalStatus;
use engine::proposals::{EvidenceRef, SubmitProposal};

#[tokio::test]
async fn a_customer_asking_again_for_a_refund_already_in_flight_is_told_its_status_and_no_second_proposal_is_made()
 {
    let chat = Chat::offline().await;
    // An outside agent already proposed the refund of order 4821.
    let agent = chat.actor("agent").await;
    let live = chat
        .engine
        .proposals
        .submit_proposal(
            &agent,
            SubmitProposal {
                order_id: "4821".into(),
                amount_minor: None,
                currency: None,
                lines: Vec::new(),
                evidence: vec![
                    EvidenceRef {
                        reference: "order:4821".into(),
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
        .unwrap();

    let (customer, id) = chat.open("customer").await;
    chat.say(&customer, &id, "please refund order 4821").await;
    let answer = chat.say(&customer, &id, "no, still sealed").await;

    assert_eq!(answer.proposal_id, None);
    assert!(answer.reply.contains(&live.proposal.id), "{}", answer.reply);
    assert!(
        answer.reply.contains("waiting for approval"),
        "{}",
        answer.reply
    );
    let proposals = chat.proposals_for("4821").await;
    assert_eq!(proposals.len(), 1, "no duplicate was stored");
    assert_eq!(proposals[0].status(), ProposalStatus::AwaitingApproval);
}
