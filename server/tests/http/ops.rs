//! The operations view over JSON: who may see it, a dead letter retried
//! until it is done, a refund's send that may not be cancelled, alerts
//! acknowledged; and the live hints that tell `/ops` to read it again.

use crate::live::events;
use crate::support::{TestApp, json};
use chrono::Duration;
use reqwest::StatusCode;
use serde_json::Value;

/// A JSON POST with the session's cookie and CSRF token, no body.
async fn post(app: &TestApp, path: &str) -> reqwest::Response {
    let token = app.csrf_token().await;
    app.client
        .post(app.url(path))
        .header("x-csrf-token", token)
        .send()
        .await
        .unwrap()
}

/// A notification that failed for good: written as the engine writes one,
/// claimed by a worker of this test (at a time the server's runner has not
/// reached, so only this test takes it) and dead-lettered as the runner
/// does when a handler gives up.
async fn dead_notification(app: &TestApp, proposal_id: &str) -> String {
    let later = engine::now() + Duration::days(1);
    let tx = app.db().begin_write().await.unwrap();
    storage::work::enqueue(
        &*tx,
        &[engine::work::person_notify(
            proposal_id,
            "the refund needs a person",
            later,
        )],
        engine::now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let claimed = storage::work::claim(
        app.db().conn(),
        engine::work::NOTIFICATIONS,
        Some(&[engine::work::PERSON_NOTIFY.to_owned()]),
        "ops-test-worker",
        later + Duration::minutes(5),
        later,
        1,
    )
    .await
    .unwrap();
    let id = claimed[0].id.clone();
    storage::work::finish(
        app.db().conn(),
        &[storage::work::Finish::Dead {
            id: id.clone(),
            error: "the notification service did not answer".to_owned(),
        }],
        "ops-test-worker",
        later,
    )
    .await
    .unwrap();
    id
}

fn attention_row<'a>(view: &'a Value, id: &str) -> Option<&'a Value> {
    view["attention"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == id)
}

