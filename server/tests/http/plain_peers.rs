//! A plain A2A peer (the official `a2a-sdk` client, no envelope, no
//! signature) sending this group tasks: known by the secret its admin
//! issued it, bound by a pair allowed without signatures, answered from
//! this group's records, marked unsigned, never passed on.

use crate::groups::send_message;
use crate::support::TestApp;
use engine::gateway::{GatewayTrust, InboxTaskView};
use gateway::GroupName;
use serde_json::{Value, json};
use storage::gateway::{inbox, outbox};

const PEER: &str = "plain-agent";

fn admin() -> engine::Actor {
    engine::Actor {
        user_id: "usr_admin".into(),
        name: "admin".into(),
        roles: domain::RoleSet::new([domain::Role::Admin]),
        widget_session: None,
    }
}

/// The returns group with its parcel records (and `configure`'s settings),
/// a secret issued to the plain peer, and the peer's inspections allowed
/// without signatures.
async fn returns_with_plain_peer(
    configure: impl FnOnce(&mut server::config::Settings),
) -> (TestApp, String) {
    let app = TestApp::spawn_with(|s| {
        s.gateway_group = Some("returns".into());
        configure(s);
    })
    .await;
    engine::demo::seed_returned_parcels(app.db(), chrono::Utc::now())
        .await
        .unwrap();
    let trust = GatewayTrust::new(app.db().clone(), engine::Clock::system());
    let secret = trust.issue_peer_secret(&admin(), PEER).await.unwrap();
    trust
        .allow_unsigned(&admin(), PEER, "returns", "returns.inspection")
        .await
        .unwrap();
    (app, secret)
}

/// `interop/a2a_peer.py plain`: the SDK's client with the secret as its
/// bearer token, the order in a data part.
async fn plain_sdk_send(app: &TestApp, secret: &str, message_id: &str, order_id: &str) -> Value {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".venv/a2a/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup.sh --tests to install a2a-sdk",
        python.display()
    );
    let output = tokio::process::Command::new(python)
        .arg(root.join("interop/a2a_peer.py"))
        .args(["plain", &app.address, secret, message_id, order_id])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "the a2a-sdk peer failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Follows the inbox task to its end (woken by each step; the bound only
