//! Server-sent proposal changes: who hears what.

use crate::support::TestApp;

use engine::live::ProposalChanged;
use reqwest::StatusCode;
use std::time::Duration;

fn change(proposal_id: &str, customer_id: &str) -> ProposalChanged {
    ProposalChanged {
        proposal_id: proposal_id.to_owned(),
        order_id: "4821".to_owned(),
        status: "executing".to_owned(),
        customer_id: Some(customer_id.to_owned()),
        state: None,
        state_version: 0,
    }
}

/// The `event:` and `data:` of each event in the stream until `count` came.
pub(crate) async fn events(
    response: &mut reqwest::Response,
    count: usize,
) -> Vec<(String, String)> {
    let mut text = String::new();
    let mut found = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        while found.len() < count {
            let chunk = response
                .chunk()
                .await
                .unwrap()
                .expect("the stream stays open");
            text.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = text.find("\n\n") {
                let event: String = text.drain(..end + 2).collect();
                let field = |name: &str| {
                    event
                        .lines()
                        .find_map(|line| line.strip_prefix(name))
                        .map(|value| value.trim().to_owned())
                };
                if let (Some(kind), Some(data)) = (field("event:"), field("data:")) {
                    found.push((kind, data));
                }
            }
        }
    })
    .await
    .expect("the events arrive");
    found
}

#[tokio::test]
async fn a_customer_hears_changes_to_their_own_refunds_and_every_resync_but_nobody_elses() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;
    let me = app.whoami().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut stream = app.get("/api/live/proposals").await;
    assert_eq!(stream.status(), StatusCode::OK);
    // On PostgreSQL changes travel by NOTIFY: wait until its LISTEN is in place.
    app.engine.live.listening().await;

    app.engine.live.publish_all(vec![
        change("prp_someone_elses", "usr_someone_else"),
        change("prp_mine", &me),
    ]);
    // The listener lost its connection: pages must reload, the customer's too.
    app.engine.live.resync();

    // On PostgreSQL the two announcements travel as separate NOTIFYs and
    // may arrive in either order.
    let mut heard = events(&mut stream, 2).await;
    heard.sort();
    assert_eq!(heard[0].0, "proposal");
    assert!(heard[0].1.contains("\"prp_mine\""), "{heard:?}");
    assert_eq!(heard[1], ("resync".to_owned(), "{}".to_owned()));
}

#[tokio::test]
async fn a_page_gets_the_new_state_with_the_announcement_and_needs_not_ask_again() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let mut stream = app.get("/api/live/proposals").await;
    assert_eq!(stream.status(), StatusCode::OK);
    app.engine.live.listening().await;
    app.logout().await;

    let proposal = crate::refund::propose(&app, "4821").await;
    let heard = events(&mut stream, 1).await;
    assert_eq!(heard[0].0, "proposal");
    let change: serde_json::Value = serde_json::from_str(&heard[0].1).unwrap();
    assert_eq!(change["proposal_id"], proposal["id"]);
    assert_eq!(change["state"]["status"], "awaiting_approval");
    assert!(
        change["state"]["expires_at"].is_string(),
        "the whole state, not only its name: {change}"
    );
    assert_eq!(change["state_version"], 1);
}
