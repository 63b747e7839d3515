//! The order source's use cases against a real database (SQLite, or
//! PostgreSQL with `TEST_DATABASE_URL`): versions, replacements under
//! refunds, concurrent first sends, refunds from other channels, imports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{Duration, SubsecRound, Utc};
use connectors::HttpTimeouts;
use connectors::sandbox::SandboxProvider;
use domain::proposal::ConditionsSnapshot;
use domain::{DeliveryEvent, DeliveryKind, Role, RoleSet, Timestamp};
use engine::Actor;
use engine::orders::import::{Format, parse};
use engine::orders::{Change, Feeder, LineInput, OrderError, OrderUpsert, Orders, RecordRefund};
use std::sync::{Arc, LazyLock};
use storage::journal::JournalFilter;
use storage::testing::TestDatabase;

struct Shop {
    test: TestDatabase,
    provider: Arc<SandboxProvider>,
    feeder: Feeder,
}

impl Shop {
    async fn open() -> Shop {
        let test = TestDatabase::new().await;
        engine::demo::seed_demo(
            &test.db,
            "orders-test-password",
            engine::demo::ReferenceStyle::Sandbox,
            engine::now(),
        )
        .await
        .unwrap();
        // Only its reference check is used: no request is ever sent.
        let provider = SandboxProvider::new(
            "http://127.0.0.1:9",
            "sk_sbx_unused".to_owned().into(),
            HttpTimeouts::default(),
        )
        .unwrap();
        let shop = actor("shop", &[Role::Shop]);
        Shop {
            test,
            provider: Arc::new(provider),
            feeder: Feeder::from_actor(&shop).unwrap(),
        }
    }

    /// The order source on wall time, checking references with the sandbox.
    fn orders(&self) -> Orders {
        Orders::new(
            self.test.db.clone(),
            engine::Clock::system(),
            self.provider.clone(),
        )
    }

    async fn upsert(&self, id: &str, body: OrderUpsert) -> Result<Change, OrderError> {
        self.orders()
            .upsert_order(&self.feeder, id, body)
            .await
            .map(|outcome| outcome.change)
    }

    async fn refund(
        &self,
        id: &str,
        refund_id: &str,
        amount_minor: i64,
    ) -> Result<bool, OrderError> {
        self.orders()
            .record_refund(
                &self.feeder,
                id,
                RecordRefund {
                    refund_id: refund_id.into(),
                    amount_minor,
                    currency: "EUR".into(),
                    channel: "stripe_dashboard".into(),
                    reference: format!("re_{refund_id}"),
                    created_at: *START,
                },
            )
            .await
            .map(|recorded| recorded.newly_recorded)
    }

    async fn order(&self, id: &str) -> domain::OrderSnapshot {
        storage::orders::get(self.test.db.conn(), id)
            .await
            .unwrap()
            .unwrap()
    }

    async fn journal(&self, id: &str) -> Vec<storage::journal::JournalEvent> {
        let filter = JournalFilter {
            order_id: Some(id.into()),
            ..JournalFilter::default()
        };
        storage::journal::list(self.test.db.conn(), &filter, 0, 100)
            .await
            .unwrap()
            .0
    }
}

fn actor(name: &str, roles: &[Role]) -> Actor {
    Actor {
        user_id: format!("usr_{name}"),
        name: name.into(),
        roles: RoleSet::new(roles.iter().copied()),
        widget_session: None,
    }
}

/// One instant for the whole run, so two bodies built for a repeat agree.
static START: LazyLock<Timestamp> = LazyLock::new(|| Utc::now().trunc_subsecs(0));

fn placed_at() -> Timestamp {
    *START - Duration::days(10)
}

/// A 100.00 EUR tent for `customer`, delivered.
fn tent(source_version: i64) -> OrderUpsert {
    OrderUpsert {
        external_id: None,
        source_version,
        customer: "customer".into(),
        placed_at: placed_at(),
        currency: "EUR".into(),
        lines: vec![LineInput {
            sku: "TENT".into(),
            description: "Tent".into(),
            quantity: 1,
            unit_price_minor: 10_000,
        }],
        shipping_minor: 0,
        discount_minor: 0,
        total_minor: 10_000,
        payment_reference: "pay_tent".into(),
        events: vec![DeliveryEvent {
            kind: DeliveryKind::Delivered,
            at: placed_at() + Duration::days(2),
        }],
    }
}

#[test]
fn demo_orders_are_paid_with_references_the_configured_provider_can_refund() {
    use connectors::PaymentProvider;
    use connectors::stripe::{StripeConfig, StripeProvider};
    use engine::demo::{ReferenceStyle, demo_orders};
    let stripe = StripeProvider::new(StripeConfig {
        base_url: "http://127.0.0.1:9".into(),
        secret_key: "sk_test_demo".to_owned().into(),
        timeouts: HttpTimeouts::default(),
    })
    .unwrap();
    let now = engine::now();
    for order in demo_orders("c1", "c2", "c3", ReferenceStyle::Stripe, now) {
        assert!(order.payment_reference.starts_with("pi_"));
        stripe.check_reference(&order.payment_reference).unwrap();
    }
    let sandbox_paid = demo_orders("c1", "c2", "c3", ReferenceStyle::Sandbox, now);
    assert_eq!(sandbox_paid[0].payment_reference, "pay_4821");
    // Which is why the style follows the provider: Stripe cannot refund these.
    assert!(
        stripe
            .check_reference(&sandbox_paid[0].payment_reference)
            .is_err()
    );
}