/// turns a hang into a failure).
async fn final_state(app: &TestApp, id: &str) -> InboxTaskView {
    let receiver = &app.engine.gateway.as_ref().unwrap().receiver;
    let peer = GroupName::parse(PEER).unwrap();
    let mut seen = receiver.task_for(&peer, id).await.unwrap().unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while !seen.is_final() {
            seen = receiver.next_change(&peer, &seen).await.unwrap().unwrap();
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no final state in 30 s: {seen:?}"));
    seen
}

fn message(id: &str, order_id: &str) -> Value {
    json!({
        "messageId": id,
        "role": "ROLE_USER",
        "parts": [{ "data": { "order_id": order_id } }],
    })
}

#[tokio::test]
async fn a_plain_a2a_sdk_agent_with_its_secret_has_its_task_answered_once_and_marked_unsigned() {
    let (app, secret) = returns_with_plain_peer(|_| {}).await;
    let answer = plain_sdk_send(&app, &secret, "msg-1", "4821").await;
    let sent = &answer["sent"][0]["task"];
    let id = sent["id"].as_str().unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(
        answer["got"]["id"], sent["id"],
        "GetTask with the secret: {answer}"
    );
    let done = final_state(&app, id).await;
    assert_eq!(done.state, "completed", "{done:?}");
    assert_eq!(done.result.as_ref().unwrap()["condition"], "sealed");

    // Sent again (a lost answer): the same task, not a second.
    let again = plain_sdk_send(&app, &secret, "msg-1", "4821").await;
    assert_eq!(again["sent"][0]["task"]["id"], sent["id"], "{again}");
    let stored = inbox::find(app.db().conn(), PEER, "a2a:msg-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.id, id);
    // The journal says no signature was verified.
    let filter = storage::journal::JournalFilter {
        stream: Some(storage::journal::task_stream(id)),
        ..storage::journal::JournalFilter::default()
    };
    let (events, _) = storage::journal::list(app.db().conn(), &filter, 0, 10)
        .await
        .unwrap();
    let received = events
        .iter()
        .find(|e| e.kind == "gateway.task_received")
        .unwrap();
    let payload: Value = serde_json::from_str(&received.payload).unwrap();
    assert_eq!(payload["signature_verified"], false);
    assert_eq!(payload["signer"], Value::Null);
    assert_eq!(received.actor, format!("group:{PEER}"));

    // The same message id for another order is another task: refused.
    let reused = send_message(&app, Some(&secret), message("msg-1", "4822")).await;
    assert_eq!(
        reused["error"]["data"][0]["metadata"]["countersignReason"], "key_reused",
        "{reused}"
    );
}

#[tokio::test]
async fn a_message_without_an_envelope_needs_a_live_secret_and_an_allowed_pair() {
    let (app, secret) = returns_with_plain_peer(|_| {}).await;
    // No secret: told how to send a task here.
    let anonymous = send_message(&app, None, message("m-a", "4821")).await;
    assert_eq!(anonymous["error"]["code"], -32008, "{anonymous}");
    assert!(
        anonymous["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the secret this group's admin issued it"),
        "{anonymous}"
    );
    // A secret nobody issued.
    let forged = send_message(&app, Some("cspk_not-issued"), message("m-b", "4821")).await;
    assert!(
        forged["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not known here, or it was revoked"),
        "{forged}"
    );
    // A kind the pair does not allow, and an input the schema refuses.
    let mut other_kind = message("m-c", "4821");
    other_kind["metadata"] = json!({ "kind": "returns.teleport" });
    let refused = send_message(&app, Some(&secret), other_kind).await;
    assert_eq!(
        refused["error"]["data"][0]["metadata"]["countersignReason"], "pair_not_allowed",
        "{refused}"
    );
    let bad_input = send_message(
        &app,
        Some(&secret),
        json!({ "messageId": "m-d", "role": "ROLE_USER", "parts": [{ "data": { "order": 4821 } }] }),
    )
    .await;
    assert_eq!(
        bad_input["error"]["data"][0]["metadata"]["countersignReason"], "invalid_input",
        "{bad_input}"
    );
    let no_data = send_message(
        &app,
        Some(&secret),
        json!({ "messageId": "m-e", "role": "ROLE_USER", "parts": [{ "text": "order 4821 please" }] }),
    )
    .await;
    assert_eq!(no_data["error"]["code"], -32602, "{no_data}");

    // Revoked: refused at once. The pair withdrawn: refused for the pair.
    let trust = GatewayTrust::new(app.db().clone(), engine::Clock::system());
    let second = trust.issue_peer_secret(&admin(), PEER).await.unwrap();
    assert_eq!(trust.revoke_peer_secrets(&admin(), PEER).await.unwrap(), 2);
    let revoked = send_message(&app, Some(&secret), message("m-f", "4821")).await;
    assert!(
        revoked["error"]["message"]
            .as_str()
            .unwrap()
            .contains("revoked"),
        "{revoked}"
    );
    let third = trust.issue_peer_secret(&admin(), PEER).await.unwrap();
    assert_ne!(second, third);
    trust
        .withdraw_unsigned(&admin(), PEER, "returns", "returns.inspection")
        .await
        .unwrap();
    let withdrawn = send_message(&app, Some(&third), message("m-g", "4821")).await;
    assert!(
        withdrawn["error"]["message"]
            .as_str()
            .unwrap()
            .contains("may send no task here without signatures"),
        "{withdrawn}"
    );
    // Nothing of it reached the inbox; every refusal is journaled.
    assert!(
        inbox::page_of_sender(
            app.db().conn(),
            PEER,
            &inbox::SenderFilter::default(),
            None,
            10
        )
        .await
        .unwrap()
        .is_empty()
    );
}

#[tokio::test]
async fn a_plain_peers_task_this_group_has_no_record_for_is_answered_unknown_and_never_passed_on() {
    let master = gateway::MasterKey::generate();
    let (app, secret) = returns_with_plain_peer(|s| {
        s.gateway_master_key = Some(master.into());
        s.gateway_forward = Some("returns.inspection=warehouse".into());
    })
    .await;
    let answered = send_message(&app, Some(&secret), message("m-unknown", "4823")).await;
    let id = answered["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{answered}"));
    let done = final_state(&app, id).await;
    assert_eq!(done.state, "completed", "{done:?}");
    assert_eq!(done.result.as_ref().unwrap()["condition"], "unknown");
    assert!(
        outbox::recent(app.db().conn(), 10)
            .await
            .unwrap()
            .is_empty(),
        "an unsigned task makes no child"
    );
}

#[tokio::test]
async fn one_plain_message_delivered_twice_at_once_makes_one_task_and_both_get_it() {
    let (app, secret) = returns_with_plain_peer(|_| {}).await;
    let (first, second) = tokio::join!(
        send_message(&app, Some(&secret), message("twice", "4821")),
        send_message(&app, Some(&secret), message("twice", "4821")),
    );
    let id = first["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{first}"));
    assert_eq!(second["result"]["task"]["id"], id, "{second}");
    let filter = storage::journal::JournalFilter {
        stream: Some(storage::journal::GATEWAY_STREAM.to_owned()),
        ..storage::journal::JournalFilter::default()
    };
    let (refusals, _) = storage::journal::list(app.db().conn(), &filter, 0, 10)
        .await
        .unwrap();
    assert!(refusals.is_empty(), "nothing refused: {refusals:?}");
}
