//! Demo data for the embedded default: one user per role, customers with real
//! orders (order 4821 among them) and the returns policy.

mod policies;

use crate::accounts::{AccountError, Accounts, CreateUser, ThrottlePolicy};
use crate::clock::Clock;
use chrono::Duration;
use domain::{Currency, Money, OrderLine, OrderSnapshot, PastRefund, Role, RoleSet, Timestamp};
use storage::{Database, StorageError};

pub use policies::{RETURNS_POLICY, SHIPPING_POLICY};

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Demo accounts: (name, display name, roles).
pub const DEMO_USERS: &[(&str, &str, &[Role])] = &[
    ("customer", "Cora Customer", &[Role::Customer]),
    ("customer2", "Cas Customer", &[Role::Customer]),
    ("customer3", "Kit Customer", &[Role::Customer]),
    ("approver", "Ada Approver", &[Role::Approver]),
    ("approver2", "Abe Approver", &[Role::Approver]),
    ("manager", "Mia Manager", &[Role::Manager]),
    ("admin", "Ali Admin", &[Role::Admin]),
    ("agent", "External agent (service account)", &[Role::Agent]),
    ("shop", "Web shop backend (service account)", &[Role::Shop]),
];

/// The shape of the demo orders' payment references: the configured
/// payment provider must be able to address them, or every demo refund
/// would be refused after approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceStyle {
    /// The sandbox provider's `pay_<order>`.
    Sandbox,
    /// A Stripe payment intent, `pi_demo<order>`.
    Stripe,
}

impl ReferenceStyle {
    pub fn reference_for(&self, order_id: &str) -> String {
        match self {
            ReferenceStyle::Sandbox => format!("pay_{order_id}"),
            ReferenceStyle::Stripe => format!("pi_demo{order_id}"),
        }
    }
}

/// Seeds the demo once, its orders paid with references in `references`'
/// style; returns false when demo users already exist.
///
/// # Errors
/// Invalid password or storage failures; on failure nothing partial is claimed
/// (a later run finds no `customer` and tries again).
pub async fn seed_demo(
    db: &Database,
    password: &str,
    references: ReferenceStyle,
    now: Timestamp,
) -> Result<bool, DemoError> {
    if storage::users::find_by_name(db.conn(), "customer")
        .await?
        .is_some()
    {
        return Ok(false);
    }
    let mut ids = std::collections::HashMap::new();
    // Every demo record is made at the same instant, `now`.
    let accounts = Accounts::new(db.clone(), Clock::fixed(now), ThrottlePolicy::default());
    for (name, display_name, roles) in DEMO_USERS {
        let user = accounts
            .create_user(
                &crate::settings::ChangedBy::system("demo"),
                CreateUser {
                    name,
                    display_name: Some(display_name),
                    password,
                    roles: RoleSet::new(roles.iter().copied()),
                },
            )
            .await?;
        ids.insert(*name, user.id);
    }
    let id_of = |name: &str| ids.get(name).cloned().unwrap_or_default();
    let tx = db.begin_write().await?;
    for order in demo_orders(
        &id_of("customer"),
        &id_of("customer2"),
        &id_of("customer3"),
        references,
        now,
    ) {
        storage::orders::insert(&*tx, &order).await?;
    }
    for shipment in demo_shipments() {
        storage::browser::shipments::record(&*tx, shipment).await?;
    }
    for (slug, title, body) in [RETURNS_POLICY, SHIPPING_POLICY] {
        storage::policies::import(&*tx, slug, title, body, now).await?;
    }
    tx.commit().await?;
    Ok(true)
}

fn line(sku: &str, description: &str, quantity: i32, unit_price_minor: i64) -> OrderLine {
    OrderLine {
        sku: sku.into(),
        description: description.into(),
        quantity,
        unit_price_minor,
    }
}

