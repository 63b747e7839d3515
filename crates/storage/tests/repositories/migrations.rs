use storage::testing::TestDatabase;

#[tokio::test]
async fn migrations_apply_to_an_empty_database_and_running_them_again_changes_nothing() {
    let test = TestDatabase::unmigrated().await;
    test.db.migrate().await.unwrap();
    assert_eq!(storage::users::count(test.db.conn()).await.unwrap(), 0);
    let user = super::add_user(&test.db, "before-rerun", &[domain::Role::Customer]).await;

    test.db.migrate().await.unwrap();

    assert_eq!(storage::users::count(test.db.conn()).await.unwrap(), 1);
    assert!(
        storage::users::find_by_id(test.db.conn(), &user)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_second_connection_to_a_migrated_database_sees_the_schema() {
    let test = TestDatabase::new().await;
    let other = storage::Database::connect(&test.url).await.unwrap();
    other.migrate().await.unwrap();
    other.ping().await.unwrap();
    assert_eq!(storage::users::count(other.conn()).await.unwrap(), 0);
}