#[test]
fn only_shop_and_admin_accounts_may_feed_orders() {
    for role in Role::ALL {
        let allowed = Feeder::from_actor(&actor("someone", &[role])).is_ok();
        assert_eq!(allowed, matches!(role, Role::Shop | Role::Admin), "{role}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_first_sends_of_one_order_at_the_same_moment_store_it_once() {
    let shop = Arc::new(Shop::open().await);
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let sends = (0..2).map(|_| {
        let (shop, barrier) = (shop.clone(), barrier.clone());
        tokio::spawn(async move {
            barrier.wait().await;
            shop.upsert("7001", tent(1)).await.unwrap()
        })
    });
    let mut changes = Vec::new();
    for send in sends.collect::<Vec<_>>() {
        changes.push(send.await.unwrap());
    }
    changes.sort_by_key(|change| *change != Change::Created);

    assert_eq!(changes, vec![Change::Created, Change::Unchanged]);
    assert_eq!(shop.journal("7001").await.len(), 1);
}

#[tokio::test]
async fn a_newer_version_with_the_same_content_moves_only_the_shops_version() {
    let shop = Shop::open().await;
    shop.upsert("7001", tent(1)).await.unwrap();
    let before = shop.order("7001").await;

    assert_eq!(shop.upsert("7001", tent(2)).await.unwrap(), Change::Updated);

    let after = shop.order("7001").await;
    assert_eq!(after, before, "approvals of the order stay valid");
    let journal = shop.journal("7001").await;
    assert_eq!(journal.len(), 2);
    assert!(journal[1].payload.contains("\"content_changed\":false"));
    let stale = shop.upsert("7001", tent(1)).await.unwrap_err();
    assert!(stale.to_string().contains("stored at source version 2"));
}

#[tokio::test]
async fn a_changed_order_no_longer_matches_what_an_approver_saw() {
    let shop = Shop::open().await;
    shop.upsert("7001", tent(1)).await.unwrap();
    let seen = ConditionsSnapshot::capture(&shop.order("7001").await, Vec::new()).unwrap();
    let mut returned = tent(2);
    returned.events.push(DeliveryEvent {
        kind: DeliveryKind::Returned,
        at: placed_at() + Duration::days(5),
    });

    shop.upsert("7001", returned).await.unwrap();

    let now = shop.order("7001").await;
    assert_eq!(now.status, "returned");
    assert_ne!(now.version, seen.order_version);
    assert_ne!(now.content_hash(), seen.order_hash);
}

#[tokio::test]
async fn a_new_version_keeps_the_refunds_already_made_and_cannot_undercut_them() {
    let shop = Shop::open().await;
    shop.upsert("7001", tent(1)).await.unwrap();
    assert!(shop.refund("7001", "dash-1", 6000).await.unwrap());

    let mut cheaper = tent(2);
    cheaper.lines[0].unit_price_minor = 5000;
    cheaper.total_minor = 5000;
    let undercut = shop.upsert("7001", cheaper).await.unwrap_err();
    assert!(
        undercut
            .to_string()
            .contains("less than the 60.00 EUR already refunded"),
        "{undercut}"
    );
    let mut dollars = tent(2);
    dollars.currency = "USD".into();
    let currency = shop.upsert("7001", dollars).await.unwrap_err();
    assert!(currency.to_string().starts_with("currency:"), "{currency}");

    let mut renamed = tent(2);
    renamed.lines[0].description = "Two-person tent".into();
    shop.upsert("7001", renamed).await.unwrap();
    let order = shop.order("7001").await;
    assert_eq!(order.refunds.len(), 1);
    assert_eq!(order.refundable().unwrap().amount_minor, 4000);
    assert_eq!(order.version, 3, "created, refund booked, replaced");
}

#[tokio::test]
async fn a_refund_id_already_used_on_another_order_is_refused_naming_that_order() {
    let shop = Shop::open().await;
    shop.upsert("7001", tent(1)).await.unwrap();
    shop.upsert("7002", tent(1)).await.unwrap();
    shop.refund("7001", "dash-1", 1000).await.unwrap();

    assert!(
        !shop.refund("7001", "dash-1", 1000).await.unwrap(),
        "a repeat"
    );
    let elsewhere = shop.refund("7002", "dash-1", 1000).await.unwrap_err();

    assert!(
        elsewhere
            .to_string()
            .contains("already recorded on order 7001"),
        "{elsewhere}"
    );
    assert!(shop.order("7002").await.refunds.is_empty());
    let kinds: Vec<String> = shop
        .journal("7001")
        .await
        .into_iter()
        .map(|event| event.kind)
        .collect();
    assert_eq!(kinds, vec!["order.created", "order.refund_recorded"]);
}

#[tokio::test]
async fn an_import_stores_each_good_order_whole_and_reports_the_rest() {
    let shop = Shop::open().await;
    let good = serde_json::to_string(&OrderUpsert {
        external_id: Some("7101".into()),
        ..tent(1)
    })
    .unwrap();
    let mut bad = tent(1);
    bad.external_id = Some("7102".into());
    bad.total_minor = 1;
    let bad = serde_json::to_string(&bad).unwrap();
    let orders = parse(&format!("{good}\n{bad}\n{good}\n"), Format::JsonLines).unwrap();

    let report = shop
        .orders()
        .import_orders(&Feeder::command_line(), orders)
        .await;

    assert_eq!(
        (report.created(), report.unchanged(), report.refused()),
        (1, 1, 1)
    );
    let refused = &report.lines[1];
    assert_eq!(refused.line, 2);
    assert_eq!(refused.external_id.as_deref(), Some("7102"));
    assert!(
        refused
            .outcome
            .as_ref()
            .unwrap_err()
            .contains("total_minor 1")
    );
    assert!(
        storage::orders::get(shop.test.db.conn(), "7102")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(shop.journal("7101").await[0].actor, "cli:orders-import");
}
