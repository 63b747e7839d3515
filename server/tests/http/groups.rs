//! Two agent groups, each a real server with its own database, talking over
//! real HTTP: the support group sends the returns group a signed
//! `returns.inspection` task through its outbox; the returns group admits
//! it, answers it from its parcel records on its gateway lane, and the
//! support group's relay follows it to the answer.

use crate::support::TestApp;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{Duration, Utc};
use engine::gateway::{Keys, OutboundTask, OutboxTaskView, Sender};
use gateway::{Budget, GroupName, TaskKind};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use storage::gateway::{inbox, peers, trust};

pub(crate) fn name(group: &str) -> GroupName {
    GroupName::parse(group).unwrap()
}

pub(crate) async fn group(name: &str, listen: Option<std::net::SocketAddr>) -> TestApp {
    let master = gateway::MasterKey::generate();
    TestApp::spawn_with(|s| {
        s.gateway_group = Some(name.into());
        s.gateway_master_key = Some(master.into());
        if let Some(listen) = listen {
            s.listen = listen;
        }
    })
    .await
}

pub(crate) fn sender(app: &TestApp) -> Sender {
    app.engine.gateway.as_ref().unwrap().sender.clone().unwrap()
}

/// Pins `key` at `app`, as its admin would (from the peer's card).
pub(crate) async fn pin(app: &TestApp, key: &gateway::KeyRef, pinned: &gateway::PinnedKey) {
    pin_db(app.db(), key, pinned).await;
}

pub(crate) async fn pin_db(
    db: &storage::Database,
    key: &gateway::KeyRef,
    pinned: &gateway::PinnedKey,
) {
    trust::pin_key(
        db.conn(),
        trust::PinnedKeyRow {
            group_name: key.group.to_string(),
            key_id: key.key_id.to_string(),
            version: i32::try_from(key.version).unwrap(),
            public_key: URL_SAFE_NO_PAD.encode(pinned.public_key),
            valid_from: pinned.valid_from,
            usable_until: pinned.usable_until,
            pinned_by: "usr_admin".into(),
            pinned_at: Utc::now(),
        },
    )
    .await
    .unwrap();
}

/// The broker of `app`'s own gateway keys (the group must have them).
pub(crate) fn own_keys(app: &TestApp) -> Keys {
    app.engine
        .gateway
        .as_ref()
        .and_then(|parts| parts.own_keys.clone())
        .expect("a gateway group with its own keys")
}

/// `at` pins the current keys of `of` (from its published versions).
pub(crate) async fn pin_keys_of(at: &TestApp, of: &TestApp) {
    for (key, pinned) in own_keys(of).published().await.unwrap() {
        pin(at, &key, &pinned).await;
    }
}

/// A raw A2A JSON-RPC `SendMessage` of `message` to `app`, with `bearer`
/// if any: what a peer sends, built by hand so tests can send what no
/// well-behaved sender would.
pub(crate) async fn send_message(
    app: &TestApp,
    bearer: Option<&str>,
    message: serde_json::Value,
) -> serde_json::Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": message } });
    let mut request = app
        .bare_client()
        .post(app.url("/a2a"))
        .header("A2A-Version", "1.0")
        .json(&body);
    if let Some(bearer) = bearer {
        request = request.bearer_auth(bearer);
    }
    request.send().await.unwrap().json().await.unwrap()
}

/// The two groups pin each other's keys (the returns group verifies the
/// tasks, the support group the answers); the returns group allows the
/// support group's inspections when `allow`.
pub(crate) async fn trust_each_other(returns: &TestApp, support: &TestApp, allow: bool) {
    pin_keys_of(returns, support).await;
    pin_keys_of(support, returns).await;
    if allow {
        allow_inspections(returns.db()).await;
    }
}

/// The returns group allows support's inspections, as its admin would.
async fn allow_inspections(db: &storage::Database) {
    trust::allow_pair(
        db.conn(),
        trust::PairRow {
            from_group: "support".into(),
            to_group: "returns".into(),
            kind: "returns.inspection".into(),
            allowed_by: "usr_admin".into(),
            allowed_at: Utc::now(),
        },
    )
    .await
    .unwrap();
}

