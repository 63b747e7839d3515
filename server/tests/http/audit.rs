//! The audit export: every matching event, in order, for managers only.

use crate::support::TestApp;
use reqwest::StatusCode;
use storage::journal::NewEvent;

#[tokio::test]
async fn an_audit_export_holds_every_matching_event_however_many() {
    let app = TestApp::spawn().await;
    // More events than one chunk of the stream, on an order of their own.
    for _ in 0..5 {
        let tx = app.db().begin_write().await.unwrap();
        let events = (0..500)
            .map(|i| NewEvent {
                proposal_id: None,
                order_id: Some("9999".to_owned()),
                actor: "system:test".to_owned(),
                kind: "resolved".to_owned(),
                from_status: None,
                to_status: None,
                payload: serde_json::json!({ "reason": format!("event {i}") }),
                at: engine::now(),
            })
            .collect();
        storage::journal::append(&*tx, events).await.unwrap();
        tx.commit().await.unwrap();
    }

    app.login_ok("customer").await;
    let refused = app.get("/api/v1/audit/events.csv?order=9999").await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    app.logout().await;

    app.login_ok("manager").await;
    let response = app.get("/api/v1/audit/events.csv?order=9999").await;
    assert_eq!(response.status(), StatusCode::OK);
    let csv = response.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let seqs: Vec<i64> = reader
        .records()
        .map(|r| r.unwrap()[0].parse().unwrap())
        .collect();
    assert_eq!(seqs.len(), 2500);
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "oldest first, none twice"
    );
}
