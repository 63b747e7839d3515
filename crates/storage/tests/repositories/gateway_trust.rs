use super::now;
use chrono::Duration;
use storage::gateway::trust::{self, PairRow, Pinned, PinnedKeyRow};
use storage::testing::TestDatabase;

fn key(version: i32, public_key: &str) -> PinnedKeyRow {
    PinnedKeyRow {
        group_name: "returns".into(),
        key_id: "gateway".into(),
        version,
        public_key: public_key.into(),
        valid_from: now(),
        usable_until: None,
        pinned_by: "usr_admin".into(),
        pinned_at: now(),
    }
}

#[tokio::test]
async fn a_key_version_once_pinned_cannot_be_swapped_for_another_public_key() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    assert_eq!(
        trust::pin_key(db, key(1, "AAAA")).await.unwrap(),
        Pinned::New
    );
    assert_eq!(
        trust::pin_key(db, key(1, "AAAA")).await.unwrap(),
        Pinned::AlreadyPinned
    );
    let swapped = trust::pin_key(db, key(1, "BBBB")).await.unwrap();
    assert!(
        matches!(&swapped, Pinned::Conflict { pinned } if pinned.public_key == "AAAA"),
        "{swapped:?}"
    );
    assert_eq!(
        trust::pin_key(db, key(2, "BBBB")).await.unwrap(),
        Pinned::New
    );
    let pinned = trust::pinned_keys(db).await.unwrap();
    let versions: Vec<(i32, &str)> = pinned
        .iter()
        .map(|k| (k.version, k.public_key.as_str()))
        .collect();
    assert_eq!(versions, [(1, "AAAA"), (2, "BBBB")]);
}

#[tokio::test]
async fn a_retired_key_keeps_verifying_until_the_end_of_its_overlap_and_is_listed_with_it() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    trust::pin_key(db, key(1, "AAAA")).await.unwrap();
    let until = now() + Duration::minutes(10);
    assert!(
        trust::retire_key(db, "returns", "gateway", 1, until)
            .await
            .unwrap()
    );
    assert!(
        !trust::retire_key(db, "returns", "gateway", 9, until)
            .await
            .unwrap()
    );
    assert_eq!(
        trust::pinned_keys(db).await.unwrap()[0].usable_until,
        Some(until)
    );
}

#[tokio::test]
async fn a_pair_is_allowed_once_and_withdrawn_once() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let pair = PairRow {
        from_group: "support".into(),
        to_group: "returns".into(),
        kind: "returns.inspection".into(),
        allowed_by: "usr_admin".into(),
        allowed_at: now(),
    };
    assert!(trust::allow_pair(db, pair.clone()).await.unwrap());
    assert!(!trust::allow_pair(db, pair.clone()).await.unwrap());
    assert_eq!(trust::pairs(db).await.unwrap(), [pair]);
    assert!(
        trust::disallow_pair(db, "support", "returns", "returns.inspection")
            .await
            .unwrap()
    );
    assert!(
        !trust::disallow_pair(db, "support", "returns", "returns.inspection")
            .await
            .unwrap()
    );
    assert!(trust::pairs(db).await.unwrap().is_empty());
}
