//! Settings that decide who may move money (approval limits, four-eyes
//! thresholds, accounts and roles, policies) change only through use cases
//! that journal who changed what, when, and the value before and after, in
//! the change's own transaction. SQLite by default, PostgreSQL when
//! `TEST_DATABASE_URL` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::TimeZone;
use domain::{Currency, Money, Role, RoleSet, SettingChange, Timestamp};
use engine::Clock;
use engine::accounts::{Accounts, CreateUser, ThrottlePolicy};
use engine::policies::{PolicyError, PolicyLibrary, Reviewed};
use engine::settings::{ChangedBy, LimitError, TeamSettings};
use storage::journal::{ChainReport, JournalEvent, JournalFilter, SETTINGS_STREAM};
use storage::testing::TestDatabase;

/// The injected clock: every change happens at a known instant.
fn at(minute: u32) -> Timestamp {
    chrono::Utc
        .with_ymd_and_hms(2026, 12, 1, 9, minute, 0)
        .single()
        .unwrap()
}

fn eur(minor: i64) -> Money {
    Money::new(minor, Currency::parse("EUR").unwrap())
}

async fn user(test: &TestDatabase, name: &str, roles: &[Role]) -> String {
    Accounts::new(
        test.db.clone(),
        Clock::fixed(at(0)),
        ThrottlePolicy::default(),
    )
    .create_user(
        &ChangedBy::system("test-setup"),
        CreateUser {
            name,
            display_name: None,
            password: "correct horse battery",
            roles: RoleSet::new(roles.iter().copied()),
        },
    )
    .await
    .unwrap()
    .id
}

/// The settings changes made by `by`, oldest first.
async fn changes_by(test: &TestDatabase, by: &ChangedBy) -> Vec<JournalEvent> {
    let filter = JournalFilter {
        stream: Some(SETTINGS_STREAM.to_owned()),
        actor: Some(by.journal_name().to_owned()),
        ..JournalFilter::default()
    };
    storage::journal::list(test.db.conn(), &filter, 0, 100)
        .await
        .unwrap()
        .0
}

fn change(event: &JournalEvent) -> SettingChange {
    serde_json::from_str(&event.payload).unwrap()
}

fn before_after(event: &JournalEvent) -> (Option<String>, Option<String>) {
    let change = change(event);
    (change.before, change.after)
}

async fn assert_chain_intact(test: &TestDatabase) {
    let report = storage::journal::verify_chain(test.db.conn())
        .await
        .unwrap();
    assert!(matches!(report, ChainReport::Intact { .. }), "{report:?}");
}

#[tokio::test]
async fn raising_an_approvers_limit_is_journaled_with_who_when_and_the_limit_before_and_after() {
    let test = TestDatabase::new().await;
    let approver = user(&test, "ana", &[Role::Approver]).await;
    let admin = ChangedBy::system("admin-console");

    TeamSettings::new(test.db.clone(), Clock::fixed(at(1)))
        .set_approval_limit(&admin, &approver, eur(25_000))
        .await
        .unwrap();
    TeamSettings::new(test.db.clone(), Clock::fixed(at(2)))
        .set_approval_limit(&admin, &approver, eur(500_000))
        .await
        .unwrap();

    let events = changes_by(&test, &admin).await;
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.kind == "approval_limit_set"));
    assert_eq!(change(&events[0]).subject, "user:ana");
    assert_eq!(before_after(&events[0]), (None, Some("250.00 EUR".into())));
    assert_eq!(
        before_after(&events[1]),
        (Some("250.00 EUR".into()), Some("5000.00 EUR".into()))
    );
    assert_eq!((events[0].at, events[1].at), (at(1), at(2)));
    assert_eq!(events[1].actor, "system:admin-console");
    assert_chain_intact(&test).await;
}

#[tokio::test]
async fn a_limit_refused_for_someone_who_is_not_an_approver_leaves_no_trace_in_the_journal() {
    let test = TestDatabase::new().await;
    let customer = user(&test, "cleo", &[Role::Customer]).await;
    let admin = ChangedBy::console();

    let refused = TeamSettings::new(test.db.clone(), Clock::fixed(at(1)))
        .set_approval_limit(&admin, &customer, eur(100))
        .await;

    assert!(matches!(refused, Err(LimitError::NotAnApprover(name)) if name == "cleo"));
    assert!(changes_by(&test, &admin).await.is_empty());
    let stored = storage::limits::approval_limits(test.db.conn(), &customer)
        .await
        .unwrap();
    assert!(stored.is_empty());
}

