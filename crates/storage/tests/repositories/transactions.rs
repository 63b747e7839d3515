use super::{add_user, now};
use chrono::Duration;
use domain::{Currency, Money, OrderSnapshot, PastRefund, Role};
use std::sync::Arc;
use storage::testing::TestDatabase;
use storage::{Database, throttle, users};
use tokio::sync::Barrier;

#[tokio::test]
async fn a_write_transaction_dropped_without_commit_rolls_back() {
    let test = TestDatabase::new().await;
    let existing = add_user(&test.db, "kept", &[Role::Customer]).await;

    let tx = test.db.begin_write().await.unwrap();
    throttle::record_failure(&*tx, "account:kept", now())
        .await
        .unwrap();
    users::disable(&*tx, &existing, now()).await.unwrap();
    drop(tx);

    let db = test.db.conn();
    let user = users::find_by_id(db, &existing).await.unwrap().unwrap();
    assert!(!user.disabled);
    assert_eq!(user.session_epoch, 0);
    let since = now() - Duration::minutes(1);
    assert_eq!(
        throttle::failures_since(db, "account:kept", since)
            .await
            .unwrap()
            .0,
        0
    );

    // The write lock was released: the next writer proceeds and commits.
    let tx = test.db.begin_write().await.unwrap();
    throttle::record_failure(&*tx, "account:kept", now())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        throttle::failures_since(db, "account:kept", since)
            .await
            .unwrap()
            .0,
        1
    );
}

#[tokio::test]
async fn a_failed_statement_inside_a_dropped_transaction_leaves_nothing_behind() {
    let test = TestDatabase::new().await;
    add_user(&test.db, "taken", &[Role::Customer]).await;

    {
        let tx = test.db.begin_write().await.unwrap();
        throttle::record_failure(&*tx, "account:taken", now())
            .await
            .unwrap();
        let clash = users::insert(
            &*tx,
            users::NewUser {
                id: "usr_clash",
                name: "taken",
                display_name: "x",
                password_hash: "x",
                roles: &domain::RoleSet::new([Role::Customer]),
                now: now(),
            },
        )
        .await;
        assert!(clash.unwrap_err().is_conflict());
    }

    let (count, _) = throttle::failures_since(
        test.db.conn(),
        "account:taken",
        now() - Duration::minutes(1),
    )
    .await
    .unwrap();
    assert_eq!(count, 0);
    assert_eq!(users::count(test.db.conn()).await.unwrap(), 1);
}