/// The support group reaches the returns group at `url`.
pub(crate) async fn reach(support: &TestApp, url: &str) {
    peers::set(
        support.db().conn(),
        peers::Peer {
            group_name: "returns".into(),
            url: url.to_owned(),
            updated_by: "usr_admin".into(),
            updated_at: Utc::now(),
        },
    )
    .await
    .unwrap();
}

pub(crate) fn inspection(order_id: &str) -> OutboundTask {
    OutboundTask {
        to: name("returns"),
        kind: TaskKind::parse("returns.inspection").unwrap(),
        input: json!({ "order_id": order_id }),
        budget: Budget {
            model_calls: 2,
            steps: 4,
            tokens: 4_000,
            money: None,
            deadline: Utc::now() + Duration::minutes(2),
        },
        subject: Some("cnv_test".into()),
    }
}

/// Waits (woken by the relay) for the task's final state; the bound only
/// turns a hang into a failure.
pub(crate) async fn answered(sender: &Sender, task: &OutboxTaskView) -> OutboxTaskView {
    let task = sender
        .wait_for(&task.id, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    assert!(task.is_final(), "no final answer in 30 s: {task:?}");
    task
}

pub(crate) async fn journal_kinds(app: &TestApp, stream: &str) -> Vec<String> {
    let filter = storage::journal::JournalFilter {
        stream: Some(stream.to_owned()),
        ..storage::journal::JournalFilter::default()
    };
    storage::journal::list(app.db().conn(), &filter, 0, 100)
        .await
        .unwrap()
        .0
        .into_iter()
        .map(|event| event.kind)
        .collect()
}

#[tokio::test]
async fn an_inspection_asked_of_the_returns_group_comes_back_with_what_its_desk_recorded() {
    let support = group("support", None).await;
    let returns = group("returns", None).await;
    engine::demo::seed_returned_parcels(returns.db(), Utc::now())
        .await
        .unwrap();
    trust_each_other(&returns, &support, true).await;
    reach(&support, &returns.url("/a2a")).await;

    let sender = sender(&support);
    let sent = sender.send(inspection("4821")).await.unwrap();
    assert_eq!(sent.state, "queued");
    assert_eq!(sent.signer, "support/gateway/v1");
    let task = answered(&sender, &sent).await;
    assert_eq!(task.state, "completed", "{task:?}");
    let result = task.result.unwrap();
    assert_eq!(result["condition"], "sealed");
    assert!(result["note"].as_str().unwrap().contains("seal intact"));
    // Taken from an answer the returns group signed, verified here.
    assert_eq!(task.answer_signer.as_deref(), Some("returns/gateway/v1"));

    // The returns group holds one task, answered, with its steps journaled.
    let remote = task.remote_task_id.unwrap();
    let held = inbox::get(returns.db().conn(), &remote)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (held.state.as_str(), held.sender_group.as_str()),
        ("completed", "support")
    );
    assert_eq!(held.task_key, task.task_key);
    assert_eq!(
        journal_kinds(&returns, &storage::journal::task_stream(&remote)).await,
        [
            "gateway.task_received",
            "gateway.task_working",
            "gateway.task_completed"
        ]
    );
    // The support group journaled sending it and its answer.
    let kinds = journal_kinds(&support, &storage::journal::task_stream(&task.id)).await;
    assert_eq!(kinds.first().map(String::as_str), Some("gateway.task_sent"));
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("gateway.task_completed")
    );
}

#[tokio::test]
async fn an_order_without_a_returned_parcel_is_answered_unknown_not_guessed() {
    let support = group("support", None).await;
    let returns = group("returns", None).await;
    trust_each_other(&returns, &support, true).await;
    reach(&support, &returns.url("/a2a")).await;

    let sender = sender(&support);
    let task = answered(&sender, &sender.send(inspection("4823")).await.unwrap()).await;
    assert_eq!(task.state, "completed", "{task:?}");
    let result = task.result.unwrap();
    assert_eq!(result["condition"], "unknown");
    assert_eq!(result["received_at"], serde_json::Value::Null);
}

