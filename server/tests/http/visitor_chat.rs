//! A visitor chats before signing in, over HTTP as the chat page does: the
//! agent asks them to sign in and waits inside the turn; signing in in the
//! same browser (another tab) resumes that turn as the customer, and Stop
//! during the wait ends it at once.

use crate::support::{PASSWORD, TestApp, json};
use reqwest::StatusCode;
use serde_json::Value;
use std::time::Duration;

const ASK: &str = "check order 4821 and refund it if it qualifies";

/// Opens the visitor's conversation and sends the first message; returns
/// once the page would show the sign-in request.
async fn waiting_visitor(app: &TestApp) -> (String, tokio::task::JoinHandle<reqwest::Response>) {
    let (status, _) = app.get_page("/chat").await;
    assert_eq!(status, StatusCode::OK, "the chat is open to visitors");
    let token = app.csrf_token().await;
    let opened = app
        .post_form("/fn/new_conversation", &[("csrf_token", &token)])
        .await;
    assert_eq!(opened.status(), StatusCode::OK);
    let opened = json(opened).await;
    assert_eq!(opened["customer_id"], Value::Null);
    assert_eq!(opened["can_write"], true);
    let id = opened["id"].as_str().unwrap().to_owned();

    let client = app.client.clone();
    let url = app.url("/fn/send_message");
    let fields = [
        ("csrf_token", token.clone()),
        ("id", id.clone()),
        ("text", ASK.to_owned()),
        ("priority", String::new()),
    ];
    let send = tokio::spawn(async move { client.post(url).form(&fields).send().await.unwrap() });
    // What the page does for a visitor: read the conversation until it
    // says it waits (visitors have no live connection).
    let mut every = tokio::time::interval(Duration::from_millis(50));
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            every.tick().await;
            let view = json(app.get(&format!("/fn/conversation_view?id={id}")).await).await;
            if view["waiting_for_sign_in"] == true {
                return;
            }
        }
    })
    .await
    .expect("the turn never asked the visitor to sign in");
    (id, send)
}

#[tokio::test]
async fn a_visitor_signing_in_in_another_tab_gets_the_reply_in_the_tab_that_asked() {
    let app = TestApp::spawn().await;
    let (id, send) = waiting_visitor(&app).await;
    // Nobody else's browser reaches it.
    let stranger = app
        .bare_client()
        .get(app.url(&format!("/fn/conversation_view?id={id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);

    // "Another tab": the same browser's cookies.
    let signed_in = app.login("customer", PASSWORD).await;
    assert_eq!(signed_in.status(), StatusCode::OK);

    let reply = tokio::time::timeout(Duration::from_secs(20), send)
        .await
        .expect("the turn never went on after the sign-in")
        .unwrap();
    assert_eq!(reply.status(), StatusCode::OK);
    let view = json(reply).await;
    let customer = storage::users::find_by_name(app.db().conn(), "customer")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(view["customer_id"], customer.id.as_str());
    assert_eq!(view["waiting_for_sign_in"], false);
    let last = view["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["text"].as_str().unwrap().contains("opened"),
        "the reply asks what only the customer knows: {last}"
    );
    // Signed in, the customer's chat resumes it.
    let mine = json(app.get("/fn/my_conversation").await).await;
    assert_eq!(mine["Resumed"]["id"], id.as_str(), "{mine}");
}

#[tokio::test]
async fn stop_while_a_visitor_is_asked_to_sign_in_ends_the_turn_at_once() {
    let app = TestApp::spawn().await;
    let (id, send) = waiting_visitor(&app).await;
    let token = app.csrf_token().await;

    let stopped = app
        .post_form("/fn/stop_turn", &[("csrf_token", &token), ("id", &id)])
        .await;
    assert_eq!(stopped.status(), StatusCode::OK);
    let reply = tokio::time::timeout(Duration::from_secs(20), send)
        .await
        .expect("Stop did not end the wait")
        .unwrap();
    assert_eq!(reply.status(), StatusCode::OK);
    let view = json(reply).await;
    assert_eq!(view["running"], false);
    assert_eq!(view["waiting_for_sign_in"], false);
    assert_eq!(view["customer_id"], Value::Null);
    let last = view["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["text"].as_str().unwrap().starts_with("Stopped"),
        "the transcript ends with the Stop: {last}"
    );
}

#[tokio::test]
async fn a_signed_out_browser_reads_no_conversation_and_opens_none_by_reading() {
    let app = TestApp::spawn().await;
    let read = app.get("/fn/my_conversation").await;
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(json(read).await, "NotStarted");
    let token = app.csrf_token().await;
    let sent = app
        .post_form(
            "/fn/send_message",
            &[("csrf_token", &token), ("id", "cnv_x"), ("text", ASK)],
        )
        .await;
    assert_eq!(sent.status(), StatusCode::UNAUTHORIZED);
    // The JSON API stays for accounts: no visitor there.
    let api = app
        .bare_client()
        .post(app.url("/api/v1/conversations"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), StatusCode::UNAUTHORIZED);
}
