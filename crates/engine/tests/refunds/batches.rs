//! Concurrent approvals and provider answers are combined into batches: one
//! read and one write transaction for many requests, each request still
//! answered on its own.

use crate::support::Harness;
use domain::proposal::ProposalStatus;
use engine::approvals::DecisionError;
use std::sync::Arc;
use std::time::Duration;
use storage::journal::ChainReport;
use tokio::sync::Barrier;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_arriving_together_share_transactions_yet_each_gets_its_own_answer() {
    let h = Harness::start().await;
    let (events_before, _) = h.journal_size().await;
    let customer = h.actor("customer3").await;
    let approver = h.actor("approver").await;
    let orders = h.more_orders(&customer, 7000, 16, "pay_batch_").await;
    let mut proposals = Vec::new();
    for order in &orders {
        proposals.push(h.propose(&customer, order).await.proposal);
    }
    // Every proposal approved once as shown, and the first four also with a
    // digest nobody was shown, all released at the same moment.
    let mut requests: Vec<(String, String, bool)> = proposals
        .iter()
        .map(|p| (p.id.clone(), p.action_digest.clone(), true))
        .collect();
    requests.extend(
        proposals
            .iter()
            .take(4)
            .map(|p| (p.id.clone(), "0".repeat(64), false)),
    );
    let writes_before = h.engine.db.write_stats().committed;
    let barrier = Arc::new(Barrier::new(requests.len()));
    let mut tasks = Vec::new();
    for (id, digest, honest) in requests {
        let (engine, approver, barrier) = (h.engine.clone(), approver.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            (
                honest,
                engine.approvals.approve(&approver, &id, &digest).await,
            )
        }));
    }
    for task in tasks {
        match task.await.unwrap() {
            (true, result) => {
                let stored = result.unwrap();
                assert_eq!(stored.status(), ProposalStatus::Executing);
            }
            (false, result) => assert!(
                matches!(result, Err(DecisionError::Denied(_))),
                "a digest nobody was shown is refused on its own: {result:?}"
            ),
        }
    }
    for proposal in &proposals {
        h.settle(
            &proposal.id,
            &[ProposalStatus::Verified],
            Duration::from_secs(10),
        )
        .await;
    }

    let ledger = h.ledger();
    for proposal in &proposals {
        assert_eq!(ledger.count_for(&proposal.id), 1, "{}", proposal.id);
    }
    assert!(ledger.duplicated_keys.is_empty());
    // One by one, 16 approvals and 16 answers would take 32 write
    // transactions; the reconciler's passes here write nothing.
    let writes = h.engine.db.write_stats().committed - writes_before;
    assert!(writes < 32, "{writes} write transactions for 16 refunds");
    // Written many streams at a time, every proposal's chain is whole:
    // proposed, approved, claimed, sent, succeeded, verified.
    let report = storage::journal::verify_chain(h.engine.db.conn())
        .await
        .unwrap();
    assert!(
        matches!(report, ChainReport::Intact { events, .. } if events == events_before + 96),
        "{report:?}"
    );
}
