use crate::support::Harness;
use domain::proposal::ProposalStatus;
use sea_orm::ConnectionTrait;
use std::time::Duration;
use storage::journal::ChainReport;

async fn flagship(h: &Harness) -> String {
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    h.engine
        .approvals
        .approve(
            &h.actor("approver").await,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap();
    h.settle(
        &stored.proposal.id,
        &[ProposalStatus::Verified],
        Duration::from_secs(10),
    )
    .await;
    stored.proposal.id
}

async fn execute(h: &Harness, sql: &str) {
    let db = h.engine.db.conn();
    db.execute_unprepared(sql).await.unwrap();
}

#[tokio::test]
async fn the_journal_of_a_refund_is_an_intact_chain() {
    let h = Harness::start().await;
    let (events_before, _) = h.journal_size().await;
    flagship(&h).await;
    let report = storage::journal::verify_chain(h.engine.db.conn())
        .await
        .unwrap();
    assert!(
        matches!(report, ChainReport::Intact { events, .. } if events == events_before + 6),
        "{report:?}"
    );
}

#[tokio::test]
async fn an_edited_journal_row_breaks_the_chain() {
    let h = Harness::start().await;
    flagship(&h).await;
    execute(
        &h,
        "UPDATE journal_events SET actor = 'user:manager' WHERE seq = 2",
    )
    .await;
    let report = storage::journal::verify_chain(h.engine.db.conn())
        .await
        .unwrap();
    assert!(
        matches!(report, ChainReport::Broken { at_seq: 2, .. }),
        "{report:?}"
    );
}

#[tokio::test]
async fn a_deleted_journal_row_breaks_the_chain() {
    let h = Harness::start().await;
    flagship(&h).await;
    execute(&h, "DELETE FROM journal_events WHERE stream_seq = 3").await;
    let report = storage::journal::verify_chain(h.engine.db.conn())
        .await
        .unwrap();
    assert!(matches!(report, ChainReport::Broken { .. }), "{report:?}");
}

#[tokio::test]
async fn deleting_the_newest_events_is_detected_from_the_head() {
    let h = Harness::start().await;
    flagship(&h).await;
    execute(&h, "DELETE FROM journal_events WHERE stream_seq = 6").await;
    let report = storage::journal::verify_chain(h.engine.db.conn())
        .await
        .unwrap();
    assert!(matches!(report, ChainReport::Broken { .. }), "{report:?}");
}

#[tokio::test]
async fn reordering_two_events_breaks_the_chain() {
    let h = Harness::start().await;
    flagship(&h).await;
    execute(
        &h,
        "UPDATE journal_events SET stream_seq = 100 WHERE stream_seq = 2",
    )
    .await;
    execute(
        &h,
        "UPDATE journal_events SET stream_seq = 2 WHERE stream_seq = 3",
    )
    .await;
    execute(
        &h,
        "UPDATE journal_events SET stream_seq = 3 WHERE stream_seq = 100",
    )
    .await;
    let report = storage::journal::verify_chain(h.engine.db.conn())
        .await
        .unwrap();
    assert!(
        matches!(report, ChainReport::Broken { at_seq: 2, .. }),
        "{report:?}"
    );
}

#[tokio::test]
async fn deleting_a_whole_proposal_history_after_a_checkpoint_is_detected() {
    let h = Harness::start().await;
    let id = flagship(&h).await;
    h.engine.execution.checkpoint_journal().await.unwrap();
    execute(
        &h,
        &format!("DELETE FROM journal_events WHERE stream = '{id}'"),
    )
    .await;
    execute(
        &h,
        &format!("DELETE FROM journal_streams WHERE stream = '{id}'"),
    )
    .await;
    let report = storage::journal::verify_chain(h.engine.db.conn())
        .await
        .unwrap();
    assert!(
        matches!(&report, ChainReport::Broken { problem, .. } if problem.contains("checkpoint")),
        "{report:?}"
    );
}

#[tokio::test]
async fn a_checkpoint_covers_only_streams_changed_since_the_last_one() {
    let h = Harness::start().await;
    let (_, streams_before) = h.journal_size().await;
    flagship(&h).await;
    h.engine.execution.checkpoint_journal().await.unwrap();
    assert_eq!(
        h.engine.execution.checkpoint_journal().await.unwrap(),
        0,
        "nothing changed"
    );
    h.propose(&h.actor("customer").await, "4823").await;
    assert_eq!(
        h.engine.execution.checkpoint_journal().await.unwrap(),
        1,
        "only the new proposal's stream"
    );
    let report = storage::journal::verify_chain(h.engine.db.conn())
        .await
        .unwrap();
    assert!(
        matches!(report, ChainReport::Intact { streams, .. } if streams == streams_before + 2),
        "{report:?}"
    );
}