#[tokio::test]
async fn a_task_sent_while_the_returns_group_is_down_is_delivered_once_it_is_back() {
    // A port nobody listens on yet: the returns group starts there later.
    let address = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let support = group("support", None).await;
    reach(&support, &format!("http://{address}/a2a")).await;
    let mut finished = support.runner.as_ref().unwrap().finished();

    let sender = sender(&support);
    let sent = sender.send(inspection("4821")).await.unwrap();
    // The first delivery fails (connection refused) and is queued again.
    let attempt = first_delivery(&mut finished).await;
    assert_eq!(attempt.state, "queued", "{attempt:?}");
    assert!(attempt.error.unwrap().contains("unknown"));
    assert_eq!(
        sender.task(&sent.id).await.unwrap().unwrap().state,
        "queued"
    );

    // It comes back with what it had before it went down: its parcels,
    // support's key pinned and support's inspections allowed.
    let support_keys = own_keys(&support);
    let master = gateway::MasterKey::generate();
    let returns = TestApp::spawn_prepared(
        |s| {
            s.gateway_group = Some("returns".into());
            s.gateway_master_key = Some(master.into());
            s.listen = address;
        },
        |db| async move {
            engine::demo::seed_returned_parcels(&db, Utc::now())
                .await
                .unwrap();
            for (key, pinned) in support_keys.published().await.unwrap() {
                pin_db(&db, &key, &pinned).await;
            }
            allow_inspections(&db).await;
        },
    )
    .await;
    pin_keys_of(&support, &returns).await;
    let task = answered(&sender, &sent).await;
    assert_eq!(task.state, "completed", "{task:?}");
    assert_eq!(task.result.unwrap()["condition"], "sealed");
    let refused = journal_kinds(&returns, storage::journal::GATEWAY_STREAM).await;
    assert!(refused.is_empty(), "nothing was refused: {refused:?}");
    assert!(
        inbox::find(returns.db().conn(), "support", &task.task_key)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_task_the_returns_group_does_not_allow_is_recorded_as_refused_with_its_reason() {
    let support = group("support", None).await;
    let returns = group("returns", None).await;
    trust_each_other(&returns, &support, false).await;
    reach(&support, &returns.url("/a2a")).await;

    let sender = sender(&support);
    let task = answered(&sender, &sender.send(inspection("4821")).await.unwrap()).await;
    assert_eq!(task.state, "refused");
    assert!(task.error.unwrap().starts_with("pair_not_allowed"));
    assert!(task.result.is_none());
    let refusals = journal_kinds(&returns, storage::journal::GATEWAY_STREAM).await;
    assert_eq!(refusals, ["gateway.task_refused"]);
}

#[tokio::test]
async fn a_task_no_receiver_would_accept_is_refused_before_anything_is_written() {
    let support = group("support", None).await;
    let sender = sender(&support);
    let mut task = inspection("");
    assert!(matches!(
        sender.send(task.clone()).await,
        Err(engine::gateway::SendError::Invalid(
            gateway::Refusal::InvalidInput { .. }
        ))
    ));
    task.input = json!({ "order_id": "4821" });
    task.to = name("support");
    assert!(matches!(
        sender.send(task).await,
        Err(engine::gateway::SendError::Invalid(
            gateway::Refusal::Cycle { .. }
        ))
    ));
    let outbox = sender.tasks_for("cnv_test").await.unwrap();
    assert!(outbox.is_empty(), "{outbox:?}");
}

/// What a lying peer makes of a request: the JSON-RPC `result`.
type Answering = Box<dyn Fn(&serde_json::Value) -> serde_json::Value + Send + Sync>;

/// A peer group that is not Countersign and may lie: it answers each
/// request with what `answer` makes of it (its JSON-RPC id echoed; the
/// answer is the `result`), or with `body` as it is when `answer` is None.
pub(crate) struct LyingPeer {
    answer: Option<Answering>,
    body: &'static str,
}

impl wiremock::Respond for LyingPeer {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let asked: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        match &self.answer {
            Some(answer) => wiremock::ResponseTemplate::new(200).set_body_json(json!({
                "jsonrpc": "2.0", "id": asked["id"], "result": answer(&asked)
            })),
            None => wiremock::ResponseTemplate::new(200).set_body_string(self.body),
        }
    }
}

pub(crate) async fn lying_peer(peer: LyingPeer) -> wiremock::MockServer {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(peer)
        .mount(&server)
        .await;
    server
}

/// `task` as the answer to `asked`: wrapped as A2A wraps a `SendMessage`
/// answer, bare for `GetTask` and `CancelTask`.
fn answer_to(asked: &serde_json::Value, task: serde_json::Value) -> serde_json::Value {
    if asked["method"] == "SendMessage" {
        json!({ "task": task })
    } else {
        task
    }
}

/// A peer that reports every task as `task`.
pub(crate) fn always(task: serde_json::Value) -> LyingPeer {
    LyingPeer {
        answer: Some(Box::new(move |asked| answer_to(asked, task.clone()))),
        body: "",
    }
}

/// A peer holding a returns key the support group pinned, which answers
/// every task completed with `result`, signed, then changes what it signed
/// with `tamper`.
fn signing_peer(
    key: gateway::SigningKey,
    result: serde_json::Value,
    tamper: fn(&mut serde_json::Value),
) -> LyingPeer {
    signing_peer_as(key, "support", gateway::Spent::one_step(), result, tamper)
}

/// A peer of `key`'s group answering the tasks of group `to`: completed
/// with `result`, signed as having spent `spent`, then changed by `tamper`.
pub(crate) fn signing_peer_as(
    key: gateway::SigningKey,
    to: &str,
    spent: gateway::Spent,
    result: serde_json::Value,
    tamper: fn(&mut serde_json::Value),
) -> LyingPeer {
    let task_key = std::sync::Mutex::new(String::new());
    let to = name(to);
    LyingPeer {
        answer: Some(Box::new(move |asked| {
            let mut key_of_task = task_key.lock().unwrap();
            if asked["method"] == "SendMessage" {
                *key_of_task = asked["params"]["message"]["metadata"][gateway::EXTENSION]["envelope"]
                    ["task_key"]
                    .as_str()
                    .unwrap()
                    .to_owned();
            }
            let answer = gateway::TaskAnswer {
                v: gateway::answer::ANSWER_VERSION,
                task_key: gateway::TaskKey::parse(&key_of_task).unwrap(),
                to: to.clone(),
                from: key.key_ref().group.clone(),
                state: "completed".into(),
                result: result.clone(),
                spent: spent.clone(),
                answered_at: Utc::now(),
                signer: key.key_ref().clone(),
            };
            let mut signed =
                serde_json::to_value(gateway::answer::sign(answer, &key).unwrap()).unwrap();
            tamper(&mut signed);
            let task = json!({
                "id": "gtk_peer",
                "status": { "state": "TASK_STATE_COMPLETED" },
                "artifacts": [{ "artifactId": "r", "parts": [{ "data": result }],
                                "metadata": { gateway::EXTENSION: signed } }]
            });
            answer_to(asked, task)
        })),
        body: "",
    }
}

/// A key of `group`, pinned at `app`.
pub(crate) async fn key_pinned_at(app: &TestApp, group: &str) -> gateway::SigningKey {
    let key = gateway::SigningKey::generate(gateway::KeyRef {
        group: name(group),
        key_id: gateway::KeyId::parse("gateway").unwrap(),
        version: 1,
    })
    .unwrap();
    let pinned = gateway::PinnedKey {
        public_key: key.public_key(),
        valid_from: Utc::now() - Duration::minutes(1),
        usable_until: None,
    };
    pin(app, key.key_ref(), &pinned).await;
    key
}

/// A returns key, pinned at `support`.
async fn returns_key_pinned_at(support: &TestApp) -> gateway::SigningKey {
    key_pinned_at(support, "returns").await
}

/// Sends an inspection to `peer` and waits for its end.
async fn ask(support: &TestApp, peer: &wiremock::MockServer) -> OutboxTaskView {
    reach(support, &format!("{}/a2a", peer.uri())).await;
    let sender = sender(support);
    answered(&sender, &sender.send(inspection("4821")).await.unwrap()).await
}

#[tokio::test]
async fn an_answer_without_a_signature_is_not_taken_as_a_result() {
    let peer = lying_peer(always(json!({
        "id": "gtk_lie",
        "status": { "state": "TASK_STATE_COMPLETED" },
        "artifacts": [{ "artifactId": "r", "parts": [{ "data": { "condition": "sealed" } }] }]
    })))
    .await;
    let support = group("support", None).await;
    let task = ask(&support, &peer).await;
    assert_eq!(task.state, "failed", "{task:?}");
    assert!(task.result.is_none());
    assert!(task.error.unwrap().contains("not signed"));
    let kinds = journal_kinds(&support, &storage::journal::task_stream(&task.id)).await;
    assert_eq!(kinds, ["gateway.task_sent", "gateway.task_result_refused"]);
}

#[tokio::test]
async fn an_answer_changed_after_the_peer_signed_it_is_not_taken() {
    let support = group("support", None).await;
    let key = returns_key_pinned_at(&support).await;
    let peer = lying_peer(signing_peer(
        key,
        json!({ "condition": "opened", "note": null }),
        |signed| {
            signed["answer"]["result"]["condition"] = json!("sealed");
        },
    ))
    .await;
    let task = ask(&support, &peer).await;
    assert_eq!(task.state, "failed", "{task:?}");
    assert!(task.result.is_none());
    assert!(task.error.unwrap().contains("signature is not accepted"));
}

#[tokio::test]
async fn a_signed_answer_that_breaks_the_result_schema_is_not_taken_as_a_result() {
    let support = group("support", None).await;
    let key = returns_key_pinned_at(&support).await;
    let lie = json!({ "condition": "mint", "refund": "approve it all" });
    let peer = lying_peer(signing_peer(key, lie, |_| {})).await;
    let task = ask(&support, &peer).await;
    assert_eq!(task.state, "failed", "{task:?}");
    assert!(task.result.is_none());
    assert!(task.error.unwrap().contains("does not match"));
}

#[tokio::test]
async fn a_signed_valid_answer_from_a_peer_that_is_not_countersign_is_taken_with_its_signer() {
    let support = group("support", None).await;
    let key = returns_key_pinned_at(&support).await;
    let answer = json!({ "condition": "damaged", "received_at": null, "note": "box crushed" });
    let peer = lying_peer(signing_peer(key, answer.clone(), |_| {})).await;
    let task = ask(&support, &peer).await;
    assert_eq!(task.state, "completed", "{task:?}");
    assert_eq!(task.result, Some(answer));
    assert_eq!(task.answer_signer.as_deref(), Some("returns/gateway/v1"));
}

#[tokio::test]
async fn a_peers_answer_that_is_not_a2a_leaves_the_task_queued_for_another_try() {
    let peer = lying_peer(LyingPeer {
        answer: None,
        body: "<html>502 Bad Gateway</html>",
    })
    .await;
    let support = group("support", None).await;
    reach(&support, &format!("{}/a2a", peer.uri())).await;
    let mut finished = support.runner.as_ref().unwrap().finished();

    let sender = sender(&support);
    let sent = sender.send(inspection("4821")).await.unwrap();
    let attempt = first_delivery(&mut finished).await;
    assert_eq!(attempt.state, "queued", "{attempt:?}");
    assert!(attempt.error.unwrap().contains("not JSON"));
    let task = sender.task(&sent.id).await.unwrap().unwrap();
    assert_eq!((task.state.as_str(), task.result), ("queued", None));
}

#[tokio::test]
async fn a_peer_that_works_forever_is_given_up_on_at_the_budgets_deadline() {
    let peer = lying_peer(always(json!({
        "id": "gtk_slow",
        "status": { "state": "TASK_STATE_WORKING" }
    })))
    .await;
    let support = group("support", None).await;
    reach(&support, &format!("{}/a2a", peer.uri())).await;

    let sender = sender(&support);
    let mut task = inspection("4821");
    task.budget.deadline = Utc::now() + Duration::seconds(1);
    let task = answered(&sender, &sender.send(task).await.unwrap()).await;
    assert_eq!(task.state, "expired", "{task:?}");
    assert_eq!(task.remote_task_id.as_deref(), Some("gtk_slow"));
    let kinds = journal_kinds(&support, &storage::journal::task_stream(&task.id)).await;
    assert_eq!(
        kinds,
        [
            "gateway.task_sent",
            "gateway.task_delivered",
            "gateway.task_expired"
        ]
    );
}

#[tokio::test]
async fn an_answer_signed_with_a_key_not_yet_pinned_waits_for_the_admin_and_is_then_taken() {
    let support = group("support", None).await;
    let returns = group("returns", None).await;
    engine::demo::seed_returned_parcels(returns.db(), Utc::now())
        .await
        .unwrap();
    // The returns group trusts the support group; not yet the other way.
    pin_keys_of(&returns, &support).await;
    trust::allow_pair(
        returns.db().conn(),
        trust::PairRow {
            from_group: "support".into(),
            to_group: "returns".into(),
            kind: "returns.inspection".into(),
            allowed_by: "usr_admin".into(),
            allowed_at: Utc::now(),
        },
    )
    .await
    .unwrap();
    reach(&support, &returns.url("/a2a")).await;
    let mut finished = support.runner.as_ref().unwrap().finished();

    let sender = sender(&support);
    let sent = sender.send(inspection("4821")).await.unwrap();
    let held = loop {
        let end = finished.recv().await.unwrap();
        if end
            .error
            .as_deref()
            .is_some_and(|e| e.contains("not pinned"))
        {
            break end;
        }
    };
    assert_eq!(held.state, "queued", "{held:?}");
    let waiting = sender.task(&sent.id).await.unwrap().unwrap();
    assert!(!waiting.is_final(), "{waiting:?}");
    assert!(waiting.result.is_none());

    pin_keys_of(&support, &returns).await;
    let task = answered(&sender, &sent).await;
    assert_eq!(task.state, "completed", "{task:?}");
    assert_eq!(task.answer_signer.as_deref(), Some("returns/gateway/v1"));
}

/// The support group with its refund specialist connected to the returns
/// desk, and the returns group with its demo parcel records, trusting each
/// other; returns the support group, the returns group and a customer's
/// bearer token at the support group.
async fn flagship_groups() -> (TestApp, TestApp, String) {
    let master = gateway::MasterKey::generate();
    let support = TestApp::spawn_with(|s| {
        s.gateway_group = Some("support".into());
        s.gateway_master_key = Some(master.into());
        s.gateway_returns_desk = Some("returns".into());
    })
    .await;
    let returns = group("returns", None).await;
    engine::demo::seed_returned_parcels(returns.db(), Utc::now())
        .await
        .unwrap();
    trust_each_other(&returns, &support, true).await;
    reach(&support, &returns.url("/a2a")).await;
    let token = engine::accounts::Accounts::with_system_clock(support.db().clone())
        .create_token("customer", "flagship")
        .await
        .unwrap()
        .secret;
    (support, returns, token)
}

async fn say(app: &TestApp, token: &str, conversation: &str, text: &str) -> serde_json::Value {
    let response = app
        .bare_client()
        .post(app.url(&format!("/api/v1/conversations/{conversation}/messages")))
        .bearer_auth(token)
        .json(&json!({ "text": text }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    response.json().await.unwrap()
}

async fn open_conversation(app: &TestApp, token: &str) -> String {
    let response = app
        .bare_client()
        .post(app.url("/api/v1/conversations"))
        .bearer_auth(token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = response.json().await.unwrap();
    body["id"].as_str().unwrap().to_owned()
}

async fn proposal(app: &TestApp, token: &str, id: &str) -> serde_json::Value {
    let response = app
        .bare_client()
        .get(app.url(&format!("/api/v1/proposals/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = response.json().await.unwrap();
    body["proposal"].clone()
}

#[tokio::test]
async fn the_flagship_refund_cites_the_returns_desks_signed_inspection_instead_of_asking_the_customer()
 {
    let (support, _returns, customer) = flagship_groups().await;
    let conversation = open_conversation(&support, &customer).await;

    let turn = say(
        &support,
        &customer,
        &conversation,
        "check order 4821 and refund it if it qualifies",
    )
    .await;
    let proposal_id = turn["proposal_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{turn}"));
    assert!(turn["questions"].as_array().unwrap().is_empty(), "{turn}");
    assert!(
        !turn["reply"]
            .as_str()
            .unwrap()
            .contains("was the item opened")
    );

    let proposal = proposal(&support, &customer, proposal_id).await;
    assert_eq!(proposal["status"], "awaiting_approval");
    assert_eq!(proposal["amount_minor"], 7900);
    assert!(proposal["open_questions"].as_array().unwrap().is_empty());
    let answer = proposal["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "peer_answer")
        .unwrap_or_else(|| panic!("no peer answer cited: {proposal}"))
        .clone();
    assert!(
        answer["reference"]
            .as_str()
            .unwrap()
            .starts_with("peer-task:gto_")
    );
    assert!(
        answer["title"]
            .as_str()
            .unwrap()
            .contains("agent group returns")
    );
    let provenance = answer["section"].as_str().unwrap();
    assert!(
        provenance.contains("signed by returns/gateway/v1"),
        "{provenance}"
    );
    assert!(provenance.contains("signature verified"), "{provenance}");
    assert!(
        answer["quote"]
            .as_str()
            .unwrap()
            .contains("condition: sealed")
    );
    let recommendation = proposal["recommendation"].as_str().unwrap();
    assert!(recommendation.contains("returns desk"), "{recommendation}");
    // The task went out for this conversation, and came back signed.
    let sent = sender(&support).tasks_for(&conversation).await.unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].state, "completed");
}

#[tokio::test]
async fn when_the_returns_desk_has_no_record_the_customer_is_asked_and_the_approver_sees_both() {
    let (support, _returns, customer) = flagship_groups().await;
    let conversation = open_conversation(&support, &customer).await;

    let first = say(
        &support,
        &customer,
        &conversation,
        "check order 4823 and refund it if it qualifies",
    )
    .await;
    assert!(first["proposal_id"].is_null(), "{first}");
    assert_eq!(first["questions"], json!(["Was the item opened?"]));
    let sent = sender(&support).tasks_for(&conversation).await.unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].result.as_ref().unwrap()["condition"], "unknown");

    let second = say(&support, &customer, &conversation, "no, still sealed").await;
    let proposal_id = second["proposal_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{second}"));
    let proposal = proposal(&support, &customer, proposal_id).await;
    assert_eq!(proposal["open_questions"][0]["answer"], "no, still sealed");
    // The desk's signed "no parcel on record" is cited too: the approver
    // sees the customer's word and that the parcel is not back yet.
    let cited = proposal["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "peer_answer")
        .unwrap_or_else(|| panic!("{proposal}"))
        .clone();
    assert!(
        cited["quote"]
            .as_str()
            .unwrap()
            .contains("condition: unknown")
    );
    let recommendation = proposal["recommendation"].as_str().unwrap();
    assert!(
        recommendation.contains("the customer said"),
        "{recommendation}"
    );
}

/// A peer that keeps working on every task and cancels it when asked;
/// counts the cancels it was sent.
fn working_peer(cancels: Arc<AtomicUsize>) -> LyingPeer {
    LyingPeer {
        answer: Some(Box::new(move |asked| {
            let state = if asked["method"] == "CancelTask" {
                cancels.fetch_add(1, Ordering::SeqCst);
                "TASK_STATE_CANCELED"
            } else {
                "TASK_STATE_WORKING"
            };
            answer_to(
                asked,
                json!({ "id": "gtk_busy", "status": { "state": state } }),
            )
        })),
        body: "",
    }
}

/// The end of the support group's first delivery attempt.
async fn first_delivery(
    finished: &mut tokio::sync::broadcast::Receiver<runner::Finished>,
) -> runner::Finished {
    loop {
        let end = finished.recv().await.unwrap();
        if end.kind == "gateway.relay" {
            return end;
        }
    }
}

/// Waits until the support group's relay delivered its task.
async fn delivered(finished: &mut tokio::sync::broadcast::Receiver<runner::Finished>) {
    let end = first_delivery(finished).await;
    assert_eq!(end.state, "done", "{end:?}");
}

#[tokio::test]
async fn a_task_canceled_while_the_peer_works_on_it_is_canceled_there_and_journaled() {
    let cancels = Arc::new(AtomicUsize::new(0));
    let peer = lying_peer(working_peer(cancels.clone())).await;
    let support = group("support", None).await;
    reach(&support, &format!("{}/a2a", peer.uri())).await;
    let mut finished = support.runner.as_ref().unwrap().finished();

    let sender = sender(&support);
    let sent = sender.send(inspection("4821")).await.unwrap();
    delivered(&mut finished).await;
    assert!(sender.cancel(&sent.id, "user:admin").await.unwrap());
    // Canceling again changes nothing.
    assert!(!sender.cancel(&sent.id, "user:admin").await.unwrap());

    let task = answered(&sender, &sent).await;
    assert_eq!(task.state, "canceled", "{task:?}");
    assert_eq!(task.remote_task_id.as_deref(), Some("gtk_busy"));
    assert_eq!(cancels.load(Ordering::SeqCst), 1);
    let kinds = journal_kinds(&support, &storage::journal::task_stream(&task.id)).await;
    assert_eq!(
        kinds,
        [
            "gateway.task_sent",
            "gateway.task_delivered",
            "gateway.cancel_requested",
            "gateway.task_canceled"
        ]
    );
}

#[tokio::test]
async fn stop_on_a_conversation_cancels_the_tasks_it_sent_to_other_groups() {
    let cancels = Arc::new(AtomicUsize::new(0));
    let peer = lying_peer(working_peer(cancels.clone())).await;
    let master = gateway::MasterKey::generate();
    let support = TestApp::spawn_with(|s| {
        s.gateway_group = Some("support".into());
        s.gateway_master_key = Some(master.into());
        s.gateway_returns_desk = Some("returns".into());
    })
    .await;
    reach(&support, &format!("{}/a2a", peer.uri())).await;
    let token = engine::accounts::Accounts::with_system_clock(support.db().clone())
        .create_token("customer", "stop")
        .await
        .unwrap()
        .secret;
    let conversation = open_conversation(&support, &token).await;
    let mut finished = support.runner.as_ref().unwrap().finished();
    // What the specialist's check sends for this conversation.
    let sender = sender(&support);
    let mut task = inspection("4821");
    task.subject = Some(conversation.clone());
    let sent = sender.send(task).await.unwrap();
    delivered(&mut finished).await;

    let stop = support
        .bare_client()
        .post(support.url(&format!("/api/v1/conversations/{conversation}/stop")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert!(stop.status().is_success(), "{}", stop.status());
    let task = answered(&sender, &sent).await;
    assert_eq!(task.state, "canceled", "{task:?}");
    assert_eq!(cancels.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_operations_view_shows_the_gateway_lane_only_where_the_gateway_is_on() {
    let lanes_of = |app: &TestApp| {
        let (db, work) = (app.db().clone(), app.engine.work.clone());
        async move {
            let admin = storage::users::find_by_name(db.conn(), "admin")
                .await
                .unwrap()
                .unwrap();
            let view = work.ops_view(&engine::Actor::from(admin)).await.unwrap();
            view.lanes
                .into_iter()
                .map(|lane| lane.name)
                .collect::<Vec<_>>()
        }
    };
    let with_gateway = group("support", None).await;
    assert!(
        lanes_of(&with_gateway)
            .await
            .contains(&"gateway".to_owned())
    );
    let without = TestApp::spawn().await;
    assert!(!lanes_of(&without).await.contains(&"gateway".to_owned()));
}
