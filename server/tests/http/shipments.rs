//! How an order went out, over HTTP: the shop records the carrier and the
//! tracking number (which the specialist's browser lane reads), corrects
//! them, and reads them back; nobody else can. A shipment is not the
//! order's content: recording it leaves the order's version alone.

use crate::orders::{boots, call, order_journal, put_order, token};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn put_shipment(app: &TestApp, token: &str, id: &str, body: &Value) -> (StatusCode, Value) {
    let path = format!("/api/v1/orders/{id}/shipment");
    call(app, Method::PUT, &path, Some(token), Some(body)).await
}

async fn get_shipment(app: &TestApp, token: &str, id: &str) -> (StatusCode, Value) {
    let path = format!("/api/v1/orders/{id}/shipment");
    call(app, Method::GET, &path, Some(token), None).await
}

async fn order_version(app: &TestApp, token: &str, id: &str) -> i64 {
    let path = format!("/api/v1/orders/{id}");
    let (_, order) = call(app, Method::GET, &path, Some(token), None).await;
    order["version"].as_i64().unwrap()
}

fn parcelway(number: &str) -> Value {
    json!({"carrier": "parcelway", "tracking_number": number})
}

#[tokio::test]
async fn a_shop_records_where_an_order_went_and_corrects_it_without_changing_the_order() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;
    let version = order_version(&app, &shop, "9001").await;

    let (recorded, view) = put_shipment(&app, &shop, "9001", &parcelway("PW9001DE")).await;
    assert_eq!(recorded, StatusCode::CREATED, "{view}");
    assert_eq!(
        view,
        json!({"external_id": "9001", "carrier": "parcelway", "tracking_number": "PW9001DE"})
    );
    // A retry after a timeout: the same answer, nothing written again.
    let (again, same) = put_shipment(&app, &shop, "9001", &parcelway("PW9001DE")).await;
    assert_eq!((again, &same), (StatusCode::OK, &view));
    let (corrected, fixed) = put_shipment(&app, &shop, "9001", &parcelway("PW9001-2DE")).await;
    assert_eq!(corrected, StatusCode::OK);
    assert_eq!(fixed["tracking_number"], "PW9001-2DE");

    let (read, stored) = get_shipment(&app, &shop, "9001").await;
    assert_eq!((read, stored), (StatusCode::OK, fixed));
    let on_record = storage::browser::shipments::find(app.db().conn(), "9001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(on_record.tracking_number, "PW9001-2DE");
    assert_eq!(
        order_version(&app, &shop, "9001").await,
        version,
        "approvals given on the order stay valid"
    );
    assert_eq!(
        order_journal(&app, "9001").await,
        [
            "order.created",
            "order.shipment_recorded",
            "order.shipment_recorded"
        ]
    );
}

#[tokio::test]
async fn shipments_a_shop_gets_wrong_are_refused_with_the_field_named_and_nothing_stored() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;
    let cases = [
        (
            json!({"carrier": "Parcel Way", "tracking_number": "PW9001DE"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "carrier: \"Parcel Way\" is not a carrier name",
        ),
        (
            parcelway("PW 9001 DE"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "tracking_number: \"PW 9001 DE\" is not a tracking number",
        ),
        (
            parcelway(""),
            StatusCode::UNPROCESSABLE_ENTITY,
            "tracking_number",
        ),
        (
            parcelway(&"9".repeat(65)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "1 to 64",
        ),
        (
            json!({"carrier": "parcelway", "tracking": "PW9001DE"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown field",
        ),
    ];
    for (body, status, expected) in cases {
        let (refused, refusal) = put_shipment(&app, &shop, "9001", &body).await;
        assert_eq!(refused, status, "{refusal}");
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{expected:?} not in {message}");
    }
    let (unknown, refusal) = put_shipment(&app, &shop, "9999", &parcelway("PW9999DE")).await;
    assert_eq!(unknown, StatusCode::NOT_FOUND);
    assert_eq!(refusal["error"]["message"], "no order 9999");

    let (none, refusal) = get_shipment(&app, &shop, "9001").await;
    assert_eq!(none, StatusCode::NOT_FOUND);
    assert_eq!(
        refusal["error"]["message"],
        "no shipment is recorded for order 9001"
    );
    assert_eq!(order_journal(&app, "9001").await, ["order.created"]);
}

#[tokio::test]
async fn only_a_shop_or_an_admin_records_or_reads_a_shipment() {
    let app = TestApp::spawn().await;
    let shop = token(&app, "shop").await;
    put_order(&app, &shop, "9001", &boots(1)).await;

    for user in ["customer2", "agent", "approver", "manager"] {
        let other = token(&app, user).await;
        let (put, refusal) = put_shipment(&app, &other, "9001", &parcelway("PW1")).await;
        assert_eq!(put, StatusCode::FORBIDDEN, "{user}: {refusal}");
        let (get, _) = get_shipment(&app, &other, "9001").await;
        assert_eq!(get, StatusCode::FORBIDDEN, "{user}");
    }
    let path = "/api/v1/orders/9001/shipment";
    for method in [Method::PUT, Method::GET] {
        let (anonymous, _) = call(&app, method, path, None, Some(&parcelway("PW1"))).await;
        assert_eq!(anonymous, StatusCode::UNAUTHORIZED);
    }
    let admin = token(&app, "admin").await;
    let (by_admin, _) = put_shipment(&app, &admin, "9001", &parcelway("PW1")).await;
    assert_eq!(by_admin, StatusCode::CREATED);
}

#[tokio::test]
async fn a_server_reading_a_real_carrier_serves_no_stand_in_carrier_pages() {
    let sandboxed = TestApp::spawn().await;
    let page = sandboxed.get("/sandbox/carrier/track/PW4821DE").await;
    assert_eq!(
        page.status(),
        StatusCode::OK,
        "the embedded default's carrier"
    );

    let real = TestApp::spawn_with(|settings| {
        settings.carrier_tracking_url = Some("https://track.example/{tracking_number}".into());
    })
    .await;
    for path in [
        "/sandbox/carrier/track/PW4821DE",
        "/sandbox/carrier/control",
    ] {
        assert_eq!(
            real.get(path).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
}
