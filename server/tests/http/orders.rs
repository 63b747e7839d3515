//! The order source over HTTP: a shop's backend feeds orders with its own
//! versions and records refunds made through other channels; people and
//! agents who are not the shop cannot.

use crate::support::{TestApp, json};
use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use server::config::PaymentProviderKind;
use storage::journal::{ChainReport, JournalFilter};

/// A bearer token for a demo user.
pub(crate) async fn token(app: &TestApp, user: &str) -> String {
    app.engine
        .accounts
        .create_token(user, "ci")
        .await
        .unwrap()
        .secret
}

pub(crate) async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (StatusCode, Value) {
    let mut request = app.bare_client().request(method, app.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, json(response).await)
}

pub(crate) async fn put_order(
    app: &TestApp,
    token: &str,
    id: &str,
    body: &Value,
) -> (StatusCode, Value) {
    let path = format!("/api/v1/orders/{id}");
    call(app, Method::PUT, &path, Some(token), Some(body)).await
}

async fn get_order(app: &TestApp, token: &str, id: &str) -> (StatusCode, Value) {
    let path = format!("/api/v1/orders/{id}");
    call(app, Method::GET, &path, Some(token), None).await
}

async fn post_refund(app: &TestApp, token: &str, id: &str, body: &Value) -> (StatusCode, Value) {
    let path = format!("/api/v1/orders/{id}/refunds");
    call(app, Method::POST, &path, Some(token), Some(body)).await
}

fn days_ago(days: i64) -> String {
    (Utc::now() - Duration::days(days)).to_rfc3339()
}

/// Boots (129.00) and two laces (3.00 each) with 4.90 shipping: 139.90 EUR,
/// shipped, paid in the sandbox.
pub(crate) fn boots(source_version: i64) -> Value {
    json!({
        "source_version": source_version,
        "customer": "customer2",
        "placed_at": days_ago(10),
        "currency": "EUR",
        "lines": [
            {"sku": "BOOT-42", "description": "Hiking boots, size 42", "quantity": 1, "unit_price_minor": 12900},
            {"sku": "LACE", "description": "Spare laces", "quantity": 2, "unit_price_minor": 300}
        ],
        "shipping_minor": 490,
        "total_minor": 13990,
        "payment_reference": "pay_shop_9001",
        "events": [{"kind": "shipped", "at": days_ago(9)}]
    })
}

fn support_desk_refund(refund_id: &str, amount_minor: i64) -> Value {
    json!({
        "refund_id": refund_id,
        "amount_minor": amount_minor,
        "currency": "EUR",
        "channel": "support_desk",
        "reference": "ticket 4411: laces missing",
        "created_at": Utc::now().to_rfc3339(),
    })
}

/// The kinds of the order's journal events, oldest first.
pub(crate) async fn order_journal(app: &TestApp, order_id: &str) -> Vec<String> {
    let filter = JournalFilter {
        order_id: Some(order_id.to_owned()),
        ..JournalFilter::default()
    };
    let (events, _) = storage::journal::list(app.db().conn(), &filter, 0, 100)
        .await
        .unwrap();
    for event in &events {
        assert_eq!(event.stream, format!("order:{order_id}"));
    }
    events.into_iter().map(|event| event.kind).collect()
}

#[tokio::test]
async fn a_shop_that_resends_an_order_after_a_timeout_gets_the_same_answer_and_no_duplicate() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;

    let order = boots(1);
    let (created, first) = put_order(&app, &shop, "9001", &order).await;
    assert_eq!(created, StatusCode::CREATED, "{first}");
    assert_eq!(first["external_id"], "9001");
    assert_eq!(first["source_version"], 1);
    assert_eq!(first["version"], 1);
    assert_eq!(first["customer"], "customer2");
    assert_eq!(first["status"], "shipped");
    assert_eq!(first["delivered_at"], Value::Null);
    assert_eq!(first["total_minor"], 13990);
    assert_eq!(first["refundable_minor"], 13990);
    assert_eq!(first["lines"].as_array().unwrap().len(), 2);

    let (repeated, again) = put_order(&app, &shop, "9001", &order).await;
    assert_eq!(repeated, StatusCode::OK);
    assert_eq!(again, first, "the same body");
    assert_eq!(order_journal(&app, "9001").await, vec!["order.created"]);
    // Agents and approvers read the same order.
    let stored = storage::orders::get(app.db().conn(), "9001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.payment_reference, "pay_shop_9001");
    assert_eq!(stored.version, 1);
}

