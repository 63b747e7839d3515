//! Orders as a shop feeds them: source stamp, shipping, discount, delivery
//! events; replacements guarded by Countersign's version; order streams in
//! the journal.

use super::{add_user, now};
use chrono::Duration;
use domain::{Currency, DeliveryEvent, DeliveryKind, Money, OrderLine, OrderSnapshot, Role};
use storage::journal::{ChainReport, NewEvent};
use storage::shop_orders::{self, SourceStamp, SourcedOrder};
use storage::testing::TestDatabase;
use storage::{StorageError, orders};

fn fed(id: &str, customer_id: &str, version: i64, source_version: i64) -> SourcedOrder {
    let placed_at = now() - Duration::days(10);
    let delivered_at = placed_at + Duration::days(3);
    SourcedOrder {
        order: OrderSnapshot {
            id: id.into(),
            customer_id: customer_id.into(),
            status: "delivered".into(),
            total: Money::new(8390, Currency::EUR),
            payment_reference: format!("pi_{id}"),
            placed_at,
            delivered_at: Some(delivered_at),
            version,
            lines: vec![OrderLine {
                sku: "JKT".into(),
                description: "Jacket".into(),
                quantity: 1,
                unit_price_minor: 7900,
            }],
            refunds: vec![],
        },
        source: Some(SourceStamp {
            version: source_version,
            hash: format!("hash-{source_version}"),
        }),
        shipping_minor: 490,
        discount_minor: 0,
        events: vec![
            DeliveryEvent {
                kind: DeliveryKind::Shipped,
                at: placed_at + Duration::days(1),
            },
            DeliveryEvent {
                kind: DeliveryKind::Delivered,
                at: delivered_at,
            },
        ],
    }
}

#[tokio::test]
async fn a_shop_order_round_trips_with_its_source_stamp_shipping_and_events() {
    let test = TestDatabase::new().await;
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    let order = fed("9001", &customer, 1, 3);

    shop_orders::create(test.db.conn(), &order, now())
        .await
        .unwrap();

    let read = shop_orders::get(test.db.conn(), "9001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, order);
    // Agents and approvals read the same order through `orders`.
    let snapshot = orders::get(test.db.conn(), "9001").await.unwrap().unwrap();
    assert_eq!(snapshot, order.order);
    assert!(
        shop_orders::get(test.db.conn(), "9999")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn replacing_an_order_keeps_its_refunds_and_refuses_a_writer_that_read_an_older_version() {
    let test = TestDatabase::new().await;
    let customer = add_user(&test.db, "cora", &[Role::Customer]).await;
    let db = test.db.conn();
    shop_orders::create(db, &fed("9001", &customer, 1, 1), now())
        .await
        .unwrap();
    let refund = domain::PastRefund {
        id: "re_desk_1".into(),
        amount: Money::new(1000, Currency::EUR),
        channel: "support_desk".into(),
        reference: "ticket 7".into(),
        created_at: now(),
    };
    // Booking bumps the order to version 2.
    orders::record_refund(db, "9001", &refund).await.unwrap();

    let mut newer = fed("9001", &customer, 3, 2);
    newer.order.lines[0].description = "Trail jacket".into();
    newer.events.pop();
    let stale = shop_orders::replace(db, &newer, 1, now()).await;
    assert!(
        matches!(stale, Err(StorageError::Conflict { .. })),
        "{stale:?}"
    );

    shop_orders::replace(db, &newer, 2, now()).await.unwrap();
    let read = shop_orders::get(db, "9001").await.unwrap().unwrap();
    assert_eq!(read.order.version, 3);
    assert_eq!(read.order.lines[0].description, "Trail jacket");
    assert_eq!(read.events.len(), 1);
    assert_eq!(read.order.refunds, vec![refund.clone()]);
    assert_eq!(read.source.unwrap().version, 2);
    assert_eq!(
        shop_orders::find_refund(db, "re_desk_1").await.unwrap(),
        Some(("9001".to_owned(), refund))
    );
}

#[tokio::test]
async fn an_orders_journal_stream_chains_and_verifies_beside_proposal_streams() {
    let test = TestDatabase::new().await;
    let event = |kind: &str| NewEvent {
        proposal_id: None,
        order_id: Some("9001".into()),
        actor: "user:shop".into(),
        kind: kind.into(),
        from_status: None,
        to_status: None,
        payload: serde_json::json!({ "source_version": 1 }),
        at: now(),
    };
    let stream = storage::journal::order_stream("9001");
    storage::journal::append_to_stream(test.db.conn(), &stream, vec![event("order.created")])
        .await
        .unwrap();
    let appended = storage::journal::append_to_stream(
        test.db.conn(),
        &stream,
        vec![event("order.refund_recorded")],
    )
    .await
    .unwrap();

    assert_eq!(appended[0].stream, "order:9001");
    assert_eq!(appended[0].stream_seq, 2);
    assert!(matches!(
        storage::journal::verify_chain(test.db.conn())
            .await
            .unwrap(),
        ChainReport::Intact { events: 2, .. }
    ));
}
