use super::{add_user, now};
use domain::{Role, RoleSet};
use storage::StorageError;
use storage::testing::TestDatabase;
use storage::users::{self, NewUser};

#[tokio::test]
async fn a_user_and_their_roles_round_trip() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let id = add_user(&test.db, "ada", &[Role::Manager, Role::Approver]).await;
    add_user(&test.db, "bob", &[Role::Customer]).await;

    let by_name = users::find_by_name(db, "ada").await.unwrap().unwrap();
    assert_eq!(by_name.id, id);
    assert_eq!(by_name.name, "ada");
    assert_eq!(by_name.display_name, "ada (display)");
    assert_eq!(by_name.password_hash, "$argon2id$not-a-real-hash");
    assert_eq!(by_name.session_epoch, 0);
    assert!(!by_name.disabled);
    assert_eq!(by_name.roles, RoleSet::new([Role::Approver, Role::Manager]));
    assert_eq!(users::find_by_id(db, &id).await.unwrap(), Some(by_name));

    let all = users::list(db).await.unwrap();
    let names: Vec<&str> = all.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["ada", "bob"]);
    assert_eq!(all[1].roles, RoleSet::new([Role::Customer]));
    assert_eq!(users::count(db).await.unwrap(), 2);
    assert_eq!(users::find_by_name(db, "nobody").await.unwrap(), None);
}

#[tokio::test]
async fn roles_can_be_replaced_and_emptied() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let id = add_user(&test.db, "cy", &[Role::Customer]).await;

    users::set_roles(db, &id, &RoleSet::new([Role::Admin, Role::Agent]))
        .await
        .unwrap();
    let user = users::find_by_id(db, &id).await.unwrap().unwrap();
    assert_eq!(user.roles, RoleSet::new([Role::Admin, Role::Agent]));

    users::set_roles(db, &id, &RoleSet::default())
        .await
        .unwrap();
    let user = users::find_by_id(db, &id).await.unwrap().unwrap();
    assert!(user.roles.is_empty());
}

#[tokio::test]
async fn a_taken_user_name_is_a_conflict() {
    let test = TestDatabase::new().await;
    add_user(&test.db, "dora", &[Role::Customer]).await;

    let tx = test.db.begin_write().await.unwrap();
    let result = users::insert(
        &*tx,
        NewUser {
            id: &storage::ids::new_id("usr"),
            name: "dora",
            display_name: "Another Dora",
            password_hash: "x",
            roles: &RoleSet::new([Role::Approver]),
            now: now(),
        },
    )
    .await;
    drop(tx);

    assert!(
        matches!(result, Err(StorageError::Conflict { .. })),
        "{result:?}"
    );
    assert_eq!(users::count(test.db.conn()).await.unwrap(), 1);
}

#[tokio::test]
async fn disabling_a_user_bumps_their_session_epoch() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let id = add_user(&test.db, "eve", &[Role::Customer]).await;

    assert!(users::disable(db, &id, now()).await.unwrap());

    let user = users::find_by_id(db, &id).await.unwrap().unwrap();
    assert!(user.disabled);
    assert_eq!(user.session_epoch, 1);
    assert!(!users::disable(db, "usr_missing", now()).await.unwrap());
}

#[tokio::test]
async fn a_new_password_hash_bumps_the_session_epoch() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let id = add_user(&test.db, "fay", &[Role::Customer]).await;

    assert!(users::set_password_hash(db, &id, "new-hash").await.unwrap());

    let user = users::find_by_id(db, &id).await.unwrap().unwrap();
    assert_eq!(user.password_hash, "new-hash");
    assert_eq!(user.session_epoch, 1);
    assert!(!user.disabled);
    assert!(
        !users::set_password_hash(db, "usr_missing", "h")
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_lookup_by_an_id_with_a_nul_character_is_refused_as_input_not_a_database_failure() {
    let test = TestDatabase::new().await;
    match users::find_by_id(test.db.conn(), "usr_\0").await {
        // SQLite compares the text as given: no such user.
        Ok(found) => assert!(found.is_none()),
        // PostgreSQL refuses NUL in any text: the caller's input, said so.
        Err(StorageError::OutOfRange(message)) => assert!(message.contains("NUL"), "{message}"),
        Err(other) => panic!("a database failure for bad input: {other:?}"),
    }
}

#[tokio::test]
async fn a_fresh_database_counts_no_users_so_the_first_run_seeds_the_demo() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    // The guest account that holds visitors' conversations is there, but it
    // is nobody: never counted, never listed, and it cannot sign in.
    let guest = users::find_by_id(db, users::GUEST_ACCOUNT_ID)
        .await
        .unwrap()
        .unwrap();
    assert!(guest.disabled && guest.roles.is_empty());
    assert_eq!(users::count(db).await.unwrap(), 0);
    assert!(users::list(db).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_page_of_cards_names_all_its_customers_in_one_read_and_skips_unknown_ids() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let ada = add_user(&test.db, "ada", &[Role::Customer]).await;
    let bob = add_user(&test.db, "bob", &[Role::Customer]).await;
    add_user(&test.db, "cy", &[Role::Customer]).await;

    let names = users::display_names_by_id(db, &[ada.clone(), bob.clone(), "usr_gone".into()])
        .await
        .unwrap();
    assert_eq!(names.len(), 2, "only the two accounts asked for: {names:?}");
    assert_eq!(names[&ada], "ada (display)");
    assert_eq!(names[&bob], "bob (display)");
    assert!(
        users::display_names_by_id(db, &[])
            .await
            .unwrap()
            .is_empty()
    );
}