#[tokio::test]
async fn lowering_the_four_eyes_threshold_is_journaled_with_the_threshold_before_and_after() {
    let test = TestDatabase::new().await;
    let admin = ChangedBy::console();

    TeamSettings::new(test.db.clone(), Clock::fixed(at(1)))
        .set_four_eyes_threshold(&admin, eur(40_000))
        .await
        .unwrap();
    TeamSettings::new(test.db.clone(), Clock::fixed(at(2)))
        .set_four_eyes_threshold(&admin, eur(10_000))
        .await
        .unwrap();

    let events = changes_by(&test, &admin).await;
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.kind == "four_eyes_threshold_set"));
    assert_eq!(change(&events[1]).subject, "currency:EUR");
    assert_eq!(
        before_after(&events[1]),
        (Some("400.00 EUR".into()), Some("100.00 EUR".into()))
    );
    assert_eq!(events[1].at, at(2));
    assert_chain_intact(&test).await;
}

#[tokio::test]
async fn granting_a_role_and_disabling_and_enabling_an_account_are_journaled_with_before_and_after()
{
    let test = TestDatabase::new().await;
    user(&test, "ben", &[Role::Customer]).await;
    let admin = ChangedBy::console();

    Accounts::new(
        test.db.clone(),
        Clock::fixed(at(1)),
        ThrottlePolicy::default(),
    )
    .create_user(
        &admin,
        CreateUser {
            name: "dora",
            display_name: None,
            password: "correct horse battery",
            roles: RoleSet::new([Role::Approver]),
        },
    )
    .await
    .unwrap();
    let approver_and_manager = RoleSet::new([Role::Approver, Role::Manager]);
    Accounts::new(
        test.db.clone(),
        Clock::fixed(at(2)),
        ThrottlePolicy::default(),
    )
    .set_user_roles(&admin, "ben", &approver_and_manager)
    .await
    .unwrap();
    Accounts::new(
        test.db.clone(),
        Clock::fixed(at(3)),
        ThrottlePolicy::default(),
    )
    .disable_user(&admin, "ben")
    .await
    .unwrap();
    Accounts::new(
        test.db.clone(),
        Clock::fixed(at(4)),
        ThrottlePolicy::default(),
    )
    .enable_user(&admin, "ben")
    .await
    .unwrap();

    let events = changes_by(&test, &admin).await;
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "user_created",
            "roles_changed",
            "user_disabled",
            "user_enabled"
        ]
    );
    assert_eq!(change(&events[0]).subject, "user:dora");
    assert_eq!(
        before_after(&events[0]),
        (None, Some("roles approver".into()))
    );
    assert_eq!(change(&events[1]).subject, "user:ben");
    assert_eq!(
        before_after(&events[1]),
        (
            Some(RoleSet::new([Role::Customer]).to_string()),
            Some(approver_and_manager.to_string())
        )
    );
    assert_eq!(
        before_after(&events[2]),
        (Some("enabled".into()), Some("disabled".into()))
    );
    assert_eq!(
        before_after(&events[3]),
        (Some("disabled".into()), Some("enabled".into()))
    );
    let times: Vec<Timestamp> = events.iter().map(|e| e.at).collect();
    assert_eq!(times, [at(1), at(2), at(3), at(4)]);
    assert_chain_intact(&test).await;
}

#[tokio::test]
async fn publishing_a_changed_policy_is_journaled_with_the_version_before_and_after() {
    let test = TestDatabase::new().await;
    let library = PolicyLibrary::load(test.db.clone()).await.unwrap();
    let admin = ChangedBy::console();
    let body = "# Returns\n\n## Section 1\n\nThirty days.\n";
    let changed = "# Returns\n\n## Section 1\n\nFourteen days.\n";

    library
        .import(&admin, "returns", "Returns", body, at(1))
        .await
        .unwrap();
    library
        .import(&admin, "returns", "Returns", changed, at(2))
        .await
        .unwrap();
    // The text in force uploaded again changes nothing.
    library
        .import(&admin, "returns", "Returns", changed, at(3))
        .await
        .unwrap();

    let events = changes_by(&test, &admin).await;
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.kind == "policy_published"));
    let first = change(&events[0]);
    let second = change(&events[1]);
    assert_eq!(first.subject, "policy:returns");
    assert_eq!(first.before, None);
    assert_eq!(second.before, first.after);
    assert_ne!(second.after, second.before);
    assert!(second.after.unwrap().starts_with("Returns (version "));
    assert_chain_intact(&test).await;
}

