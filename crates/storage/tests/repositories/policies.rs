use super::now;
use chrono::Duration;
use storage::policies::{self, ImportOutcome};
use storage::testing::TestDatabase;

#[tokio::test]
async fn importing_creates_then_is_unchanged_then_adds_a_version() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let now = now();

    let first = policies::import(
        db,
        "returns",
        "Returns",
        "## 3. Unopened items\n30 days",
        now,
    )
    .await
    .unwrap();
    let ImportOutcome::Created { version: v1 } = first.clone() else {
        panic!("expected Created, got {first:?}");
    };
    assert_eq!(
        policies::import(
            db,
            "returns",
            "Returns",
            "## 3. Unopened items\n30 days",
            now
        )
        .await
        .unwrap(),
        ImportOutcome::Unchanged {
            version: v1.clone()
        }
    );
    let later = now + Duration::days(1);
    let second = policies::import(
        db,
        "returns",
        "Returns",
        "## 3. Unopened items\n14 days",
        later,
    )
    .await
    .unwrap();
    let ImportOutcome::NewVersion { version: v2 } = second.clone() else {
        panic!("expected NewVersion, got {second:?}");
    };
    assert_ne!(v1, v2);

    let current = policies::current_versions(db).await.unwrap();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].0, "returns");
    assert_eq!(current[0].1.content_hash, v2);
    assert_eq!(current[0].1.body, "## 3. Unopened items\n14 days");

    // Evidence that cited the first version can still read it.
    let old = policies::version(db, "returns", &v1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(old.body, "## 3. Unopened items\n30 days");
    assert_eq!(old.created_at, now);
    assert_eq!(
        policies::version(db, "returns", "0000").await.unwrap(),
        None
    );
    assert_eq!(policies::version(db, "shipping", &v1).await.unwrap(), None);
}

#[tokio::test]
async fn a_title_change_is_a_new_version_and_reverting_reuses_the_old_one() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let now = now();
    let ImportOutcome::Created { version: v1 } =
        policies::import(db, "ship", "Shipping", "body", now)
            .await
            .unwrap()
    else {
        panic!("expected Created");
    };
    let renamed = policies::import(db, "ship", "Shipping policy", "body", now)
        .await
        .unwrap();
    assert!(
        matches!(renamed, ImportOutcome::NewVersion { .. }),
        "{renamed:?}"
    );

    let reverted = policies::import(db, "ship", "Shipping", "body", now)
        .await
        .unwrap();

    assert_eq!(
        reverted,
        ImportOutcome::NewVersion {
            version: v1.clone()
        }
    );
    let current = policies::current_versions(db).await.unwrap();
    assert_eq!(current[0].1.content_hash, v1);
    assert_eq!(current[0].1.title, "Shipping");
    let in_force = policies::current_version(db, &current[0].0)
        .await
        .unwrap()
        .expect("the reverted document has a version in force");
    assert_eq!(in_force.content_hash, v1);
    assert!(
        policies::current_version(db, "no-such-policy")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn current_versions_lists_every_document_by_slug() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    for slug in ["shipping-policy", "returns-policy"] {
        policies::import(db, slug, slug, "text", now())
            .await
            .unwrap();
    }
    let slugs: Vec<String> = policies::current_versions(db)
        .await
        .unwrap()
        .into_iter()
        .map(|(slug, _)| slug)
        .collect();
    assert_eq!(slugs, ["returns-policy", "shipping-policy"]);
}
