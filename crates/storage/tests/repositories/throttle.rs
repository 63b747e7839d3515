use super::now;
use chrono::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use storage::testing::TestDatabase;
use storage::throttle;

#[tokio::test]
async fn failures_are_counted_within_the_window_per_scope() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let now = now();
    for minutes_ago in [20, 10, 1] {
        throttle::record_failure(db, "account:ada", now - Duration::minutes(minutes_ago))
            .await
            .unwrap();
    }
    throttle::record_failure(db, "address:10.0.0.1", now)
        .await
        .unwrap();

    let (count, oldest) = throttle::failures_since(db, "account:ada", now - Duration::minutes(15))
        .await
        .unwrap();
    assert_eq!(count, 2);
    assert_eq!(oldest, Some(now - Duration::minutes(10)));

    let (count, oldest) =
        throttle::failures_since(db, "account:nobody", now - Duration::minutes(15))
            .await
            .unwrap();
    assert_eq!((count, oldest), (0, None));
}

#[tokio::test]
async fn sub_second_timestamps_compare_in_time_order() {
    // SQLite stores timestamps as text; the window comparison must still be
    // chronological when fractional seconds differ in length.
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let base = now();
    let times = [
        base,
        base + Duration::milliseconds(5),
        base + Duration::milliseconds(500),
        base + Duration::microseconds(123_456),
        base + Duration::seconds(1),
    ];
    for at in times {
        throttle::record_failure(db, "account:frac", at)
            .await
            .unwrap();
    }
    let (count, oldest) = throttle::failures_since(db, "account:frac", base)
        .await
        .unwrap();
    assert_eq!(count, 4, "strictly after the whole second");
    assert_eq!(oldest, Some(base + Duration::milliseconds(5)));
    let (count, _) =
        throttle::failures_since(db, "account:frac", base + Duration::milliseconds(200))
            .await
            .unwrap();
    assert_eq!(count, 2);
}

#[tokio::test]
async fn clearing_a_scope_leaves_other_scopes_alone() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let now = now();
    throttle::record_failure(db, "account:ada", now)
        .await
        .unwrap();
    throttle::record_failure(db, "account:bob", now)
        .await
        .unwrap();

    throttle::clear(db, "account:ada").await.unwrap();

    let since = now - Duration::minutes(1);
    assert_eq!(
        throttle::failures_since(db, "account:ada", since)
            .await
            .unwrap()
            .0,
        0
    );
    assert_eq!(
        throttle::failures_since(db, "account:bob", since)
            .await
            .unwrap()
            .0,
        1
    );
}

#[tokio::test]
async fn pruning_deletes_only_rows_older_than_the_cut_off() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let now = now();
    for hours_ago in [48, 25, 1] {
        throttle::record_failure(db, "account:ada", now - Duration::hours(hours_ago))
            .await
            .unwrap();
    }

    let pruned = throttle::prune(db, now - Duration::hours(24))
        .await
        .unwrap();

    assert_eq!(pruned, 2);
    let (count, oldest) = throttle::failures_since(db, "account:ada", now - Duration::days(7))
        .await
        .unwrap();
    assert_eq!((count, oldest), (1, Some(now - Duration::hours(1))));
}

#[tokio::test]
async fn forgetting_a_failure_deletes_only_that_one() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let now = now();
    let first = throttle::record_failure(db, "address:10.0.0.1", now)
        .await
        .unwrap();
    let second = throttle::record_failure(db, "address:10.0.0.1", now)
        .await
        .unwrap();
    assert_ne!(first, second);

    throttle::forget(db, second).await.unwrap();

    let since = now - Duration::minutes(1);
    let (count, _) = throttle::failures_since(db, "address:10.0.0.1", since)
        .await
        .unwrap();
    assert_eq!(count, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_scope_makes_other_writers_wait_for_the_commit() {
    let test = TestDatabase::new().await;
    let first = test.db.begin_write().await.unwrap();
    throttle::lock_scope(&*first, "account:ada").await.unwrap();
    let (count, _) = throttle::failures_since(&*first, "account:ada", now() - Duration::hours(1))
        .await
        .unwrap();
    assert_eq!(count, 0);

    let done = Arc::new(AtomicBool::new(false));
    let second = {
        let (db, done) = (test.db.clone(), done.clone());
        tokio::spawn(async move {
            let tx = db.begin_write().await.unwrap();
            throttle::lock_scope(&*tx, "account:ada").await.unwrap();
            let (seen, _) =
                throttle::failures_since(&*tx, "account:ada", now() - Duration::hours(1))
                    .await
                    .unwrap();
            done.store(true, Ordering::SeqCst);
            seen
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!done.load(Ordering::SeqCst), "the second writer must wait");

    throttle::record_failure(&*first, "account:ada", now())
        .await
        .unwrap();
    first.commit().await.unwrap();

    assert_eq!(second.await.unwrap(), 1, "it sees the first writer's row");
}
