use super::{add_user, now};
use chrono::Duration;
use domain::{Currency, Money, OrderLine, OrderSnapshot, PastRefund, Role};
use storage::testing::TestDatabase;
use storage::{StorageError, orders};

/// A euro refund booked now.
fn refund(id: &str, amount_minor: i64, channel: &str, reference: &str) -> PastRefund {
    PastRefund {
        id: id.into(),
        amount: Money::new(amount_minor, Currency::EUR),
        channel: channel.into(),
        reference: reference.into(),
        created_at: now(),
    }
}

fn order(id: &str, customer_id: &str, placed_days_ago: i64) -> OrderSnapshot {
    let now = now();
    OrderSnapshot {
        id: id.into(),
        customer_id: customer_id.into(),
        status: "delivered".into(),
        total: Money::new(10_400, Currency::EUR),
        payment_reference: format!("pay_{id}"),
        placed_at: now - Duration::days(placed_days_ago),
        delivered_at: Some(now - Duration::days(placed_days_ago - 3)),
        version: 1,
        lines: vec![
            OrderLine {
                sku: "JKT-TRAIL-M".into(),
                description: "Trail running jacket, size M".into(),
                quantity: 1,
                unit_price_minor: 7900,
            },
            OrderLine {
                sku: "SOCK-3".into(),
                description: "Merino hiking socks".into(),
                quantity: 2,
                unit_price_minor: 1250,
            },
        ],
        refunds: vec![PastRefund {
            id: format!("ref_{id}_1"),
            amount: Money::new(1250, Currency::EUR),
            channel: "support_desk".into(),
            reference: "ticket 1: one sock missing".into(),
            created_at: now - Duration::days(1),
        }],
    }
}

#[tokio::test]
async fn an_order_with_lines_and_refunds_round_trips() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    let stored = order("4821", &customer, 15);

    orders::insert(db, &stored).await.unwrap();

    assert_eq!(orders::get(db, "4821").await.unwrap(), Some(stored));
    assert_eq!(orders::get(db, "9999").await.unwrap(), None);
}

#[tokio::test]
async fn a_customer_sees_only_their_orders_newest_first() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let cora = add_user(&test.db, "cora", &[Role::Customer]).await;
    let cas = add_user(&test.db, "cas", &[Role::Customer]).await;
    orders::insert(db, &order("1", &cora, 30)).await.unwrap();
    orders::insert(db, &order("2", &cora, 5)).await.unwrap();
    orders::insert(db, &order("3", &cas, 10)).await.unwrap();

    let ids: Vec<String> = orders::list_for_customer(db, &cora)
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.id)
        .collect();
    assert_eq!(ids, ["2", "1"]);
    assert!(
        orders::list_for_customer(db, "usr_none")
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn an_order_id_is_unique() {
    let test = TestDatabase::new().await;
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    let tx = test.db.begin_write().await.unwrap();
    orders::insert(&*tx, &order("4821", &customer, 15))
        .await
        .unwrap();
    let again = orders::insert(&*tx, &order("4821", &customer, 15)).await;
    assert!(
        matches!(again, Err(StorageError::Conflict { .. })),
        "{again:?}"
    );
}

#[tokio::test]
async fn recording_a_refund_adds_it_and_bumps_the_version() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    orders::insert(db, &order("4821", &customer, 15))
        .await
        .unwrap();
    let refund = refund("ref_cs_17", 7900, "countersign", "proposal 17");

    let tx = test.db.begin_write().await.unwrap();
    orders::record_refund(&*tx, "4821", &refund).await.unwrap();
    tx.commit().await.unwrap();

    let after = orders::get(db, "4821").await.unwrap().unwrap();
    assert_eq!(after.version, 2);
    assert_eq!(after.refunds.len(), 2);
    assert_eq!(after.refunds[1], refund);
    assert_eq!(after.refunded().unwrap(), Money::new(9150, Currency::EUR));
}

#[tokio::test]
async fn a_refund_for_an_unknown_order_is_not_found_and_leaves_nothing() {
    let test = TestDatabase::new().await;
    let refund = refund("ref_x", 100, "countersign", "none");
    let result = orders::record_refund(test.db.conn(), "4821", &refund).await;
    assert!(
        matches!(result, Err(StorageError::NotFound { entity: "order" })),
        "{result:?}"
    );
}