fn order(
    id: &str,
    customer_id: &str,
    status: &str,
    lines: Vec<OrderLine>,
    placed_days_ago: i64,
    delivered_days_ago: Option<i64>,
    now: Timestamp,
) -> OrderSnapshot {
    let total: i64 = lines
        .iter()
        .map(|l| i64::from(l.quantity) * l.unit_price_minor)
        .sum();
    OrderSnapshot {
        id: id.into(),
        customer_id: customer_id.into(),
        status: status.into(),
        total: Money::new(total, Currency::EUR),
        payment_reference: ReferenceStyle::Sandbox.reference_for(id),
        placed_at: now - Duration::days(placed_days_ago),
        delivered_at: delivered_days_ago.map(|d| now - Duration::days(d)),
        version: 1,
        lines,
        refunds: vec![],
    }
}

/// A delivered 25.00 EUR order of one cap, placed 5 days ago and delivered
/// 2 days ago, paid as `pay_<id>` and never refunded: the order benchmarks
/// and tests make by the thousand.
pub fn delivered_cap_order(id: &str, customer_id: &str, now: Timestamp) -> OrderSnapshot {
    order(
        id,
        customer_id,
        "delivered",
        vec![line("CAP", "Cap", 1, 2500)],
        5,
        Some(2),
        now,
    )
}

/// A refund of the whole of `order_id` (a [`delivered_cap_order`]), citing
/// the order and the unopened-items section, as the assistant would
/// submit it: what the benchmarks propose by the thousand.
pub fn whole_order_refund(order_id: &str) -> crate::proposals::SubmitProposal {
    use crate::proposals::EvidenceRef;
    let evidence = |reference: String| EvidenceRef {
        reference,
        version: None,
        quote: None,
    };
    crate::proposals::SubmitProposal {
        order_id: order_id.to_owned(),
        amount_minor: None,
        currency: None,
        evidence: vec![
            evidence(format!("order:{order_id}")),
            evidence("returns-policy:section-3".to_owned()),
        ],
        open_questions: vec![],
        recommendation: "Benchmark refund.".into(),
        lines: Vec::new(),
        agent: None,
        conversation_id: None,
        supersedes: None,
    }
}

/// The demo orders. Order 4821 is the brief's: 79.00 EUR, delivered 12 days
/// ago, paid, never refunded.
pub fn demo_orders(
    customer: &str,
    customer2: &str,
    customer3: &str,
    references: ReferenceStyle,
    now: Timestamp,
) -> Vec<OrderSnapshot> {
    let mut orders = demo_orders_paid_in_sandbox(customer, customer2, customer3, now);
    for order in &mut orders {
        order.payment_reference = references.reference_for(&order.id);
    }
    orders
}

fn demo_orders_paid_in_sandbox(
    customer: &str,
    customer2: &str,
    customer3: &str,
    now: Timestamp,
) -> Vec<OrderSnapshot> {
    let mut partly_refunded = order(
        "4823",
        customer,
        "delivered",
        vec![
            line("MUG-01", "Enamel camping mug", 2, 1250),
            line("SOCK-3", "Merino hiking socks", 1, 1900),
        ],
        9,
        Some(5),
        now,
    );
    partly_refunded.refunds.push(PastRefund {
        id: "ref_demo_4823".into(),
        amount: Money::new(1250, Currency::EUR),
        channel: "support_desk".into(),
        reference: "ticket 88120: one mug arrived chipped".into(),
        created_at: now - Duration::days(4),
    });
    vec![
        order(
            "4821",
            customer,
            "delivered",
            vec![line("JKT-TRAIL-M", "Trail running jacket, size M", 1, 7900)],
            15,
            Some(12),
            now,
        ),
        partly_refunded,
        order(
            "4822",
            customer2,
            "delivered",
            vec![line("TENT-2P", "Two-person tent", 1, 12900)],
            50,
            Some(45),
            now,
        ),
        order(
            "4824",
            customer2,
            "shipped",
            vec![line("LAMP-H", "Head lamp", 1, 3490)],
            2,
            None,
            now,
        ),
        order(
            "4830",
            customer3,
            "delivered",
            vec![
                line("BOTTLE-1L", "Insulated bottle 1 l", 1, 2990),
                line("CAP-SUN", "Sun cap", 1, 1490),
            ],
            20,
            Some(18),
            now,
        ),
        // Bought through the partner web shop that embeds the chat widget.
        order(
            "4831",
            customer3,
            "delivered",
            vec![line("GLOVE-W", "Merino liner gloves", 1, 2400)],
            8,
            Some(6),
            now,
        ),
    ]
}

