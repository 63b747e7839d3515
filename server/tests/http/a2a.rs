//! Other agent groups reach this one over A2A 1.0 (JSON-RPC): the real
//! server, real Ed25519 signatures, the keys and pairs an admin trusted.
//! What a peer can send wrongly gets A2A's error, never a 500.

use crate::support::TestApp;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{Duration, Utc};
use gateway::jws::sign;
use gateway::{Budget, GroupName, KeyId, KeyRef, SigningKey, TaskEnvelope, TaskKey, TaskKind};
use reqwest::StatusCode;
use serde_json::{Value, json};
use server::web::a2a::EXTENSION;
use storage::gateway::trust::{self, PairRow, PinnedKeyRow};

fn name(group: &str) -> GroupName {
    GroupName::parse(group).unwrap()
}

/// The returns group, trusting the support group's key for inspections.
async fn returns_group() -> (TestApp, SigningKey) {
    let app = TestApp::spawn_with(|s| s.gateway_group = Some("returns".into())).await;
    let support = SigningKey::generate(KeyRef {
        group: name("support"),
        key_id: KeyId::parse("gateway").unwrap(),
        version: 1,
    })
    .unwrap();
    let db = app.db().conn();
    trust::pin_key(
        db,
        PinnedKeyRow {
            group_name: "support".into(),
            key_id: "gateway".into(),
            version: 1,
            public_key: URL_SAFE_NO_PAD.encode(support.public_key()),
            valid_from: Utc::now() - Duration::days(1),
            usable_until: None,
            pinned_by: "usr_admin".into(),
            pinned_at: Utc::now(),
        },
    )
    .await
    .unwrap();
    trust::allow_pair(
        db,
        PairRow {
            from_group: "support".into(),
            to_group: "returns".into(),
            kind: "returns.inspection".into(),
            allowed_by: "usr_admin".into(),
            allowed_at: Utc::now(),
        },
    )
    .await
    .unwrap();
    (app, support)
}

fn inspection(support: &SigningKey, key: &str, order_id: &str) -> Value {
    let task_key = TaskKey::parse(key).unwrap();
    let envelope = TaskEnvelope {
        v: 1,
        task_key: task_key.clone(),
        kind: TaskKind::parse("returns.inspection").unwrap(),
        input: json!({ "order_id": order_id }),
        from: name("support"),
        to: name("returns"),
        root_key: task_key,
        parent_key: None,
        route: vec![name("support")],
        depth: 0,
        budget: Budget {
            model_calls: 4,
            steps: 8,
            tokens: 8_000,
            money: None,
            deadline: Utc::now() + Duration::minutes(10),
        },
        parent_remaining: None,
        created: Utc::now(),
        nonce: format!("nonce-{key}"),
        signer: support.key_ref().clone(),
        parent: None,
    };
    serde_json::to_value(sign(envelope, support).unwrap()).unwrap()
}

fn send_message(envelope: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": "req-1",
        "method": "SendMessage",
        "params": { "message": {
            "messageId": "msg-1",
            "role": "ROLE_USER",
            "parts": [{ "data": envelope["envelope"]["input"].clone() }],
            "extensions": [EXTENSION],
            "metadata": { EXTENSION: envelope },
        } },
    })
}

/// Posts a JSON-RPC body with `A2A-Version: 1.0`; the HTTP status must be
/// 200 whatever the answer.
async fn rpc(app: &TestApp, body: &[u8]) -> Value {
    let response = app
        .bare_client()
        .post(app.url("/a2a"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

async fn call(app: &TestApp, request: &Value) -> Value {
    rpc(app, request.to_string().as_bytes()).await
}

#[tokio::test]
async fn a_task_resent_after_a_lost_answer_returns_the_task_it_created_and_get_task_finds_it() {
    let (app, support) = returns_group().await;
    let request = send_message(inspection(&support, "support:t1", "4821"));
    let first = call(&app, &request).await;
    let task = &first["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_SUBMITTED", "{first}");
    assert_eq!(task["metadata"]["countersign/taskKey"], "support:t1");
    let again = call(&app, &request).await;
    assert_eq!(again["result"]["task"]["id"], task["id"], "{again}");

    let got = call(
        &app,
        &json!({ "jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": { "id": task["id"] } }),
    )
    .await;
    assert_eq!(got["id"], 7);
    assert_eq!(got["result"]["id"], task["id"]);
    assert_eq!(got["result"]["contextId"], "support:t1");
}

#[tokio::test]
async fn an_envelope_changed_on_the_way_is_refused_with_its_reason_and_no_task() {
    let (app, support) = returns_group().await;
    let mut envelope = inspection(&support, "support:t1", "4821");
    envelope["envelope"]["input"]["order_id"] = json!("4822");
    let answer = call(&app, &send_message(envelope)).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["reason"], "bad_signature");
    assert!(
        storage::gateway::inbox::find(app.db().conn(), "support", "support:t1")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_client_that_does_not_say_it_speaks_a2a_1_0_is_told_which_version_to_send() {
    let (app, support) = returns_group().await;
    let body = send_message(inspection(&support, "support:t1", "4821"));
    for version in [None, Some("0.3"), Some("2.0")] {
        let mut request = app.bare_client().post(app.url("/a2a")).json(&body);
        if let Some(version) = version {
            request = request.header("A2A-Version", version);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        assert_eq!(answer["error"]["code"], -32009, "{version:?}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("A2A-Version: 1.0")
        );
    }
}

#[tokio::test]
async fn malformed_requests_get_the_json_rpc_error_that_names_the_mistake() {
    let (app, _) = returns_group().await;
    let cases: [(&[u8], i64); 7] = [
        (b"{not json", -32700),
        (
            br#"{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{}}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","method":"GetTask","params":{}}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"Teleport","params":{}}"#,
            -32601,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[]}}}"#,
            -32602,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"gtk_none"}}"#,
            -32001,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"gtk_none"}}"#,
            -32004,
        ),
    ];
    for (body, code) in cases {
        let answer = rpc(&app, body).await;
        assert_eq!(
            answer["error"]["code"],
            code,
            "{}: {answer}",
            String::from_utf8_lossy(body)
        );
    }
}

#[tokio::test]
async fn the_agent_card_names_the_group_its_skills_and_the_signed_task_extension() {
    let (app, _) = returns_group().await;
    let card: Value = app
        .get("/.well-known/agent-card.json")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(card["name"], "Countersign returns");
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(card["capabilities"]["extensions"][0]["uri"], EXTENSION);
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["returns.inspection"]);
}

#[tokio::test]
async fn with_the_gateway_off_no_peer_can_reach_it() {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.get("/.well-known/agent-card.json").await.status(),
        StatusCode::NOT_FOUND
    );
    let response = app
        .bare_client()
        .post(app.url("/a2a"))
        .header("A2A-Version", "1.0")
        .body("{}")
        .send()
        .await
        .unwrap();
    // No A2A route: the POST meets the pages' CSRF check like any other
    // request without a session, and is turned away.
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}
