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

fn support_key_ref() -> KeyRef {
    KeyRef {
        group: name("support"),
        key_id: KeyId::parse("gateway").unwrap(),
        version: 1,
    }
}

/// Pins `key` (version 1 of its group's gateway key) at the app, as an
/// admin would.
async fn pin(app: &TestApp, key: &SigningKey) {
    trust::pin_key(
        app.db().conn(),
        PinnedKeyRow {
            group_name: key.key_ref().group.to_string(),
            key_id: key.key_ref().key_id.to_string(),
            version: 1,
            public_key: URL_SAFE_NO_PAD.encode(key.public_key()),
            valid_from: Utc::now() - Duration::days(1),
            usable_until: None,
            pinned_by: "usr_admin".into(),
            pinned_at: Utc::now(),
        },
    )
    .await
    .unwrap();
}

/// The returns group, trusting the support group's key for inspections.
async fn returns_group() -> (TestApp, SigningKey) {
    returns_group_trusting(SigningKey::generate(support_key_ref()).unwrap()).await
}

async fn returns_group_trusting(support: SigningKey) -> (TestApp, SigningKey) {
    let app = TestApp::spawn_with(|s| s.gateway_group = Some("returns".into())).await;
    trust(&app, &support).await;
    (app, support)
}

/// The app pins `peer`'s key and takes its group's inspections.
async fn trust(app: &TestApp, peer: &SigningKey) {
    pin(app, peer).await;
    trust::allow_pair(
        app.db().conn(),
        PairRow {
            from_group: peer.key_ref().group.to_string(),
            to_group: "returns".into(),
            kind: "returns.inspection".into(),
            allowed_by: "usr_admin".into(),
            allowed_at: Utc::now(),
        },
    )
    .await
    .unwrap();
}