/// Demo tracking numbers at the sandbox carrier: `PW` and the order id.
pub fn demo_tracking_number(order_id: &str) -> String {
    format!("PW{order_id}DE")
}

/// The shipments of the demo orders, all with the sandbox carrier.
pub fn demo_shipments() -> Vec<storage::browser::shipments::Shipment> {
    ["4821", "4822", "4823", "4824", "4830", "4831"]
        .into_iter()
        .map(|order_id| storage::browser::shipments::Shipment {
            order_id: order_id.to_owned(),
            carrier: connectors::carrier_sandbox::SANDBOX_CARRIER.to_owned(),
            tracking_number: demo_tracking_number(order_id),
        })
        .collect()
}

/// What the sandbox carrier knows about the demo parcels. Order 4824 is
/// "shipped" in the shop's records, but the carrier delivered it yesterday
/// (records lag behind the carrier): the specialist learns it from the
/// tracking page, which is slow, as carrier sites are.
pub fn carrier_parcels(now: Timestamp) -> Vec<connectors::carrier_sandbox::CarrierParcel> {
    let delivered = |order_id: &str, days_ago: i64, detail: &str, delay_ms: u64| {
        connectors::carrier_sandbox::CarrierParcel {
            tracking_number: demo_tracking_number(order_id),
            status: "delivered".to_owned(),
            delivered_on: Some((now - Duration::days(days_ago)).date_naive()),
            detail: detail.to_owned(),
            delay: std::time::Duration::from_millis(delay_ms),
        }
    };
    vec![
        delivered("4821", 12, "Handed to the recipient.", 0),
        delivered("4822", 45, "Handed to the recipient.", 0),
        delivered("4823", 5, "Left in the parcel box.", 0),
        delivered("4824", 1, "Left with a neighbour at no. 12.", 2000),
        delivered("4830", 18, "Handed to the recipient.", 0),
        delivered("4831", 6, "Handed to the recipient.", 0),
    ]
}

/// The returns desk's demo records (the `returns` group's): order 4821's
/// jacket came back sealed, 4822's tent opened, 4830's bottle damaged;
/// no parcel came back for the others, so the desk answers "unknown".
///
/// # Errors
/// Database failures.
pub async fn seed_returned_parcels(db: &Database, now: Timestamp) -> Result<(), StorageError> {
    let parcel = |order_id: &str, days_ago: i64, condition: &str, note: &str| {
        storage::returns::parcels::Parcel {
            order_id: order_id.to_owned(),
            received_at: now - Duration::days(days_ago),
            condition: condition.to_owned(),
            note: Some(note.to_owned()),
            inspected_by: "returns desk (demo)".to_owned(),
        }
    };
    let tx = db.begin_write().await?;
    for record in [
        parcel(
            "4821",
            2,
            "sealed",
            "Jacket in its original bag, seal intact, tags attached.",
        ),
        parcel(
            "4822",
            10,
            "opened",
            "Tent unpacked and used; two stakes missing.",
        ),
        parcel(
            "4830",
            5,
            "damaged",
            "Bottle dented at the base; outer box crushed in transit.",
        ),
    ] {
        storage::returns::parcels::record(&*tx, record).await?;
    }
    tx.commit().await
}
