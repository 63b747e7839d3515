//! Who may propose, under which name, how often, and one live proposal per
//! order and request: the rules live in the submit use case, so every door
//! (the API, the assistant's tool) meets them.

use crate::support::{Harness, fast_settings, refund_request};
use chrono::Duration;
use connectors::sandbox::SandboxConfig;
use domain::proposal::ProposalStatus;
use engine::proposals::{Proposer, SubmissionLimit, SubmitError};
use engine::{EngineSettings, StorageError};
use std::sync::Arc;

#[tokio::test]
async fn a_customer_cannot_propose_with_their_own_credential() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let error = h
        .engine
        .proposals
        .submit_proposal(&customer, refund_request("4821"))
        .await
        .unwrap_err();
    assert!(matches!(error, SubmitError::NotAllowed), "{error}");
    let shop = h.actor("shop").await;
    let error = h
        .engine
        .proposals
        .submit_proposal(&shop, refund_request("4821"))
        .await
        .unwrap_err();
    assert!(matches!(error, SubmitError::NotAllowed), "{error}");
}

#[tokio::test]
async fn an_agent_account_proposes_under_its_own_name_and_cannot_pose_as_the_in_house_specialist() {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let mut posing = refund_request("4821");
    posing.agent = Some("refund_specialist".into());
    let error = h
        .engine
        .proposals
        .submit_proposal(&agent, posing)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, SubmitError::AgentNotYours { bound, .. } if bound == "external:agent"),
        "{error}"
    );

    let stored = h
        .engine
        .proposals
        .submit_proposal(&agent, refund_request("4821"))
        .await
        .unwrap();
    let provenance = &stored.proposal.provenance;
    assert_eq!(provenance.agent, "external:agent");
    let submitter = provenance.submitted_by.as_ref().unwrap();
    assert_eq!(
        (submitter.user_id.as_str(), submitter.name.as_str()),
        (agent.user_id.as_str(), "agent")
    );
}