fn inspection(support: &SigningKey, key: &str, order_id: &str) -> Value {
    let from = support.key_ref().group.clone();
    let task_key = TaskKey::parse(key).unwrap();
    let envelope = TaskEnvelope {
        v: 1,
        task_key: task_key.clone(),
        kind: TaskKind::parse("returns.inspection").unwrap(),
        input: json!({ "order_id": order_id }),
        from: from.clone(),
        to: name("returns"),
        root_key: task_key,
        parent_key: None,
        route: vec![from],
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

/// Posts a JSON-RPC body with `A2A-Version: 1.0` and, when given, a peer's
/// bearer token; the HTTP status and the JSON-RPC answer.
async fn rpc_as(app: &TestApp, token: Option<&str>, body: &[u8]) -> (StatusCode, Value) {
    let mut request = app
        .bare_client()
        .post(app.url("/a2a"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_vec());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status(), response.json().await.unwrap())
}

/// As [`rpc_as`] without a token; the HTTP status must be 200 whatever the
/// answer.
async fn rpc(app: &TestApp, body: &[u8]) -> Value {
    let (status, answer) = rpc_as(app, None, body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

async fn call(app: &TestApp, request: &Value) -> Value {
    rpc(app, request.to_string().as_bytes()).await
}

/// A bearer token `key`'s group signs to call the returns group.
fn token(key: &SigningKey) -> String {
    gateway::peer_token::issue(key, &name("returns"), Utc::now(), 60)
}

fn get_task(id: &Value) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": { "id": id } })
        .to_string()
        .into_bytes()
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

    let (status, got) = rpc_as(&app, Some(&token(&support)), &get_task(&task["id"])).await;
    assert_eq!(status, StatusCode::OK, "{got}");
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
    let detail = &answer["error"]["data"][0];
    assert_eq!(detail["reason"], "INVALID_PARAMS");
    assert_eq!(detail["metadata"]["countersignReason"], "bad_signature");
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
    let cases: [(&[u8], i64); 6] = [
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
            -32008,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}"#,
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
    assert_eq!(
        card["securitySchemes"]["countersignPeer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
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

/// The official A2A Python SDK (installed by `scripts/setup.sh --tests` in
/// `.venv/a2a`) as the support group: `interop/a2a_peer.py` signs with its
/// own JCS and Ed25519 libraries and sends through the SDK's client.
async fn a2a_sdk_peer(app: &TestApp, seed: &[u8; 32], task_key: &str, flags: &[&str]) -> Value {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".venv/a2a/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup.sh --tests to install a2a-sdk",
        python.display()
    );
    let mut command = tokio::process::Command::new(python);
    command.arg(root.join("interop/a2a_peer.py")).args([
        "send",
        &app.address,
        &hex::encode(seed),
        task_key,
        "4821",
    ]);
    command.args(flags);
    let output = command.output().await.unwrap();
    assert!(
        output.status.success(),
        "the a2a-sdk peer failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn a_peer_built_on_the_official_a2a_sdk_signs_its_own_envelope_and_its_task_is_accepted() {
    let seed = [7u8; 32];
    let (app, _) =
        returns_group_trusting(SigningKey::from_seed(support_key_ref(), &seed).unwrap()).await;
    let answer = a2a_sdk_peer(&app, &seed, "support:py-1", &[]).await;
    let sent = &answer["sent"][0]["task"];
    assert_eq!(sent["status"]["state"], "TASK_STATE_SUBMITTED", "{answer}");
    assert_eq!(answer["got"]["id"], sent["id"], "{answer}");
    assert_eq!(answer["got"]["contextId"], "support:py-1");
    let stored = storage::gateway::inbox::find(app.db().conn(), "support", "support:py-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.id, sent["id"].as_str().unwrap());
    // The SDK's ListTasks finds it in its chain.
    assert_eq!(answer["listed"]["totalSize"], 1, "{answer}");
    assert_eq!(answer["listed"]["tasks"][0]["id"], sent["id"], "{answer}");
}

#[tokio::test]
async fn the_official_a2a_sdk_streams_its_task_to_the_answer_when_the_card_offers_streaming() {
    let seed = [9u8; 32];
    let (app, _) =
        returns_group_trusting(SigningKey::from_seed(support_key_ref(), &seed).unwrap()).await;
    let answer = a2a_sdk_peer(&app, &seed, "support:py-3", &["--stream"]).await;
    let events = answer["sent"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(events[0]["task"]["contextId"], "support:py-3", "{answer}");
    let last = &events.last().unwrap()["statusUpdate"];
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert!(
        events.iter().any(
            |event| event["artifactUpdate"]["artifact"]["parts"][0]["data"]["condition"]
                == "unknown"
        ),
        "{answer}"
    );
}

#[tokio::test]
async fn a_tampered_envelope_from_the_official_a2a_sdk_is_refused_with_a_reason_it_can_read() {
    let seed = [7u8; 32];
    let (app, _) =
        returns_group_trusting(SigningKey::from_seed(support_key_ref(), &seed).unwrap()).await;
    let answer = a2a_sdk_peer(&app, &seed, "support:py-2", &["--tamper"]).await;
    let error = &answer["error"];
    assert_eq!(error["type"], "InvalidParamsError", "{answer}");
    assert_eq!(
        error["data"]["countersignReason"], "bad_signature",
        "{answer}"
    );
}

#[tokio::test]
async fn with_a_master_key_the_card_publishes_the_groups_own_key_for_peers_to_pin() {
    let master = gateway::MasterKey::generate();
    let app = TestApp::spawn_with(|s| {
        s.gateway_group = Some("returns".into());
        s.gateway_master_key = Some(master.clone().into());
    })
    .await;
    let card: Value = app
        .get("/.well-known/agent-card.json")
        .await
        .json()
        .await
        .unwrap();
    let keys = &card["capabilities"]["extensions"][0]["params"]["keys"];
    assert_eq!(keys[0]["kid"], "returns/gateway/v1", "{card}");
    assert_eq!(keys[0]["usableUntil"], Value::Null);
    let published = app
        .settings
        .own_keys(app.db(), engine::Clock::system())
        .unwrap()
        .published()
        .await
        .unwrap();
    assert_eq!(
        keys[0]["publicKey"],
        URL_SAFE_NO_PAD.encode(published[0].1.public_key)
    );
}

#[tokio::test]
async fn only_the_group_that_sent_a_task_reads_it_and_only_with_a_token_its_key_signed() {
    let (app, support) = returns_group().await;
    let sent = call(
        &app,
        &send_message(inspection(&support, "support:t1", "4821")),
    )
    .await;
    let id = sent["result"]["task"]["id"].clone();

    let (status, answer) = rpc_as(&app, None, &get_task(&id)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("authentication required")
    );

    // One signature byte changed (a character well inside the signature,
    // not its padding bits).
    let genuine = token(&support);
    let at = genuine.len() - 20;
    let flipped = if &genuine[at..=at] == "A" { "B" } else { "A" };
    let forged = format!("{}{flipped}{}", &genuine[..at], &genuine[at + 1..]);
    let (status, _) = rpc_as(&app, Some(&forged), &get_task(&id)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Billing is a pinned peer too, but the task is support's: to billing
    // it does not exist.
    let billing = SigningKey::generate(KeyRef {
        group: name("billing"),
        key_id: KeyId::parse("gateway").unwrap(),
        version: 1,
    })
    .unwrap();
    pin(&app, &billing).await;
    let (status, answer) = rpc_as(&app, Some(&token(&billing)), &get_task(&id)).await;
    assert_eq!(
        (status, &answer["error"]["code"]),
        (StatusCode::OK, &json!(-32001)),
        "{answer}"
    );
    let (_, unknown) = rpc_as(&app, Some(&token(&support)), &get_task(&json!("gtk_none"))).await;
    assert_eq!(unknown["error"]["code"], -32001);

    // Canceling takes the same proof: none is 401, billing finds nothing,
    // and support's own cancel either cancels it or, answered already,
    // says it can no longer be canceled.
    let cancel =
        json!({ "jsonrpc": "2.0", "id": 8, "method": "CancelTask", "params": { "id": id } })
            .to_string()
            .into_bytes();
    let (status, _) = rpc_as(&app, None, &cancel).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (_, answer) = rpc_as(&app, Some(&token(&billing)), &cancel).await;
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let (_, answer) = rpc_as(&app, Some(&token(&support)), &cancel).await;
    let canceled = answer["result"]["status"]["state"] == "TASK_STATE_CANCELED";
    let too_late = answer["error"]["code"] == -32002;
    assert!(canceled || too_late, "{answer}");
}

fn list_tasks(params: Value) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": 9, "method": "ListTasks", "params": params })
        .to_string()
        .into_bytes()
}

#[tokio::test]
async fn a_peer_lists_only_its_own_tasks_a_page_at_a_time_and_filtered_as_it_asks() {
    // No lanes run: every task stays submitted while it is listed.
    let app = TestApp::spawn_with(|s| {
        s.gateway_group = Some("returns".into());
        s.work_runner = false;
    })
    .await;
    let support = SigningKey::generate(support_key_ref()).unwrap();
    let billing = SigningKey::generate(KeyRef {
        group: name("billing"),
        key_id: KeyId::parse("gateway").unwrap(),
        version: 1,
    })
    .unwrap();
    trust(&app, &support).await;
    trust(&app, &billing).await;
    let mut sent = Vec::new();
    for (key, order) in [
        ("support:l1", "4821"),
        ("support:l2", "4822"),
        ("support:l3", "4823"),
    ] {
        let answer = call(&app, &send_message(inspection(&support, key, order))).await;
        sent.push(answer["result"]["task"]["id"].as_str().unwrap().to_owned());
    }
    call(
        &app,
        &send_message(inspection(&billing, "billing:l1", "4821")),
    )
    .await;

    let as_support = |params: Value| {
        let app = &app;
        let token = token(&support);
        async move { rpc_as(app, Some(&token), &list_tasks(params)).await.1 }
    };
    let first = as_support(json!({ "pageSize": 2 })).await;
    let first = &first["result"];
    assert_eq!(first["tasks"].as_array().unwrap().len(), 2, "{first}");
    assert_eq!(
        (&first["pageSize"], &first["totalSize"]),
        (&json!(2), &json!(3))
    );
    let next = first["nextPageToken"].as_str().unwrap();
    assert!(!next.is_empty());
    let second = as_support(json!({ "pageSize": 2, "pageToken": next })).await;
    let second = &second["result"];
    assert_eq!(second["tasks"].as_array().unwrap().len(), 1, "{second}");
    assert_eq!(second["nextPageToken"], "");
    let mut listed: Vec<String> = first["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["tasks"].as_array().unwrap())
        .map(|task| task["id"].as_str().unwrap().to_owned())
        .collect();
    listed.sort();
    sent.sort();
    assert_eq!(
        listed, sent,
        "every task of support's once, none of billing's"
    );

    // Billing sees its one task only.
    let (_, billings) = rpc_as(&app, Some(&token(&billing)), &list_tasks(json!({}))).await;
    assert_eq!(billings["result"]["totalSize"], 1, "{billings}");
    assert_eq!(
        billings["result"]["tasks"][0]["metadata"]["countersign/taskKey"],
        "billing:l1"
    );

    // Filters: one chain, a state, a time.
    let chain = as_support(json!({ "contextId": "support:l2" })).await;
    assert_eq!(chain["result"]["totalSize"], 1, "{chain}");
    assert_eq!(chain["result"]["tasks"][0]["contextId"], "support:l2");
    let done = as_support(json!({ "status": "TASK_STATE_COMPLETED" })).await;
    assert_eq!(done["result"]["totalSize"], 0, "{done}");
    let open = as_support(json!({ "status": "TASK_STATE_SUBMITTED" })).await;
    assert_eq!(open["result"]["totalSize"], 3, "{open}");
    let later = (Utc::now() + Duration::minutes(1)).to_rfc3339();
    let none = as_support(json!({ "statusTimestampAfter": later })).await;
    assert_eq!(none["result"]["totalSize"], 0, "{none}");

    // Mistakes get the error that names them; no proof is 401.
    for (params, says) in [
        (
            json!({ "pageSize": 0 }),
            "pageSize must be between 1 and 100",
        ),
        (
            json!({ "pageSize": 101 }),
            "pageSize must be between 1 and 100",
        ),
        (
            json!({ "pageToken": "forged" }),
            "pageToken was not made by this group",
        ),
        (
            json!({ "status": "DONE" }),
            "status DONE is not a task state",
        ),
        (
            json!({ "statusTimestampAfter": "yesterday" }),
            "statusTimestampAfter must be an RFC 3339 time",
        ),
        (
            json!({ "includeArtifacts": "yes" }),
            "includeArtifacts must be a boolean",
        ),
    ] {
        let answer = as_support(params.clone()).await;
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
        assert!(
            answer["error"]["message"].as_str().unwrap().contains(says),
            "{params}: {answer}"
        );
    }
    let (status, _) = rpc_as(&app, None, &list_tasks(json!({}))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

fn streaming(method: &str, params: Value) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": "s-1", "method": method, "params": params })
        .to_string()
        .into_bytes()
}

/// The JSON-RPC responses of a server-sent event stream, in order.
fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| serde_json::from_str(data.trim()).unwrap())
        .collect()
}

#[tokio::test]
async fn a_peer_that_subscribes_to_its_task_is_told_each_step_until_it_ends() {
    // No lanes run: the task waits, submitted, until support cancels it.
    let app = TestApp::spawn_with(|s| {
        s.gateway_group = Some("returns".into());
        s.work_runner = false;
    })
    .await;
    let support = SigningKey::generate(support_key_ref()).unwrap();
    trust(&app, &support).await;
    let sent = call(
        &app,
        &send_message(inspection(&support, "support:s1", "4821")),
    )
    .await;
    let id = sent["result"]["task"]["id"].clone();

    let mut stream = app
        .bare_client()
        .post(app.url("/a2a"))
        .header("A2A-Version", "1.0")
        .bearer_auth(token(&support))
        .body(streaming("SubscribeToTask", json!({ "id": id })))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert!(
        stream.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    // The task as it is comes first.
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = stream
            .chunk()
            .await
            .unwrap()
            .expect("the stream ended early");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let first = &events(&text)[0];
    assert_eq!(first["id"], "s-1");
    assert_eq!(first["result"]["task"]["id"], id);
    assert_eq!(
        first["result"]["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED"
    );

    let cancel =
        json!({ "jsonrpc": "2.0", "id": 8, "method": "CancelTask", "params": { "id": id } });
    let (_, canceled) = rpc_as(&app, Some(&token(&support)), cancel.to_string().as_bytes()).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED");

    // Then the cancel, and the stream ends with the task.
    while let Some(chunk) = stream.chunk().await.unwrap() {
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let all = events(&text);
    let last = all.last().unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(last["result"]["statusUpdate"]["taskId"], id);
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );

    // An ended task has nothing more to say: an error at once, not a stream.
    let (status, ended) = rpc_as(
        &app,
        Some(&token(&support)),
        &streaming("SubscribeToTask", json!({ "id": id })),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ended["error"]["code"], -32004, "{ended}");
    assert!(
        ended["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is canceled: it will not change again"),
        "{ended}"
    );
    // Without the sender's proof there is nothing to subscribe to.
    let (status, _) = rpc_as(
        &app,
        None,
        &streaming("SubscribeToTask", json!({ "id": id })),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_task_sent_streaming_is_followed_to_its_answer_in_one_response() {
    let (app, support) = returns_group().await;
    engine::demo::seed_returned_parcels(app.db(), Utc::now())
        .await
        .unwrap();
    let body = send_message(inspection(&support, "support:s2", "4821"));
    let mut request = body.clone();
    request["method"] = json!("SendStreamingMessage");
    let response = app
        .bare_client()
        .post(app.url("/a2a"))
        .header("A2A-Version", "1.0")
        .body(request.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let all = events(&response.text().await.unwrap());
    let first = &all[0]["result"]["task"];
    assert_eq!(first["contextId"], "support:s2", "{all:?}");
    let result = all
        .iter()
        .find_map(|event| event["result"].get("artifactUpdate"))
        .unwrap_or_else(|| panic!("no result in {all:?}"));
    assert_eq!(
        result["artifact"]["parts"][0]["data"]["condition"],
        "sealed"
    );
    let last = &all.last().unwrap()["result"]["statusUpdate"];
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED", "{all:?}");
}

/// A plain A2A server built on the official `a2a-sdk`
/// (`interop/a2a_server.py`): it knows nothing of signed tasks and answers
/// `returns.inspection` from the data part, unsigned. Stopped when dropped.
async fn a2a_sdk_server() -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".venv/a2a/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup.sh --tests to install a2a-sdk",
        python.display()
    );
    // A port free a moment ago; the server binds it at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(python)
        .arg(root.join("interop/a2a_server.py"))
        .arg(port.to_string())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
        .await
        .expect("the a2a-sdk server did not start in 30 s")
        .unwrap();
    assert_eq!(ready.as_deref(), Some("listening"));
    (child, format!("http://127.0.0.1:{port}"))
}

#[tokio::test]
async fn a_group_asks_a_plain_a2a_sdk_agent_and_takes_its_answer_unsigned_only_where_an_admin_allowed_it()
 {
    let (_server, url) = a2a_sdk_server().await;
    let support = crate::groups::group("support", None).await;
    storage::gateway::peers::set(
        support.db().conn(),
        storage::gateway::peers::Peer {
            group_name: "warehouse".into(),
            url: format!("{url}/a2a"),
            updated_by: "usr_admin".into(),
            updated_at: Utc::now(),
        },
    )
    .await
    .unwrap();
    let sender = crate::groups::sender(&support);
    let mut ask = crate::groups::inspection("4821");
    ask.to = name("warehouse");

    // Not allowed unsigned: the answer is not taken, and the reason says
    // what an admin could do.
    let refused = crate::groups::answered(&sender, &sender.send(ask.clone()).await.unwrap()).await;
    assert_eq!(refused.state, "failed", "{refused:?}");
    assert!(
        refused
            .error
            .as_deref()
            .unwrap()
            .contains("may allow support → warehouse: returns.inspection without signatures"),
        "{refused:?}"
    );

    let admin = engine::Actor {
        user_id: "usr_admin".into(),
        name: "admin".into(),
        roles: domain::RoleSet::new([domain::Role::Admin]),
        widget_session: None,
    };
    let trust = engine::gateway::GatewayTrust::new(support.db().clone(), engine::Clock::system());
    assert!(
        trust
            .allow_unsigned(&admin, "support", "warehouse", "returns.inspection")
            .await
            .unwrap()
    );
    let task = crate::groups::answered(&sender, &sender.send(ask).await.unwrap()).await;
    assert_eq!(task.state, "completed", "{task:?}");
    let result = task.result.clone().unwrap();
    assert_eq!(result["condition"], "sealed");
    assert!(result["note"].as_str().unwrap().contains("warehouse dock"));
    // Marked as what it is: no signer, nothing verified.
    assert!(task.unsigned);
    assert_eq!(task.answer_signer, None);
    let kinds = crate::groups::journal_kinds(&support, storage::journal::SETTINGS_STREAM).await;
    assert!(
        kinds.contains(&"gateway_unsigned_allowed".to_owned()),
        "{kinds:?}"
    );
}