#[tokio::test]
async fn a_delivery_reported_in_a_newer_version_updates_the_order_and_older_versions_cannot_undo_it()
 {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;
    let mut delivered = boots(2);
    let delivered_at = days_ago(7);
    delivered["events"]
        .as_array_mut()
        .unwrap()
        .push(json!({"kind": "delivered", "at": delivered_at}));

    let (status, updated) = put_order(&app, &shop, "9001", &delivered).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["source_version"], 2);
    assert_eq!(updated["version"], 2, "Countersign's own version moves too");
    assert_eq!(updated["status"], "delivered");
    assert!(updated["delivered_at"].is_string());

    let (stale, refusal) = put_order(&app, &shop, "9001", &boots(1)).await;
    assert_eq!(stale, StatusCode::CONFLICT);
    assert_eq!(refusal["error"]["code"], "conflict");
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(message.contains("stored at source version 2"), "{message}");
    assert!(message.contains("version 1 is older"), "{message}");

    let mut conflicting = delivered.clone();
    conflicting["lines"][1]["quantity"] = json!(3);
    conflicting["total_minor"] = json!(14290);
    let (clash, refusal) = put_order(&app, &shop, "9001", &conflicting).await;
    assert_eq!(clash, StatusCode::CONFLICT);
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("source version 2 with different content"),
        "{message}"
    );

    let (_, now) = get_order(&app, &shop, "9001").await;
    assert_eq!(now, updated, "neither refusal changed the order");
    assert_eq!(
        order_journal(&app, "9001").await,
        vec!["order.created", "order.updated"]
    );
}

#[tokio::test]
async fn orders_a_shop_gets_wrong_are_refused_with_the_field_named_and_nothing_stored() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    let with = |field: &str, value: Value| {
        let mut body = boots(1);
        body[field] = value;
        body
    };
    let cases = [
        (
            with("customer", json!("nobody")),
            "no customer named \"nobody\"",
        ),
        (with("customer", json!("approver")), "is not a customer"),
        (with("currency", json!("EURO")), "currency:"),
        (
            with("total_minor", json!(13900)),
            "total_minor 13900 does not match",
        ),
        (
            with("payment_reference", json!("pay shop 9001")),
            "the sandbox cannot hold this payment",
        ),
        (with("source_version", json!(0)), "source_version"),
        (
            with("events", json!([{"kind": "lost", "at": days_ago(1)}])),
            "unknown variant",
        ),
        (with("shiping_minor", json!(490)), "unknown field"),
    ];
    for (body, expected) in cases {
        let (status, refusal) = put_order(&app, &shop, "9001", &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refusal}");
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{expected:?} not in {message}");
    }
    let (bad_id, refusal) = put_order(&app, &shop, "90%2001", &boots(1)).await;
    assert_eq!(bad_id, StatusCode::BAD_REQUEST, "{refusal}");

    let (missing, _) = get_order(&app, &shop, "9001").await;
    assert_eq!(missing, StatusCode::NOT_FOUND);
    assert!(order_journal(&app, "9001").await.is_empty());
}

#[tokio::test]
async fn with_stripe_configured_a_sandbox_reference_is_refused_when_stored_not_after_approval() {
    let app = TestApp::spawn_with(|settings| {
        settings.payment_provider = PaymentProviderKind::Stripe;
        settings.stripe_secret_key = Some("sk_test_orders".to_owned().into());
        settings.payment_base_url = Some("http://127.0.0.1:9".to_owned());
    })
    .await;
    let shop = token(&app, "shop").await;

    let (status, refusal) = put_order(&app, &shop, "9001", &boots(1)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("payment_reference:"), "{message}");
    assert!(message.contains("pi_"), "{message}");

    let mut stripe_paid = boots(1);
    stripe_paid["payment_reference"] = json!("pi_3ShopOrder9001");
    let (created, order) = put_order(&app, &shop, "9001", &stripe_paid).await;
    assert_eq!(created, StatusCode::CREATED, "{order}");
}

