use super::{add_user, now};
use chrono::Duration;
use domain::Role;
use storage::testing::TestDatabase;
use storage::tokens;

#[tokio::test]
async fn tokens_are_found_by_hash_until_revoked() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let user = add_user(&test.db, "agent", &[Role::Agent]).await;
    let created = now();
    tokens::insert(db, "tok_1", &user, "ci", &"a".repeat(64), created)
        .await
        .unwrap();
    tokens::insert(db, "tok_2", &user, "laptop", &"b".repeat(64), created)
        .await
        .unwrap();

    let found = tokens::find_active_by_hash(db, &"a".repeat(64))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, "tok_1");
    assert_eq!(found.user_id, user);
    assert_eq!(found.label, "ci");
    assert_eq!(found.created_at, created);
    assert_eq!(found.last_used_at, None);
    assert_eq!(found.revoked_at, None);

    let used = created + Duration::minutes(1);
    tokens::touch(db, "tok_1", used).await.unwrap();
    let found = tokens::find_active_by_hash(db, &"a".repeat(64))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.last_used_at, Some(used));

    let revoked = created + Duration::minutes(2);
    assert!(tokens::revoke(db, "tok_1", revoked).await.unwrap());
    assert!(!tokens::revoke(db, "tok_1", revoked).await.unwrap());
    assert!(!tokens::revoke(db, "tok_missing", revoked).await.unwrap());
    assert_eq!(
        tokens::find_active_by_hash(db, &"a".repeat(64))
            .await
            .unwrap(),
        None
    );
    assert!(
        tokens::find_active_by_hash(db, &"b".repeat(64))
            .await
            .unwrap()
            .is_some()
    );

    let listed = tokens::list_for_user(db, &user).await.unwrap();
    assert_eq!(listed.len(), 2);
    let first = listed.iter().find(|t| t.id == "tok_1").unwrap();
    assert_eq!(first.revoked_at, Some(revoked));
}

#[tokio::test]
async fn two_tokens_cannot_share_a_hash() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let user = add_user(&test.db, "agent", &[Role::Agent]).await;
    tokens::insert(db, "tok_1", &user, "one", &"c".repeat(64), now())
        .await
        .unwrap();
    let again = tokens::insert(db, "tok_2", &user, "two", &"c".repeat(64), now()).await;
    assert!(again.unwrap_err().is_conflict());
}