#[tokio::test]
async fn background_work_is_shown_to_managers_and_admins_and_refused_to_everyone_else() {
    let app = TestApp::spawn().await;
    for user in ["customer", "approver"] {
        app.login_ok(user).await;
        let response = app.get("/api/v1/ops").await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{user}");
        assert_eq!(json(response).await["error"]["code"], "forbidden");
        let live = app.get("/api/live/ops").await;
        assert_eq!(live.status(), StatusCode::FORBIDDEN, "{user}: live hints");
        app.logout().await;
    }
    for user in ["manager", "admin"] {
        app.login_ok(user).await;
        let response = app.get("/api/v1/ops").await;
        assert_eq!(response.status(), StatusCode::OK, "{user}");
        let view = json(response).await;
        let lanes: Vec<&str> = view["lanes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|lane| lane["name"].as_str().unwrap())
            .collect();
        assert_eq!(lanes, ["payments", "checks", "notifications", "scheduled"]);
        assert!(
            view["lanes"][0]["purpose"]
                .as_str()
                .unwrap()
                .contains("refunds"),
            "{view}"
        );
        assert!(
            view["schedules"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["kind"] == "audit.verify"),
            "the daily journal check is listed: {view}"
        );
        app.logout().await;
    }
}

#[tokio::test]
async fn a_dead_letter_retried_through_the_api_is_queued_then_done_and_its_alert_can_be_acknowledged()
 {
    let app = TestApp::spawn().await;
    let id = dead_notification(&app, "prp_ops_retry").await;
    app.login_ok("manager").await;

    let view = json(app.get("/api/v1/ops").await).await;
    let row = attention_row(&view, &id).expect("the dead letter is listed");
    assert_eq!(row["state"], "dead");
    assert_eq!(row["last_error"], "the notification service did not answer");
    assert_eq!(row["proposal_id"], "prp_ops_retry");
    assert_eq!(
        row["actions"],
        serde_json::json!(["retry", "resolve", "cancel"])
    );
    let lane = view["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|lane| lane["name"] == "notifications")
        .unwrap();
    assert_eq!(lane["dead"], 1);

    // The page's live hints: open before the retry, so none is missed.
    let mut live = app.get("/api/live/ops").await;
    assert_eq!(live.status(), StatusCode::OK);

    let response = post(&app, &format!("/api/v1/ops/work/{id}/retry")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(json(response).await["state"], "queued");

    // Each hint says "read the view again": read it until the runner has
    // run the item.
    let done = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let hint = events(&mut live, 1).await;
            assert_eq!(hint[0].0, "ops");
            let item = storage::work::get(app.db().conn(), &id)
                .await
                .unwrap()
                .unwrap();
            if item.state == storage::work::DONE {
                return item;
            }
        }
    })
    .await
    .expect("the retried item runs and a hint says so");
    assert_eq!(done.attempts, 1, "the retry started again from zero");
    let view = json(app.get("/api/v1/ops").await).await;
    assert!(attention_row(&view, &id).is_none(), "{view}");

    // The notification raised its alert; a manager acknowledges it.
    let alert = view["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["subject"] == "prp_ops_retry")
        .expect("the notification's alert is open")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let response = post(&app, &format!("/api/v1/ops/alerts/{alert}/acknowledge")).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let view = json(app.get("/api/v1/ops").await).await;
    assert!(
        view["alerts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["id"] != alert.as_str())
    );
    let again = post(&app, &format!("/api/v1/ops/alerts/{alert}/acknowledge")).await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);

    // Retrying what is no longer dead is refused with the reason.
    let response = post(&app, &format!("/api/v1/ops/work/{id}/retry")).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let body = json(response).await;
    assert_eq!(body["error"]["code"], "conflict");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("only dead-lettered work can be retried"),
        "{body}"
    );

    // Both actions are in the journal with who took them.
    let (events, _) = storage::journal::list(
        app.db().conn(),
        &storage::journal::JournalFilter {
            actor: Some("user:manager".to_owned()),
            ..Default::default()
        },
        0,
        50,
    )
    .await
    .unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert!(kinds.contains(&"work_retried"), "{kinds:?}");
    assert!(kinds.contains(&"alert_acknowledged"), "{kinds:?}");
}

#[tokio::test]
async fn a_refunds_send_cannot_be_cancelled_and_the_refusal_says_why() {
    let app = TestApp::spawn().await;
    // Not yet due, so the runner leaves it where it is.
    let tx = app.db().begin_write().await.unwrap();
    storage::work::enqueue(
        &*tx,
        &[engine::work::refund_send(
            &engine::execution::RefundTarget {
                id: "prp_ops_send".to_owned(),
                payment_reference: "ch_ops_send".to_owned(),
                amount: domain::Money::new(1000, domain::Currency::EUR),
            },
            engine::now() + Duration::days(1),
        )],
        engine::now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let item = storage::work::list(
        app.db().conn(),
        &storage::work::WorkFilter {
            lane: Some(engine::work::PAYMENTS.to_owned()),
            ..Default::default()
        },
        10,
    )
    .await
    .unwrap()
    .into_iter()
    .find(|item| item.subject.as_deref() == Some("prp_ops_send"))
    .unwrap();

    app.login_ok("admin").await;
    let response = post(&app, &format!("/api/v1/ops/work/{}/cancel", item.id)).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let body = json(response).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("refund.send work cannot be cancelled"),
        "{body}"
    );
    let after = storage::work::get(app.db().conn(), &item.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.state, storage::work::QUEUED, "nothing changed");

    let unknown = post(&app, "/api/v1/ops/work/no-such-item/retry").await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert_eq!(json(unknown).await["error"]["code"], "not_found");

    app.logout().await;
    app.login_ok("approver").await;
    let refused = post(&app, &format!("/api/v1/ops/work/{}/cancel", item.id)).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}
