//! The browser lane's reader against the sandbox carrier, in Debian's
//! Chromium: what the page says, its text and a screenshot with its hash.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use connectors::browser::{BrowserError, Chromium, DEBIAN_CHROMIUM};
use connectors::carrier_sandbox::{CarrierParcel, CarrierSandbox, serve_standalone};
use sha2::{Digest, Sha256};
use std::time::Duration;

async fn carrier(parcels: Vec<CarrierParcel>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(serve_standalone(listener, CarrierSandbox::new(parcels)));
    format!("http://{address}/track/")
}

fn parcel(number: &str, status: &str, delivered_on: Option<&str>) -> CarrierParcel {
    CarrierParcel {
        tracking_number: number.to_owned(),
        status: status.to_owned(),
        delivered_on: delivered_on.map(|d| d.parse().unwrap()),
        detail: "Left with a neighbour at no. 12.".to_owned(),
        delay: Duration::ZERO,
    }
}

#[tokio::test]
async fn a_delivered_parcel_is_read_with_its_date_text_and_a_screenshot_whose_hash_is_kept() {
    let base = carrier(vec![parcel("PW1", "delivered", Some("2026-12-02"))]).await;
    let page = Chromium::debian(Duration::from_secs(30))
        .read_tracking_page(&format!("{base}PW1"))
        .await
        .unwrap();
    assert_eq!(page.status, "delivered");
    assert_eq!(page.delivered_on.as_deref(), Some("2026-12-02"));
    assert!(page.text.contains("Left with a neighbour"), "{}", page.text);
    assert!(page.screenshot.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(
        page.screenshot_sha256,
        hex::encode(Sha256::digest(&page.screenshot))
    );
    assert_eq!(page.url, format!("{base}PW1"));
}

#[tokio::test]
async fn a_parcel_in_transit_has_no_delivery_date_even_if_the_page_shows_one() {
    let base = carrier(vec![parcel("PW2", "in_transit", Some("2026-12-02"))]).await;
    let page = Chromium::debian(Duration::from_secs(30))
        .read_tracking_page(&format!("{base}PW2"))
        .await
        .unwrap();
    assert_eq!(page.status, "in_transit");
    assert_eq!(page.delivered_on, None);
}

#[tokio::test]
async fn a_page_without_a_tracking_status_is_an_error_not_a_guess() {
    let base = carrier(Vec::new()).await;
    let read = Chromium::debian(Duration::from_secs(30))
        .read_tracking_page(&format!("{base}NOPE"))
        .await;
    assert!(
        matches!(&read, Err(BrowserError::Page(why)) if why.contains("shows no tracking status")),
        "{read:?}"
    );
}

#[tokio::test]
async fn a_missing_browser_is_named_in_the_error() {
    let read = Chromium::new("/nonexistent/chromium", Duration::from_secs(5))
        .read_tracking_page("http://127.0.0.1:9/track/PW1")
        .await;
    assert_eq!(
        read,
        Err(BrowserError::NotInstalled(
            "/nonexistent/chromium".to_owned()
        ))
    );
    assert!(!DEBIAN_CHROMIUM.is_empty());
}

#[tokio::test]
async fn the_sandbox_carrier_holds_its_pages_while_told_to_and_says_how_many_wait() {
    let sandbox = CarrierSandbox::new(vec![parcel("PW3", "delivered", Some("2026-12-01"))]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(serve_standalone(listener, sandbox.clone()));
    let client = reqwest::Client::new();
    let control = format!("http://{address}/control");
    let held: serde_json::Value = client
        .put(&control)
        .json(&serde_json::json!({ "held": true }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(held["held"], true);

    let page = tokio::spawn(client.get(format!("http://{address}/track/PW3")).send());
    sandbox.answering(1).await;
    let status: serde_json::Value = client
        .get(&control)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (status["answering"].as_u64(), status["answered"].as_u64()),
        (Some(1), Some(0))
    );

    client
        .put(&control)
        .json(&serde_json::json!({ "held": false }))
        .send()
        .await
        .unwrap();
    assert_eq!(page.await.unwrap().unwrap().status(), 200);
    let nonsense = client
        .put(&control)
        .json(&serde_json::json!({ "held": "yes" }))
        .send()
        .await
        .unwrap();
    assert_eq!(nonsense.status(), 422);
}
