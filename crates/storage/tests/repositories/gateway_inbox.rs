use super::now;
use storage::gateway::inbox::{self, Accepted, NewInboxTask, SUBMITTED};
use storage::ids::new_id;
use storage::testing::TestDatabase;

fn task<'a>(id: &'a str, key: &'a str, nonce: &'a str, digest: &'a str) -> NewInboxTask<'a> {
    NewInboxTask {
        id,
        sender_group: "support",
        task_key: key,
        nonce,
        root_key: key,
        parent_key: None,
        kind: "returns.inspection",
        envelope: r#"{"envelope":{},"signature":{}}"#,
        envelope_digest: digest,
        created_at: now(),
        received_at: now(),
    }
}

#[tokio::test]
async fn an_envelope_delivered_again_after_a_lost_acknowledgement_finds_the_task_it_created() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let first = inbox::accept(db, task("gtk_1", "support:1", "n1", "d1"))
        .await
        .unwrap();
    let Accepted::New(created) = first else {
        panic!("expected a new task, got {first:?}");
    };
    assert_eq!(created.state, SUBMITTED);
    assert_eq!(created.sender_group, "support");

    let again = inbox::accept(db, task("gtk_2", "support:1", "n1", "d1"))
        .await
        .unwrap();
    assert_eq!(again, Accepted::Resent(created.clone()));
    assert_eq!(
        inbox::get(db, "gtk_2").await.unwrap(),
        None,
        "nothing second was written"
    );
    assert_eq!(inbox::get(db, "gtk_1").await.unwrap(), Some(created));
}

#[tokio::test]
async fn a_task_key_reused_for_another_envelope_writes_nothing_and_names_the_task_holding_it() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    inbox::accept(db, task("gtk_1", "support:1", "n1", "d1"))
        .await
        .unwrap();
    let reused = inbox::accept(db, task("gtk_2", "support:1", "n2", "other"))
        .await
        .unwrap();
    assert!(
        matches!(&reused, Accepted::KeyReused(holder) if holder.id == "gtk_1"),
        "{reused:?}"
    );
    assert_eq!(inbox::get(db, "gtk_2").await.unwrap(), None);
}

#[tokio::test]
async fn a_nonce_replayed_under_another_task_key_is_recognised_and_writes_nothing() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    inbox::accept(db, task("gtk_1", "support:1", "n1", "d1"))
        .await
        .unwrap();
    let replayed = inbox::accept(db, task("gtk_2", "support:2", "n1", "d2"))
        .await
        .unwrap();
    assert!(
        matches!(&replayed, Accepted::NonceReused { holder } if holder.task_key == "support:1"),
        "{replayed:?}"
    );
    assert_eq!(inbox::find(db, "support", "support:2").await.unwrap(), None);
}

#[tokio::test]
async fn the_same_key_and_nonce_from_another_group_is_another_task() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    inbox::accept(db, task("gtk_1", "k", "n", "d"))
        .await
        .unwrap();
    let other = NewInboxTask {
        sender_group: "billing",
        ..task("gtk_2", "k", "n", "d")
    };
    assert!(matches!(
        inbox::accept(db, other).await.unwrap(),
        Accepted::New(_)
    ));
}

#[tokio::test]
async fn deliveries_of_one_task_racing_in_separate_transactions_create_it_once() {
    let test = TestDatabase::new().await;
    let mut deliveries = Vec::new();
    for key in 0..16 {
        for _ in 0..3 {
            let db = test.db.clone();
            deliveries.push(tokio::spawn(async move {
                let (id, key) = (new_id("gtk"), format!("support:{key}"));
                let nonce = format!("nonce-{key}");
                let tx = db.begin_write().await.unwrap();
                let accepted = inbox::accept(&*tx, task(&id, &key, &nonce, "same"))
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
                accepted
            }));
        }
    }
    let (mut new, mut resent) = (0, 0);
    for delivery in deliveries {
        match delivery.await.unwrap() {
            Accepted::New(_) => new += 1,
            Accepted::Resent(_) => resent += 1,
            other => panic!("a delivery of the same envelope was answered {other:?}"),
        }
    }
    assert_eq!((new, resent), (16, 32));
}