#[tokio::test]
async fn only_a_shop_or_an_admin_can_feed_orders_or_record_refunds() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;

    for user in ["customer2", "agent", "approver", "manager"] {
        let other = token(&app, user).await;
        let (put, refusal) = put_order(&app, &other, "9002", &boots(1)).await;
        assert_eq!(put, StatusCode::FORBIDDEN, "{user}: {refusal}");
        assert_eq!(refusal["error"]["code"], "forbidden");
        let (get, _) = get_order(&app, &other, "9001").await;
        assert_eq!(get, StatusCode::FORBIDDEN, "{user}");
        let (refund, _) = post_refund(&app, &other, "9001", &support_desk_refund("r1", 100)).await;
        assert_eq!(refund, StatusCode::FORBIDDEN, "{user}");
    }
    for method in [Method::PUT, Method::GET] {
        let path = "/api/v1/orders/9002";
        let (anonymous, refusal) = call(&app, method, path, None, Some(&boots(1))).await;
        assert_eq!(anonymous, StatusCode::UNAUTHORIZED);
        assert_eq!(refusal["error"]["code"], "unauthenticated");
    }
    let path = "/api/v1/orders/9001/refunds";
    let body = support_desk_refund("r1", 100);
    let (anonymous, _) = call(&app, Method::POST, path, None, Some(&body)).await;
    assert_eq!(anonymous, StatusCode::UNAUTHORIZED);

    let admin = token(&app, "admin").await;
    let (by_admin, _) = put_order(&app, &admin, "9002", &boots(1)).await;
    assert_eq!(by_admin, StatusCode::CREATED);
    let (_, order) = get_order(&app, &shop, "9001").await;
    assert!(order["refunds"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn an_oversized_order_body_is_413_and_nothing_is_stored() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    let mut huge = boots(1);
    huge["lines"][0]["description"] = json!("x".repeat(300 * 1024));

    let (status, refusal) = put_order(&app, &shop, "9001", &huge).await;

    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(refusal["error"]["code"], "payload_too_large");
    assert_eq!(
        get_order(&app, &shop, "9001").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_refund_made_at_the_support_desk_is_booked_once_and_lowers_what_can_still_be_refunded() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;
    let refund = support_desk_refund("desk-4411", 600);

    let (recorded, first) = post_refund(&app, &shop, "9001", &refund).await;
    assert_eq!(recorded, StatusCode::CREATED, "{first}");
    assert_eq!(first["refund_id"], "desk-4411");
    assert_eq!(first["amount_minor"], 600);
    assert_eq!(first["channel"], "support_desk");

    let (repeated, again) = post_refund(&app, &shop, "9001", &refund).await;
    assert_eq!(repeated, StatusCode::OK);
    assert_eq!(again, first);

    let mut changed = refund.clone();
    changed["amount_minor"] = json!(900);
    let (clash, refusal) = post_refund(&app, &shop, "9001", &changed).await;
    assert_eq!(clash, StatusCode::CONFLICT);
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("desk-4411 is already recorded on order 9001 as 6.00 EUR"),
        "{message}"
    );

    let (_, order) = get_order(&app, &shop, "9001").await;
    assert_eq!(order["refunded_minor"], 600);
    assert_eq!(order["refundable_minor"], 13390);
    assert_eq!(
        order["version"], 2,
        "approvals of the order before see the change"
    );
    assert_eq!(order["refunds"].as_array().unwrap().len(), 1);
    assert_eq!(
        order_journal(&app, "9001").await,
        vec!["order.created", "order.refund_recorded"]
    );
    assert!(matches!(
        storage::journal::verify_chain(app.db().conn())
            .await
            .unwrap(),
        ChainReport::Intact { .. }
    ));
}

#[tokio::test]
async fn a_refund_larger_than_what_is_left_or_in_another_currency_is_refused() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;
    post_refund(&app, &shop, "9001", &support_desk_refund("desk-1", 13000)).await;

    let (over, refusal) =
        post_refund(&app, &shop, "9001", &support_desk_refund("desk-2", 1000)).await;
    assert_eq!(over, StatusCode::UNPROCESSABLE_ENTITY);
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("more than the 9.90 EUR still refundable"),
        "{message}"
    );

    let mut dollars = support_desk_refund("desk-3", 100);
    dollars["currency"] = json!("USD");
    let (currency, refusal) = post_refund(&app, &shop, "9001", &dollars).await;
    assert_eq!(currency, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is in EUR, not USD")
    );

    let (unknown, _) = post_refund(&app, &shop, "9999", &support_desk_refund("desk-4", 1)).await;
    assert_eq!(unknown, StatusCode::NOT_FOUND);
    let (_, order) = get_order(&app, &shop, "9001").await;
    assert_eq!(order["refunded_minor"], 13000);
}

