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

fn event_by(actor: &str, order: &str) -> NewEvent {
    NewEvent {
        proposal_id: None,
        order_id: Some(order.to_owned()),
        actor: actor.to_owned(),
        kind: "resolved".to_owned(),
        from_status: None,
        to_status: None,
        payload: serde_json::json!({}),
        at: engine::now(),
    }
}

async fn exported_actors(app: &TestApp, query: &str) -> (StatusCode, Vec<String>) {
    let response = app.get(&format!("/api/v1/audit/events.csv?{query}")).await;
    let status = response.status();
    let text = response.text().await.unwrap();
    if status != StatusCode::OK {
        return (status, vec![text]);
    }
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let actor_column = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "actor")
        .unwrap();
    let actors = reader
        .records()
        .map(|r| r.unwrap()[actor_column].to_owned())
        .collect();
    (status, actors)
}

#[tokio::test]
async fn a_manager_finds_what_a_person_did_by_the_name_people_know_them_by() {
    let app = TestApp::spawn().await;
    let tx = app.db().begin_write().await.unwrap();
    storage::journal::append(
        &*tx,
        vec![
            event_by("user:approver", "9001"),
            event_by("user:approver2", "9001"),
            event_by("system:test", "9001"),
        ],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    app.login_ok("manager").await;

    for who in [
        "Ada%20Approver",
        "ada%20approver",
        "approver",
        "user:approver",
    ] {
        let (status, actors) = exported_actors(&app, &format!("order=9001&user={who}")).await;
        assert_eq!(status, StatusCode::OK, "{who}: {actors:?}");
        assert_eq!(actors, ["user:approver"], "Who = {who}");
    }
    let (status, actors) = exported_actors(&app, "order=9001&user=Nobody%20Known").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        actors.is_empty(),
        "an unknown name finds nothing: {actors:?}"
    );

    // Two accounts under one name: the manager is told which logins to use.
    sea_orm::ConnectionTrait::execute_unprepared(
        app.db().conn(),
        "UPDATE users SET display_name = 'Ada Approver' WHERE name = 'approver2'",
    )
    .await
    .unwrap();
    let (status, message) = exported_actors(&app, "order=9001&user=Ada%20Approver").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(message[0].contains("approver, approver2"), "{message:?}");
}
