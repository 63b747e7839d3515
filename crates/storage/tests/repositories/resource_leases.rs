use super::now;
use chrono::Duration;
use storage::browser::leases;
use storage::testing::TestDatabase;

const BROWSER: &str = "browser";

#[tokio::test]
async fn a_held_resource_is_refused_to_another_process_until_its_lease_runs_out() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let now = now();
    let until = now + Duration::seconds(60);
    assert!(
        leases::try_acquire(db, BROWSER, "a:1", "a:", until, now)
            .await
            .unwrap()
    );
    assert!(
        !leases::try_acquire(db, BROWSER, "b:1", "b:", until, now)
            .await
            .unwrap()
    );
    // Still refused a second before the lease ends, taken after it.
    let almost = now + Duration::seconds(59);
    assert!(
        !leases::try_acquire(
            db,
            BROWSER,
            "b:1",
            "b:",
            almost + Duration::seconds(60),
            almost
        )
        .await
        .unwrap()
    );
    let after = now + Duration::seconds(61);
    assert!(
        leases::try_acquire(
            db,
            BROWSER,
            "b:1",
            "b:",
            after + Duration::seconds(60),
            after
        )
        .await
        .unwrap()
    );
    assert_eq!(
        leases::find(db, BROWSER).await.unwrap().unwrap().holder,
        "b:1"
    );
}

#[tokio::test]
async fn a_later_hold_of_the_same_process_takes_over_and_a_late_release_of_the_earlier_one_frees_nothing()
 {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let now = now();
    let until = now + Duration::seconds(60);
    assert!(
        leases::try_acquire(db, BROWSER, "a:1", "a:", until, now)
            .await
            .unwrap()
    );
    assert!(
        leases::try_acquire(db, BROWSER, "a:2", "a:", until, now)
            .await
            .unwrap()
    );
    leases::release(db, BROWSER, "a:1").await.unwrap();
    assert_eq!(
        leases::find(db, BROWSER).await.unwrap().unwrap().holder,
        "a:2"
    );
    assert!(
        !leases::try_acquire(db, BROWSER, "b:1", "b:", until, now)
            .await
            .unwrap()
    );

    leases::release(db, BROWSER, "a:2").await.unwrap();
    assert!(leases::find(db, BROWSER).await.unwrap().is_none());
    assert!(
        leases::try_acquire(db, BROWSER, "b:1", "b:", until, now)
            .await
            .unwrap()
    );
}
