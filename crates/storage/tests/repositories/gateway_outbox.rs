use super::now;
use storage::gateway::inbox;
use storage::gateway::outbox::{self, Change, NewOutboxTask};
use storage::testing::TestDatabase;

fn task<'a>(id: &'a str, key: &'a str) -> NewOutboxTask<'a> {
    NewOutboxTask {
        id,
        to_group: "returns",
        task_key: key,
        root_key: key,
        parent_key: None,
        kind: "returns.inspection",
        subject: Some("cnv_1"),
        envelope: r#"{"envelope":{},"signature":{}}"#,
        deadline: now() + chrono::Duration::minutes(2),
        created_at: now(),
    }
}

#[tokio::test]
async fn two_workers_recording_answers_to_one_task_record_exactly_one() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    outbox::insert(db, task("gto_1", "task_1")).await.unwrap();
    let seen = outbox::get(db, "gto_1").await.unwrap().unwrap();
    assert_eq!((seen.state.as_str(), seen.state_version), ("queued", 0));

    let delivered = Change {
        state: outbox::DELIVERED,
        remote_task_id: Some("gtk_9".into()),
        ..Change::default()
    };
    assert!(
        outbox::advance(db, "gto_1", 0, delivered.clone(), now())
            .await
            .unwrap()
    );
    // The second worker read the same version: its answer is not recorded.
    assert!(
        !outbox::advance(db, "gto_1", 0, delivered, now())
            .await
            .unwrap()
    );
    let completed = Change {
        state: outbox::COMPLETED,
        result: Some(r#"{"condition":"sealed"}"#.into()),
        ..Change::default()
    };
    assert!(
        outbox::advance(db, "gto_1", 1, completed, now())
            .await
            .unwrap()
    );

    let stored = outbox::get(db, "gto_1").await.unwrap().unwrap();
    assert_eq!(stored.state, "completed");
    assert_eq!(stored.state_version, 2);
    // Fields a step does not give are kept.
    assert_eq!(stored.remote_task_id.as_deref(), Some("gtk_9"));
    assert_eq!(stored.result.as_deref(), Some(r#"{"condition":"sealed"}"#));
    assert!(outbox::is_final(&stored.state));
}

#[tokio::test]
async fn a_task_key_is_sent_once_and_a_subjects_tasks_come_back_in_order() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    outbox::insert(db, task("gto_1", "task_1")).await.unwrap();
    assert!(outbox::insert(db, task("gto_2", "task_1")).await.is_err());
    outbox::insert(db, task("gto_3", "task_3")).await.unwrap();
    let ids: Vec<String> = outbox::for_subject(db, "cnv_1")
        .await
        .unwrap()
        .into_iter()
        .map(|task| task.id)
        .collect();
    assert_eq!(ids, ["gto_1", "gto_3"]);
    assert!(outbox::for_subject(db, "cnv_2").await.unwrap().is_empty());
}

#[tokio::test]
async fn an_inbox_task_moves_on_only_from_the_state_it_is_in() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    inbox::accept(
        db,
        inbox::NewInboxTask {
            id: "gtk_1",
            sender_group: "support",
            task_key: "task_1",
            nonce: "n1",
            root_key: "task_1",
            parent_key: None,
            kind: "returns.inspection",
            envelope: "{}",
            envelope_digest: "d1",
            created_at: now(),
            received_at: now(),
        },
    )
    .await
    .unwrap();
    let nothing = inbox::Outcome::default();
    let taken = inbox::advance(
        db,
        "gtk_1",
        inbox::SUBMITTED,
        inbox::WORKING,
        nothing,
        now(),
    );
    assert!(taken.await.unwrap());
    // A second worker that also saw it submitted does not take it again.
    let again = inbox::advance(
        db,
        "gtk_1",
        inbox::SUBMITTED,
        inbox::WORKING,
        nothing,
        now(),
    );
    assert!(!again.await.unwrap());
    let failed = inbox::Outcome {
        message: Some("no desk"),
        ..nothing
    };
    let ended = inbox::advance(db, "gtk_1", inbox::WORKING, inbox::FAILED, failed, now());
    assert!(ended.await.unwrap());
    let stored = inbox::get(db, "gtk_1").await.unwrap().unwrap();
    assert_eq!(
        (
            stored.state.as_str(),
            stored.status_message.as_deref(),
            stored.state_version
        ),
        ("failed", Some("no desk"), 2)
    );
}