#[tokio::test]
async fn booking_the_same_refund_twice_books_it_once_and_bumps_the_version_once() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    orders::insert(db, &order("4821", &customer, 15))
        .await
        .unwrap();
    let refund = refund("ref_prp_17", 7900, "countersign", "proposal prp_17");

    let booking = [("4821".to_owned(), refund)];
    let tx = test.db.begin_write().await.unwrap();
    let first = orders::record_refunds_once(&*tx, &booking).await.unwrap();
    let again = orders::record_refunds_once(&*tx, &booking).await.unwrap();
    tx.commit().await.unwrap();

    assert_eq!(first, ["ref_prp_17"], "the first booking books");
    assert!(again.is_empty(), "the second finds it booked");
    let after = orders::get(db, "4821").await.unwrap().unwrap();
    assert_eq!(after.version, 2);
    assert_eq!(after.refunds.len(), 2);
    assert_eq!(after.refunded().unwrap(), Money::new(9150, Currency::EUR));
}

#[tokio::test]
async fn locking_orders_reads_their_current_versions_and_nothing_for_a_missing_order() {
    let test = TestDatabase::new().await;
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    orders::insert(test.db.conn(), &order("4821", &customer, 15))
        .await
        .unwrap();
    let refund = refund("ref_desk_2", 100, "support_desk", "ticket 2");

    let version =
        |versions: std::collections::HashMap<String, i64>, id: &str| versions.get(id).copied();
    let ids = ["4821".to_owned(), "4999".to_owned()];

    let tx = test.db.begin_write().await.unwrap();
    let before = orders::lock_versions(&*tx, &ids).await.unwrap();
    orders::record_refund(&*tx, "4821", &refund).await.unwrap();
    let after = orders::lock_versions(&*tx, &ids).await.unwrap();
    tx.commit().await.unwrap();

    assert_eq!(version(before.clone(), "4821"), Some(1));
    assert_eq!(version(after, "4821"), Some(2));
    assert_eq!(version(before, "4999"), None);
}

#[tokio::test]
async fn several_orders_are_read_and_locked_at_once_each_with_its_own_lines_and_refunds() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    let first = order("4821", &customer, 15);
    let mut second = order("4822", &customer, 9);
    second.lines.truncate(1);
    second.refunds.clear();
    orders::insert(db, &first).await.unwrap();
    orders::insert(db, &second).await.unwrap();
    let ids = ["4822".to_owned(), "4821".to_owned(), "4999".to_owned()];

    let read = orders::get_many(db, &ids).await.unwrap();
    let tx = test.db.begin_write().await.unwrap();
    let versions = orders::lock_versions(&*tx, &ids).await.unwrap();
    tx.commit().await.unwrap();

    assert_eq!(read.len(), 2, "the missing order is absent");
    assert_eq!(read["4821"], first);
    assert_eq!(read["4822"], second);
    assert_eq!(versions.len(), 2);
    assert_eq!((versions["4821"], versions["4822"]), (1, 1));
}

#[tokio::test]
async fn booking_refunds_on_several_orders_bumps_only_the_orders_booked_now() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    for id in ["4821", "4822"] {
        orders::insert(db, &order(id, &customer, 15)).await.unwrap();
    }
    let already = (
        "4821".to_owned(),
        refund("ref_prp_1", 500, "countersign", "prp_1"),
    );
    let tx = test.db.begin_write().await.unwrap();
    orders::record_refunds_once(&*tx, std::slice::from_ref(&already))
        .await
        .unwrap();
    let booked = orders::record_refunds_once(
        &*tx,
        &[
            already,
            (
                "4822".to_owned(),
                refund("ref_prp_2", 700, "countersign", "prp_2"),
            ),
        ],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    assert_eq!(booked, ["ref_prp_2"]);
    let read = orders::get_many(db, &["4821".to_owned(), "4822".to_owned()])
        .await
        .unwrap();
    assert_eq!(read["4821"].version, 2, "booked once, bumped once");
    assert_eq!(read["4822"].version, 2);
    assert_eq!(read["4822"].refunds.len(), 2);
}