#[tokio::test]
async fn agents_on_another_replica_search_a_policy_version_published_elsewhere_once_it_checks() {
    let test = TestDatabase::new().await;
    // Two processes on one database: the server, and a replica or the
    // `countersign policy import` command that publishes.
    let server = PolicyLibrary::load(test.db.clone()).await.unwrap();
    let publisher = PolicyLibrary::load(test.db.clone()).await.unwrap();
    let admin = ChangedBy::console();
    let first = "# Returns\n\n## Section 1\n\nThirty days for unopened items.\n";
    let second = "# Returns\n\n## Section 1\n\nFourteen days, even for sealed parcels.\n";
    publisher
        .import(&admin, "returns", "Returns", first, at(1))
        .await
        .unwrap();
    assert!(
        server.reload_if_changed().await.unwrap(),
        "a new document is indexed"
    );
    assert!(!server.search("thirty days", 5).unwrap().is_empty());
    assert!(
        !server.reload_if_changed().await.unwrap(),
        "nothing changed: nothing rebuilt"
    );

    publisher
        .import(&admin, "returns", "Returns", second, at(2))
        .await
        .unwrap();
    assert!(
        server.search("fourteen sealed", 5).unwrap().is_empty(),
        "the server still searches the version it indexed"
    );
    assert!(server.reload_if_changed().await.unwrap());
    let hits = server.search("fourteen sealed", 5).unwrap();
    assert!(!hits.is_empty(), "the version in force is searched");
    assert!(
        server.search("thirty unopened", 5).unwrap().is_empty(),
        "the old version is no longer searched"
    );
}

#[tokio::test]
async fn a_policy_reviewed_against_a_version_someone_else_replaced_meanwhile_is_not_published_over_it()
 {
    let test = TestDatabase::new().await;
    let library = PolicyLibrary::load(test.db.clone()).await.unwrap();
    let admin = ChangedBy::console();
    let first = "# Returns\n\n## Section 1\n\nThirty days for unopened items.\n";
    let theirs = "# Returns\n\n## Section 1\n\nForty-five days for unopened items.\n";
    let mine = "# Returns\n\n## Section 1\n\nThirty days for any item.\n";

    // A new policy is reviewed as new; a second "new" review of the same
    // slug is stale once it exists.
    let review = library.review("returns", "Returns", first).await.unwrap();
    assert_eq!(review.current, None);
    library
        .publish(
            &admin,
            "returns",
            "Returns",
            first,
            &Reviewed::NewPolicy,
            at(1),
        )
        .await
        .unwrap();
    let stale_new = library
        .publish(
            &admin,
            "returns",
            "Returns",
            mine,
            &Reviewed::NewPolicy,
            at(2),
        )
        .await;
    assert!(
        matches!(stale_new, Err(PolicyError::ChangedSinceReview { .. })),
        "{stale_new:?}"
    );

    // I review my change against the first version…
    let review = library.review("returns", "Returns", mine).await.unwrap();
    let (seen, _) = review.current.clone().unwrap();
    assert_eq!((review.added_lines, review.removed_lines), (1, 1));
    // …someone else publishes theirs…
    library
        .publish(
            &admin,
            "returns",
            "Returns",
            theirs,
            &Reviewed::Unseen,
            at(3),
        )
        .await
        .unwrap();
    // …and mine is refused, naming what is in force now, not written over it.
    let refused = library
        .publish(
            &admin,
            "returns",
            "Returns",
            mine,
            &Reviewed::Against(seen),
            at(4),
        )
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("returns changed since you reviewed it: Returns (version "),
        "{refused}"
    );
    let in_force = library.review("returns", "Returns", theirs).await.unwrap();
    assert!(in_force.unchanged, "their version is still in force");

    // Reviewed against what is in force now, it goes live.
    let (now_in_force, _) = in_force.current.unwrap();
    library
        .publish(
            &admin,
            "returns",
            "Returns",
            mine,
            &Reviewed::Against(now_in_force),
            at(5),
        )
        .await
        .unwrap();
    assert!(
        library
            .review("returns", "Returns", mine)
            .await
            .unwrap()
            .unchanged
    );
}