/// Each task reads inside its write transaction before it writes: with
/// deferred SQLite transactions that read-then-write is what fails with
/// SQLITE_BUSY on the lock upgrade.
async fn read_then_write(db: Database, barrier: Arc<Barrier>, scope: &'static str) -> u64 {
    barrier.wait().await;
    let tx = db.begin_write().await.unwrap();
    let (seen, _) = throttle::failures_since(&*tx, scope, now() - Duration::hours(1))
        .await
        .unwrap();
    tokio::task::yield_now().await;
    throttle::record_failure(&*tx, scope, now()).await.unwrap();
    tx.commit().await.unwrap();
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_write_transactions_lose_no_updates() {
    const TASKS: usize = 24;
    let test = TestDatabase::new().await;
    let barrier = Arc::new(Barrier::new(TASKS));
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            tokio::spawn(read_then_write(
                test.db.clone(),
                barrier.clone(),
                "account:busy",
            ))
        })
        .collect();
    let mut seen = Vec::new();
    for task in tasks {
        seen.push(task.await.unwrap());
    }

    let (count, _) =
        throttle::failures_since(test.db.conn(), "account:busy", now() - Duration::hours(1))
            .await
            .unwrap();
    assert_eq!(count, TASKS as u64);
    if test.db.backend() == storage::Backend::Sqlite {
        // One writer at a time: every transaction saw all earlier commits.
        seen.sort_unstable();
        assert_eq!(seen, (0..TASKS as u64).collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_on_separate_connections_to_one_database_all_commit() {
    // Two handles behave like two server processes: they share no in-process
    // lock, only the database's own.
    const PER_HANDLE: usize = 10;
    let test = TestDatabase::new().await;
    let second = Database::connect(&test.url).await.unwrap();
    let barrier = Arc::new(Barrier::new(PER_HANDLE * 2));
    let mut tasks = Vec::new();
    for db in [test.db.clone(), second] {
        for _ in 0..PER_HANDLE {
            tasks.push(tokio::spawn(read_then_write(
                db.clone(),
                barrier.clone(),
                "account:shared",
            )));
        }
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (count, _) =
        throttle::failures_since(test.db.conn(), "account:shared", now() - Duration::hours(1))
            .await
            .unwrap();
    assert_eq!(count, (PER_HANDLE * 2) as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_refunds_each_bump_the_order_version_once() {
    const TASKS: usize = 12;
    let test = TestDatabase::new().await;
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    let placed = now() - Duration::days(3);
    storage::orders::insert(
        test.db.conn(),
        &OrderSnapshot {
            id: "4821".into(),
            customer_id: customer,
            status: "delivered".into(),
            total: Money::new(7900, Currency::EUR),
            payment_reference: "pay_4821".into(),
            placed_at: placed,
            delivered_at: None,
            version: 1,
            lines: vec![],
            refunds: vec![],
        },
    )
    .await
    .unwrap();
    let barrier = Arc::new(Barrier::new(TASKS));
    let tasks: Vec<_> = (0..TASKS)
        .map(|i| {
            let (db, barrier) = (test.db.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let tx = db.begin_write().await.unwrap();
                let before = storage::orders::get(&*tx, "4821").await.unwrap().unwrap();
                let refund = PastRefund {
                    id: format!("ref_{i}"),
                    amount: Money::new(1, Currency::EUR),
                    channel: "countersign".into(),
                    reference: format!("task {i} saw version {}", before.version),
                    created_at: now(),
                };
                storage::orders::record_refund(&*tx, "4821", &refund)
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }

    let order = storage::orders::get(test.db.conn(), "4821")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(order.version, 1 + TASKS as i64);
    assert_eq!(order.refunds.len(), TASKS);
}

#[tokio::test]
async fn a_write_that_times_out_waiting_for_another_writer_is_unavailable_not_a_failure() {
    let test = TestDatabase::new().await;
    let user = add_user(&test.db, "contended", &[Role::Customer]).await;
    // Another process holds the lock this write needs, and this writer will
    // not wait for it: SQLite answers "busy", PostgreSQL "lock not available".
    let error = match test.db.backend() {
        storage::Backend::Sqlite => {
            let path = test
                .url
                .trim_start_matches("sqlite://")
                .split('?')
                .next()
                .unwrap();
            let options = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(path)
                .busy_timeout(std::time::Duration::ZERO);
            let holder = sqlx::SqlitePool::connect_with(options.clone())
                .await
                .unwrap();
            let mut holding = holder.begin().await.unwrap();
            sqlx::query("DELETE FROM write_gate WHERE 0")
                .execute(&mut *holding)
                .await
                .unwrap();
            let impatient = sea_orm::SqlxSqliteConnector::from_sqlx_sqlite_pool(
                sqlx::SqlitePool::connect_with(options).await.unwrap(),
            );
            let error = users::disable(&impatient, &user, now()).await.unwrap_err();
            holding.rollback().await.unwrap();
            error
        }
        storage::Backend::Postgres => {
            let options: sqlx::postgres::PgConnectOptions = test.url.parse().unwrap();
            let holder = sqlx::PgPool::connect_with(options.clone()).await.unwrap();
            let mut holding = holder.begin().await.unwrap();
            sqlx::query("SELECT id FROM users WHERE id = $1 FOR UPDATE")
                .bind(&user)
                .execute(&mut *holding)
                .await
                .unwrap();
            let impatient = sea_orm::SqlxPostgresConnector::from_sqlx_postgres_pool(
                sqlx::PgPool::connect_with(options.options([("lock_timeout", "50ms")]))
                    .await
                    .unwrap(),
            );
            let error = users::disable(&impatient, &user, now()).await.unwrap_err();
            holding.rollback().await.unwrap();
            error
        }
    };
    assert!(
        matches!(error, storage::StorageError::Unavailable(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn write_stats_count_committed_transactions_and_the_time_spent_in_them() {
    let test = TestDatabase::new().await;
    let before = test.db.write_stats();

    let tx = test.db.begin_write().await.unwrap();
    throttle::record_failure(&*tx, "account:a", now())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let rolled_back = test.db.begin_write().await.unwrap();
    rolled_back.rollback().await.unwrap();

    let after = test.db.write_stats();
    assert_eq!(after.committed, before.committed + 1);
    assert!(after.held > before.held);
    assert!(after.committing > before.committing);
    assert!(after.held - before.held >= after.committing - before.committing);
}

/// Who got SQLite's writer, in order.
type Turns = Arc<std::sync::Mutex<Vec<&'static str>>>;

async fn write_turn(db: Database, turns: Turns, name: &'static str) {
    let tx = db.begin_write().await.unwrap();
    turns.lock().unwrap().push(name);
    tx.commit().await.unwrap();
}

// One thread: a spawned writer runs only when the test yields, so each
// stands in its queue before the next arrives (no sleeping).
#[tokio::test(flavor = "current_thread")]
async fn an_approval_waits_for_at_most_one_background_write_not_for_a_backlog_of_them() {
    let test = TestDatabase::new_sqlite().await;
    let turns: Turns = Arc::default();
    // Someone holds the writer; then three background writes queue, then
    // an approval.
    let in_progress = test.db.begin_write().await.unwrap();
    let mut writers = Vec::new();
    for name in ["background 1", "background 2", "background 3"] {
        writers.push(tokio::spawn(storage::write_gate::in_background(
            write_turn(test.db.clone(), turns.clone(), name),
        )));
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
    }
    writers.push(tokio::spawn(write_turn(
        test.db.clone(),
        turns.clone(),
        "approval",
    )));
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    assert!(turns.lock().unwrap().is_empty(), "the writer is still held");
    in_progress.commit().await.unwrap();
    for writer in writers {
        writer.await.unwrap();
    }
    let turns = turns.lock().unwrap().clone();
    assert_eq!(
        turns.iter().position(|name| *name == "approval"),
        Some(1),
        "the approval went right after the one background writer already first in line: {turns:?}"
    );
    assert_eq!(turns.len(), 4, "every background write still happened");
}