#[tokio::test]
async fn a_credential_over_its_budget_is_refused_until_the_window_frees_a_slot() {
    let settings = EngineSettings {
        submission_limit: SubmissionLimit {
            max_per_window: 2,
            window: Duration::minutes(10),
        },
        ..fast_settings("executor-test")
    };
    let h = Harness::with(SandboxConfig::default(), settings).await;
    let start = engine::now();
    let clock = engine::ManualClock::starting_at(start);
    let engine = h.engine.clone().with_clock(clock.clock());
    let agent = h.actor("agent").await;
    for order in ["4821", "4822"] {
        engine
            .proposals
            .submit_proposal(&agent, refund_request(order))
            .await
            .unwrap();
    }
    clock.set(start + Duration::minutes(4));
    let error = engine
        .proposals
        .submit_proposal(&agent, refund_request("4830"))
        .await
        .unwrap_err();
    match error {
        SubmitError::TooManySubmissions {
            retry_after_secs, ..
        } => assert_eq!(retry_after_secs, 6 * 60),
        other => panic!("{other}"),
    }
    // Another credential is not held to this one's budget.
    let manager = h.actor("manager").await;
    engine
        .proposals
        .submit_proposal(&manager, refund_request("4830"))
        .await
        .unwrap();

    clock.set(start + Duration::minutes(10) + Duration::seconds(1));
    engine
        .proposals
        .submit_proposal(&agent, refund_request("4823"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_second_proposal_for_an_order_with_a_live_one_is_refused_naming_it_unless_it_supersedes_it()
 {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let first = h
        .engine
        .proposals
        .submit_proposal(&agent, refund_request("4822"))
        .await
        .unwrap();
    let error = h
        .engine
        .proposals
        .submit_proposal(&agent, refund_request("4822"))
        .await
        .unwrap_err();
    match &error {
        SubmitError::OverlapsLive { live, .. } => {
            assert_eq!(live.len(), 1);
            assert_eq!(live[0].id, first.proposal.id);
        }
        other => panic!("{other}"),
    }
    assert!(error.to_string().contains(&first.proposal.id), "{error}");
    // The in-house assistant in the customer's chat meets the same rule.
    let customer2 = h.actor("customer2").await;
    let error = h
        .submit_as(&customer2, refund_request("4822"))
        .await
        .unwrap_err();
    assert!(matches!(error, SubmitError::OverlapsLive { .. }), "{error}");

    let mut replacing = refund_request("4822");
    replacing.supersedes = Some(first.proposal.id.clone());
    let second = h
        .engine
        .proposals
        .submit_proposal(&agent, replacing)
        .await
        .unwrap();
    assert_eq!(
        h.status(&first.proposal.id).await,
        ProposalStatus::Superseded
    );
    let events = h
        .engine
        .proposals
        .detail(&first.proposal.id)
        .await
        .unwrap()
        .unwrap();
    assert!(
        events
            .events
            .iter()
            .any(|e| e.to_status.as_deref() == Some("superseded")),
        "the supersession is journaled"
    );
    assert_eq!(
        h.status(&second.proposal.id).await,
        ProposalStatus::AwaitingApproval
    );
}

#[tokio::test]
async fn proposals_for_different_lines_of_one_order_coexist_but_not_for_the_same_line() {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let mut bottle = refund_request("4830");
    bottle.lines = vec!["BOTTLE-1L".into()];
    let bottle = h
        .engine
        .proposals
        .submit_proposal(&agent, bottle)
        .await
        .unwrap();
    assert_eq!(
        bottle.proposal.amount.amount_minor, 2990,
        "the line's price"
    );
    // The same line again is the same request, even for less money.
    let mut bottle_again = refund_request("4830");
    bottle_again.lines = vec!["BOTTLE-1L".into()];
    bottle_again.amount_minor = Some(500);
    let error = h
        .engine
        .proposals
        .submit_proposal(&agent, bottle_again)
        .await
        .unwrap_err();
    match error {
        SubmitError::OverlapsLive { live, .. } => {
            let ids: Vec<&str> = live.iter().map(|p| p.id.as_str()).collect();
            assert_eq!(ids, vec![bottle.proposal.id.as_str()]);
        }
        other => panic!("{other}"),
    }
    // Another line, within what is left: both stay approvable.
    let mut cap = refund_request("4830");
    cap.lines = vec!["CAP-SUN".into()];
    let cap = h
        .engine
        .proposals
        .submit_proposal(&agent, cap)
        .await
        .unwrap();
    assert_eq!(cap.proposal.amount.amount_minor, 1490);
    assert_eq!(
        h.status(&bottle.proposal.id).await,
        ProposalStatus::AwaitingApproval
    );
    assert_eq!(
        h.status(&cap.proposal.id).await,
        ProposalStatus::AwaitingApproval
    );

    let mut unknown = refund_request("4830");
    unknown.lines = vec!["NOT-A-LINE".into()];
    let error = h
        .engine
        .proposals
        .submit_proposal(&agent, unknown)
        .await
        .unwrap_err();
    assert!(matches!(error, SubmitError::Lines(_)), "{error}");
}

#[tokio::test]
async fn a_proposal_cannot_name_another_customers_conversation() {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let customer2 = h.actor("customer2").await;
    let strangers = h
        .engine
        .chat
        .create_conversation(&customer2, None)
        .await
        .unwrap();
    let mut request = refund_request("4821"); // customer's order, not customer2's
    request.conversation_id = Some(strangers.id.clone());
    let error = h
        .engine
        .proposals
        .submit_proposal(&agent, request)
        .await
        .unwrap_err();
    assert!(
        matches!(error, SubmitError::ConversationOfAnotherCustomer { .. }),
        "{error}"
    );
    let mut request = refund_request("4822"); // customer2's own order
    request.conversation_id = Some(strangers.id.clone());
    h.engine
        .proposals
        .submit_proposal(&agent, request)
        .await
        .unwrap();
}

#[tokio::test]
async fn two_agents_racing_for_one_order_leave_one_live_proposal() {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let manager = h.actor("manager").await;
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let race = |actor: engine::Actor| {
        let engine = h.engine.clone();
        let barrier = barrier.clone();
        tokio::spawn(async move {
            barrier.wait().await;
            engine
                .proposals
                .submit(Proposer::Account(&actor), refund_request("4821"))
                .await
        })
    };
    let (a, b) = (race(agent), race(manager));
    let outcomes = [a.await.unwrap(), b.await.unwrap()];
    let stored = outcomes.iter().filter(|o| o.is_ok()).count();
    let refused = outcomes
        .iter()
        .filter(|o| matches!(o, Err(SubmitError::OverlapsLive { .. })))
        .count();
    let conflicts = outcomes
        .iter()
        .filter(|o| matches!(o, Err(SubmitError::Storage(StorageError::Conflict { .. }))))
        .count();
    assert_eq!(stored, 1, "{outcomes:?}");
    assert_eq!(refused + conflicts, 1, "{outcomes:?}");
}
