//! A person takes over a conversation, over HTTP: the customer asks for
//! one, the staff inbox lists it for the roles an admin chose (nobody else),
//! a member of staff takes it over and writes in it under their name, and
//! the customer's messages go to them until they hand it back.

use crate::support::{TestApp, json};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

/// A bearer client for each of the named demo users.
struct Caller {
    client: Client,
    token: String,
    base: String,
}

impl Caller {
    async fn new(app: &TestApp, name: &str) -> Caller {
        let token = app
            .engine
            .accounts
            .create_token(name, "test")
            .await
            .unwrap();
        Caller {
            client: app.bare_client(),
            token: token.secret.to_string(),
            base: app.url(""),
        }
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        (response.status(), json(response).await)
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status(), json(response).await)
    }
}

#[tokio::test]
async fn the_staff_inbox_shows_who_waits_for_a_person_to_its_roles_and_refuses_everyone_else() {
    let app = TestApp::spawn().await;
    let customer = Caller::new(&app, "customer").await;
    let (status, opened) = customer.post("/api/v1/conversations", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    let id = opened["id"].as_str().unwrap().to_owned();
    let handover = format!("/api/v1/conversations/{id}/handover");

    let (status, asked) = customer.post(&handover, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    assert_eq!(asked["status"], "waiting");

    let approver = Caller::new(&app, "approver").await;
    let (status, inbox) = approver.get("/api/v1/inbox").await;
    assert_eq!(status, StatusCode::OK, "{inbox}");
    let entries = inbox.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{inbox}");
    assert_eq!(entries[0]["conversation_id"], id.as_str());
    assert_eq!(entries[0]["customer_name"], "Cora Customer");
    assert_eq!(entries[0]["status"], "waiting");
    assert!(entries[0]["waiting_since"].is_string());

    // Customers and accounts outside the inbox's roles are refused.
    let agent = Caller::new(&app, "agent").await;
    let shop = Caller::new(&app, "shop").await;
    for outsider in [&customer, &agent, &shop] {
        let (status, body) = outsider.get("/api/v1/inbox").await;
        assert!(
            status == StatusCode::FORBIDDEN || status == StatusCode::NOT_FOUND,
            "{status} {body}"
        );
    }
    let (status, body) = customer
        .post(&format!("/api/v1/conversations/{id}/takeover"), json!({}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "forbidden");
    // Another customer cannot even see the conversation's handover.
    let stranger = Caller::new(&app, "customer2").await;
    let (status, _) = stranger.get(&handover).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, taken) = approver
        .post(&format!("/api/v1/conversations/{id}/takeover"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{taken}");
    assert_eq!(taken["status"], "taken_over");
    assert_eq!(taken["person_name"], "Ada Approver");
    let manager = Caller::new(&app, "manager").await;
    let (status, body) = manager
        .post(&format!("/api/v1/conversations/{id}/takeover"), json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "held_by_another");

    let (status, body) = approver
        .post(
            &format!("/api/v1/conversations/{id}/person-messages"),
            json!({ "text": "Hi Cora, Ada here. Let me look at this." }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = approver
        .post(
            &format!("/api/v1/conversations/{id}/person-messages"),
            json!({ "text": "   " }),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (_, conversation) = customer.get(&format!("/api/v1/conversations/{id}")).await;
    let last = conversation["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["agent"], "person:Ada Approver");
    assert_eq!(last["text"], "Hi Cora, Ada here. Let me look at this.");

    // The customer's reply goes to the person; no agent answers it.
    let (status, turn) = customer
        .post(
            &format!("/api/v1/conversations/{id}/messages"),
            json!({ "text": "thank you!" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{turn}");
    assert_eq!(turn["outcome"], "for_person");
    assert_eq!(turn["reply"], "");

    let (status, back) = approver
        .post(&format!("/api/v1/conversations/{id}/handback"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{back}");
    assert_eq!(back["status"], "agents");
    let (_, inbox) = approver.get("/api/v1/inbox").await;
    assert_eq!(inbox, json!([]));
}

#[tokio::test]
async fn an_admin_chooses_the_inbox_roles_and_the_change_is_audited() {
    let app = TestApp::spawn().await;
    app.login_ok("admin").await;
    let token = app.csrf_token().await;
    let response = app
        .post_form(
            "/fn/set_inbox_roles",
            &[("csrf_token", &token), ("manager", "on")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    let approver = Caller::new(&app, "approver").await;
    let (status, body) = approver.get("/api/v1/inbox").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let manager = Caller::new(&app, "manager").await;
    let (status, _) = manager.get("/api/v1/inbox").await;
    assert_eq!(status, StatusCode::OK);

    // A customer can never be given the inbox.
    let response = app
        .post_form(
            "/fn/set_inbox_roles",
            &[("csrf_token", &token), ("customer", "on")],
        )
        .await;
    assert!(response.status().is_client_error());

    let (events, _) = storage::journal::list(
        app.db().conn(),
        &storage::journal::JournalFilter {
            stream: Some(storage::journal::SETTINGS_STREAM.to_owned()),
            kind: Some("inbox_roles_set".to_owned()),
            ..Default::default()
        },
        0,
        10,
    )
    .await
    .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].actor, "user:admin");
    let payload: Value = serde_json::from_str(&events[0].payload).unwrap();
    assert_eq!(payload["before"], "approver, manager, admin");
    assert_eq!(payload["after"], "manager");
}

#[tokio::test]
async fn the_inbox_page_is_for_staff_and_lists_the_waiting_customer() {
    let app = TestApp::spawn().await;
    let customer = Caller::new(&app, "customer").await;
    let (_, opened) = customer.post("/api/v1/conversations", json!({})).await;
    let id = opened["id"].as_str().unwrap().to_owned();
    let (status, _) = customer
        .post(
            &format!("/api/v1/conversations/{id}/messages"),
            json!({ "text": "can I talk to a human?" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    app.login_ok("customer").await;
    let (status, _) = app.get_page("/inbox").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    app.logout().await;
    app.login_ok("approver").await;
    let (status, page) = app.get_page("/inbox").await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Cora Customer"), "{page}");
    assert!(page.contains("can I talk to a human?"));
    assert!(page.contains(&format!(r#"data-conversation="{id}""#)));
}

#[tokio::test]
async fn the_customer_hears_live_when_a_person_writes_in_their_chat_and_nobody_else_hears_it() {
    let app = TestApp::spawn().await;
    let cora = Caller::new(&app, "customer").await;
    let (_, mine) = cora.post("/api/v1/conversations", json!({})).await;
    let mine = mine["id"].as_str().unwrap().to_owned();
    let cas = Caller::new(&app, "customer2").await;
    let (_, theirs) = cas.post("/api/v1/conversations", json!({})).await;
    let theirs = theirs["id"].as_str().unwrap().to_owned();

    app.login_ok("customer").await;
    let mut stream = app.get("/api/live/proposals").await;
    assert_eq!(stream.status(), StatusCode::OK);

    let approver = Caller::new(&app, "approver").await;
    for id in [&theirs, &mine] {
        let (status, body) = approver
            .post(&format!("/api/v1/conversations/{id}/takeover"), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // Another customer's chat was announced first: had Cora heard it, it
    // would arrive before her own.
    let heard = crate::live::events(&mut stream, 1).await;
    assert_eq!(heard[0].0, "conversation");
    let data: Value = serde_json::from_str(&heard[0].1).unwrap();
    assert_eq!(data, json!({ "conversation_id": mine }));

    let (status, _) = approver
        .post(
            &format!("/api/v1/conversations/{mine}/person-messages"),
            json!({ "text": "Hello Cora" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let heard = crate::live::events(&mut stream, 1).await;
    assert_eq!(heard[0].0, "conversation");
    assert!(heard[0].1.contains(&mine), "{heard:?}");
}

#[tokio::test]
async fn the_widget_asks_for_a_person_in_its_own_chat_but_never_reaches_the_inbox_or_another_chat()
{
    let app = TestApp::spawn().await;
    let key = crate::widget::register(&app).await;
    let widget = Caller {
        client: app.bare_client(),
        token: crate::widget::widget_session(&app, &key, "customer").await,
        base: app.url(""),
    };
    let (status, opened) = widget.post("/api/v1/conversations", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    let id = opened["id"].as_str().unwrap().to_owned();
    let (status, asked) = widget
        .post(&format!("/api/v1/conversations/{id}/handover"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    assert_eq!(asked["status"], "waiting");

    // The customer's web-app chat is outside the widget's lane.
    let web = Caller::new(&app, "customer").await;
    let (_, own) = web.post("/api/v1/conversations", json!({})).await;
    let web_id = own["id"].as_str().unwrap();
    let (status, _) = widget
        .post(
            &format!("/api/v1/conversations/{web_id}/handover"),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = widget.get("/api/v1/inbox").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = widget
        .post(&format!("/api/v1/conversations/{id}/takeover"), json!({}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