/// Submits a full refund of the order as the agent; returns (id, digest).
async fn propose_full_refund(app: &TestApp, order_id: &str) -> (String, String) {
    let agent = token(app, "agent").await;
    let (status, proposal) = call(
        app,
        Method::POST,
        "/api/v1/proposals",
        Some(&agent),
        Some(&json!({
            "order_id": order_id,
            "evidence": [
                {"reference": format!("order:{order_id}")},
                {"reference": "returns-policy:section-3"}
            ],
            "recommendation": "The boots came back unworn."
        })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{proposal}");
    (
        proposal["id"].as_str().unwrap().to_owned(),
        proposal["action_digest"].as_str().unwrap().to_owned(),
    )
}

async fn approve(app: &TestApp, id: &str, digest: &str) -> (StatusCode, Value) {
    let approver = token(app, "approver").await;
    let path = format!("/api/v1/proposals/{id}/approve");
    call(
        app,
        Method::POST,
        &path,
        Some(&approver),
        Some(&json!({ "action_digest": digest })),
    )
    .await
}

async fn proposal_status(app: &TestApp, id: &str) -> Value {
    let approver = token(app, "approver").await;
    let path = format!("/api/v1/proposals/{id}");
    call(app, Method::GET, &path, Some(&approver), None).await.1["proposal"]["status"].clone()
}

#[tokio::test]
async fn a_refund_recorded_by_the_shop_while_a_proposal_waits_stops_its_approval_from_paying_twice()
{
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;
    let (proposal, digest) = propose_full_refund(&app, "9001").await;

    post_refund(&app, &shop, "9001", &support_desk_refund("desk-1", 13990)).await;
    let (status, answer) = approve(&app, &proposal, &digest).await;

    assert!(!status.is_success(), "{status}: {answer}");
    assert_eq!(proposal_status(&app, &proposal).await, "invalidated");
}

#[tokio::test]
async fn a_shop_lowering_an_orders_total_under_a_waiting_proposal_stops_the_old_amount_being_paid()
{
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;
    let (proposal, digest) = propose_full_refund(&app, "9001").await;

    // The laces were never charged: version 2 has the boots and shipping only.
    let mut corrected = boots(2);
    corrected["lines"].as_array_mut().unwrap().pop();
    corrected["total_minor"] = json!(13390);
    let (status, _) = put_order(&app, &shop, "9001", &corrected).await;
    assert_eq!(status, StatusCode::OK);
    let (status, answer) = approve(&app, &proposal, &digest).await;

    assert!(!status.is_success(), "{status}: {answer}");
    assert_eq!(proposal_status(&app, &proposal).await, "invalidated");
}

#[tokio::test]
async fn the_openapi_document_tells_a_shop_developer_each_order_operation_and_its_id_parameter() {
    let app = TestApp::spawn().await;
    let document = json(app.get("/api/openapi.json").await).await;
    let operations = [
        (
            "/api/v1/orders/{external_id}",
            "put",
            Some("OrderUpsertSchema"),
        ),
        ("/api/v1/orders/{external_id}", "get", None),
        (
            "/api/v1/orders/{external_id}/refunds",
            "post",
            Some("RecordRefundSchema"),
        ),
        (
            "/api/v1/orders/{external_id}/shipment",
            "put",
            Some("ShipmentSchema"),
        ),
        ("/api/v1/orders/{external_id}/shipment", "get", None),
    ];
    for (path, method, body) in operations {
        let operation = &document["paths"][path][method];
        assert_eq!(operation["tags"][0], "orders", "{method} {path}");
        let parameter = &operation["parameters"][0];
        assert_eq!(parameter["name"], "external_id", "{method} {path}");
        assert_eq!(parameter["in"], "path");
        assert_eq!(parameter["required"], true);
        if let Some(schema) = body {
            let reference =
                operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                    .as_str()
                    .unwrap();
            assert!(reference.ends_with(schema), "{reference}");
            assert!(document["components"]["schemas"][schema].is_object());
        }
        for status in ["401", "403"] {
            assert!(
                operation["responses"][status].is_object(),
                "{method} {path} {status}"
            );
        }
    }
    let upsert = &document["paths"]["/api/v1/orders/{external_id}"]["put"]["responses"];
    for status in ["200", "201", "400", "409", "413", "422"] {
        assert!(upsert[status].is_object(), "PUT {status}");
    }
}
