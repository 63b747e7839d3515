//! The real binary as separate processes: two replicas racing on one
//! database, and crash safety (the server is killed with SIGKILL at each
//! dangerous moment of a refund, restarted, and must end with exactly one
//! refund at the provider and a resolved, verified proposal). Agent groups
//! as separate processes: a task in the outbox survives a kill of its
//! sender; Stop cancels a task at three groups across a link cut and
//! restored.
//!
//! The sandbox provider runs in this test process so it outlives the servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use connectors::sandbox::{FaultMode, FaultPlan, FaultRule, SandboxConfig, SandboxState};
use domain::proposal::ProposalStatus;
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use storage::testing::TestDatabase;
use tokio::net::TcpListener;

const PASSWORD: &str = "crash-test-password";

struct Scenario {
    db: TestDatabase,
    sandbox: SandboxState,
    sandbox_url: String,
    port: u16,
    agent_token: String,
    approver_token: String,
}

impl Scenario {
    async fn new(faults: FaultPlan) -> Scenario {
        let db = TestDatabase::new().await;
        engine::demo::seed_demo(
            &db.db,
            PASSWORD,
            engine::demo::ReferenceStyle::Sandbox,
            engine::now(),
        )
        .await
        .unwrap();
        let sandbox = SandboxState::new(
            SandboxConfig::default()
                .with_faults(faults)
                .with_hang(Duration::from_secs(60)),
        )
        .unwrap();
        // The shop's charges are known to the provider, as the demo's
        // customers paid through it.
        sandbox.set_charge_source(std::sync::Arc::new(
            engine::execution::sandbox_charges::OrderStoreCharges::new(db.db.clone()),
        ));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let sandbox_url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(connectors::sandbox::serve_standalone(
            listener,
            sandbox.clone(),
        ));
        let token = |user: &'static str| {
            let db = db.db.clone();
            async move {
                engine::accounts::Accounts::with_system_clock(db)
                    .create_token(user, "crash test")
                    .await
                    .unwrap()
                    .secret
            }
        };
        let agent_token = token("agent").await;
        let approver_token = token("approver").await;
        Scenario {
            port: free_port().await,
            db,
            sandbox,
            sandbox_url,
            agent_token,
            approver_token,
        }
    }

    fn start_server(&self, provider_url: &str) -> Child {
        self.start_server_on(self.port, provider_url, "replica-a")
    }

    fn start_server_on(&self, port: u16, provider_url: &str, name: &str) -> Child {
        self.start_server_with(port, provider_url, name, &[])
    }

    /// A server process with extra settings (`COUNTERSIGN_…` variables).
    fn start_server_with(
        &self,
        port: u16,
        provider_url: &str,
        name: &str,
        extra: &[(&str, &str)],
    ) -> Child {
        Command::new(env!("CARGO_BIN_EXE_countersign"))
            .arg("serve")
            .env("COUNTERSIGN_DATABASE_URL", &self.db.url)
            .env("COUNTERSIGN_LISTEN", format!("127.0.0.1:{port}"))
            .env("COUNTERSIGN_EXECUTOR_NAME", name)
            .env("COUNTERSIGN_PAYMENT_BASE_URL", provider_url)
            .env(
                "COUNTERSIGN_SANDBOX_SECRET_KEY",
                secrecy::ExposeSecret::expose_secret(&self.sandbox.secret_key()),
            )
            .env("COUNTERSIGN_SANDBOX_PATH", "")
            .env("COUNTERSIGN_SEED_DEMO", "false")
            .env("COUNTERSIGN_PAYMENT_TIMEOUT_MS", "120000")
            .env("COUNTERSIGN_EXECUTION_LEASE_SECONDS", "5")
            .env("COUNTERSIGN_RECONCILE_INTERVAL_SECONDS", "1")
            .env("RUST_LOG", "warn")
            .envs(extra.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    async fn wait_ready(&self) {
        wait_ready_on(self.port).await;
    }

    /// Proposes the flagship refund and approves it over the API; returns its id.
    async fn propose_and_approve(&self) -> String {
        let client = reqwest::Client::new();
        let proposal: Value = client
            .post(self.url("/api/v1/proposals"))
            .bearer_auth(&self.agent_token)
            .json(&json!({
                "order_id": "4821",
                "evidence": [{"reference": "order:4821"}, {"reference": "returns-policy:section-3"}],
                "recommendation": "Delivered 12 days ago; unopened items within 30 days."
            }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = proposal["id"].as_str().unwrap().to_owned();
        let approved: Value = client
            .post(self.url(&format!("/api/v1/proposals/{id}/approve")))
            .bearer_auth(&self.approver_token)
            .json(&json!({ "action_digest": proposal["action_digest"] }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(approved["status"], "executing", "{approved}");
        id
    }

    async fn status(&self, id: &str) -> ProposalStatus {
        storage::proposals::get(self.db.db.conn(), id)
            .await
            .unwrap()
            .unwrap()
            .status()
    }

    async fn wait_for(&self, id: &str, wanted: ProposalStatus, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let status = self.status(id).await;
            if status == wanted {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "stuck at {status:?}, wanted {wanted:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn wait_until_provider_saw_a_request(&self) {
        for _ in 0..200 {
            if self.sandbox.fault_status().requests_seen > 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the refund request never reached the provider");
    }
}

async fn wait_ready_on(port: u16) {
    let client = reqwest::Client::new();
    for _ in 0..300 {
        if let Ok(response) = client
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
            && response.status().is_success()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server on port {port} did not become ready");
}

async fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

fn kill(mut child: Child) {
    child.kill().unwrap(); // SIGKILL: no shutdown code runs
    child.wait().unwrap();
}

fn first_attempt(mode: FaultMode) -> FaultPlan {
    FaultPlan::new(vec![FaultRule::always(mode).first_attempt_only()])
}

#[tokio::test]
async fn killed_after_claim_before_the_call_reached_the_provider_the_restart_sends_once() {
    let s = Scenario::new(FaultPlan::default()).await;
    // The first server's provider answers what it is asked about the charge
    // (passing the question to the real one) but is a black hole for the
    // refund itself: it takes the call and never answers, so the claim is
    // committed but nothing reaches the real provider before the kill.
    let (hole_url, mut accepted_rx) = black_hole_for_refunds(&s.sandbox_url).await;
    let first = s.start_server(&hole_url);
    s.wait_ready().await;
    let id = s.propose_and_approve().await;
    accepted_rx.recv().await.unwrap();
    kill(first);
    assert_eq!(s.status(&id).await, ProposalStatus::Executing);
    assert_eq!(s.sandbox.ledger().total_refunds, 0);

    let second = s.start_server(&s.sandbox_url);
    s.wait_for(&id, ProposalStatus::Verified, Duration::from_secs(30))
        .await;
    kill(second);
    assert_eq!(s.sandbox.ledger().count_for(&id), 1);
}

#[tokio::test]
async fn killed_while_the_provider_holds_the_call_unexecuted_the_restart_sends_once() {
    let s = Scenario::new(first_attempt(FaultMode::TimeoutBeforeExecute)).await;
    let first = s.start_server(&s.sandbox_url);
    s.wait_ready().await;
    let id = s.propose_and_approve().await;
    s.wait_until_provider_saw_a_request().await;
    kill(first);

    let second = s.start_server(&s.sandbox_url);
    s.wait_for(&id, ProposalStatus::Verified, Duration::from_secs(30))
        .await;
    kill(second);
    assert_eq!(s.sandbox.ledger().count_for(&id), 1);
}

#[tokio::test]
async fn killed_after_the_provider_refunded_but_before_the_receipt_the_restart_finds_it() {
    let s = Scenario::new(first_attempt(FaultMode::ExecuteThenTimeout)).await;
    let first = s.start_server(&s.sandbox_url);
    s.wait_ready().await;
    let id = s.propose_and_approve().await;
    s.wait_until_provider_saw_a_request().await;
    // The refund exists at the provider; our receipt does not.
    for _ in 0..100 {
        if s.sandbox.ledger().count_for(&id) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(s.sandbox.ledger().count_for(&id), 1);
    kill(first);
    assert_eq!(s.status(&id).await, ProposalStatus::Executing);

    let second = s.start_server(&s.sandbox_url);
    s.wait_for(&id, ProposalStatus::Verified, Duration::from_secs(30))
        .await;
    kill(second);
    assert_eq!(s.sandbox.ledger().count_for(&id), 1);
    let receipt = storage::receipts::get(s.db.db.conn(), &id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(receipt.amount_minor, 7900);
}

#[tokio::test]
async fn sixty_four_approvals_across_two_server_processes_make_exactly_one_refund() {
    let s = Scenario::new(FaultPlan::default()).await;
    let other_port = free_port().await;
    let a = s.start_server(&s.sandbox_url);
    let b = s.start_server_on(other_port, &s.sandbox_url, "replica-b");
    s.wait_ready().await;
    wait_ready_on(other_port).await;
    let client = reqwest::Client::new();
    let proposal: Value = client
        .post(s.url("/api/v1/proposals"))
        .bearer_auth(&s.agent_token)
        .json(&json!({
            "order_id": "4821",
            "evidence": [{"reference": "order:4821"}, {"reference": "returns-policy:section-3"}],
            "recommendation": "Delivered 12 days ago; unopened items within 30 days."
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = proposal["id"].as_str().unwrap().to_owned();
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(64));
    let mut requests = Vec::new();
    for n in 0..64u16 {
        let port = if n % 2 == 0 { s.port } else { other_port };
        let url = format!("http://127.0.0.1:{port}/api/v1/proposals/{id}/approve");
        let (client, token, barrier) = (client.clone(), s.approver_token.clone(), barrier.clone());
        let body = json!({ "action_digest": proposal["action_digest"] });
        requests.push(tokio::spawn(async move {
            barrier.wait().await;
            let response = client
                .post(url)
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap();
            (status, body)
        }));
    }
    let mut accepted = 0;
    for request in requests {
        let (status, body) = request.await.unwrap();
        match status {
            200 => accepted += 1,
            409 => assert_eq!(body["error"]["code"], "conflict", "{body}"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(accepted, 1);
    s.wait_for(&id, ProposalStatus::Verified, Duration::from_secs(30))
        .await;
    kill(a);
    kill(b);
    assert_eq!(s.sandbox.ledger().total_refunds, 1);
}

/// The refund.send work item of a proposal, as stored.
async fn send_item(s: &Scenario, id: &str) -> storage::work::WorkItem {
    let items = storage::work::list(
        s.db.db.conn(),
        &storage::work::WorkFilter {
            kind: Some("refund.send".to_owned()),
            subject: Some(id.to_owned()),
            ..storage::work::WorkFilter::default()
        },
        10,
    )
    .await
    .unwrap();
    assert_eq!(
        items.len(),
        1,
        "one send item per approved proposal: {items:?}"
    );
    items.into_iter().next().unwrap()
}

/// The proposal's state and its send item's end are two commits (the item
/// is marked done after the job returns), so a test that stops the server
/// once the proposal is verified waits for the item too.
async fn wait_for_send_item(s: &Scenario, id: &str, wanted: &str) -> storage::work::WorkItem {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let item = send_item(s, id).await;
        if item.state == wanted {
            return item;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "send item stuck at {}, wanted {wanted}",
            item.state
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_send_committed_with_its_approval_survives_a_kill_and_goes_out_at_restart_without_waiting_for_a_lease()
 {
    let s = Scenario::new(FaultPlan::default()).await;
    // A web-only replica: it commits the approval and its send, and runs no
    // work; it is killed before anyone made the call.
    let long_lease = [
        ("COUNTERSIGN_EXECUTION_LEASE_SECONDS", "600"),
        ("COUNTERSIGN_WORK_RUNNER", "false"),
    ];
    let web_only = s.start_server_with(s.port, &s.sandbox_url, "replica-a", &long_lease);
    s.wait_ready().await;
    let id = s.propose_and_approve().await;
    kill(web_only);
    assert_eq!(s.status(&id).await, ProposalStatus::Executing);
    assert_eq!(s.sandbox.ledger().total_refunds, 0, "nothing was sent");
    assert_eq!(send_item(&s, &id).await.state, storage::work::QUEUED);

    // The same worker comes back running its lanes: the send is still there
    // and goes out now, not after the proposal's ten-minute lease.
    let restarted = s.start_server_with(
        s.port,
        &s.sandbox_url,
        "replica-a",
        &[("COUNTERSIGN_EXECUTION_LEASE_SECONDS", "600")],
    );
    s.wait_for(&id, ProposalStatus::Verified, Duration::from_secs(30))
        .await;
    let item = wait_for_send_item(&s, &id, storage::work::DONE).await;
    kill(restarted);
    assert_eq!(s.sandbox.ledger().count_for(&id), 1);
    assert_eq!(item.attempts, 1);
}

#[tokio::test]
async fn a_worker_killed_in_the_middle_of_a_send_takes_it_back_at_restart_and_refunds_once() {
    let s = Scenario::new(FaultPlan::default()).await;
    let (hole_url, mut accepted_rx) = black_hole_for_refunds(&s.sandbox_url).await;
    let long_lease = [("COUNTERSIGN_EXECUTION_LEASE_SECONDS", "600")];
    let first = s.start_server_with(s.port, &hole_url, "replica-a", &long_lease);
    s.wait_ready().await;
    let id = s.propose_and_approve().await;
    accepted_rx.recv().await.unwrap();
    kill(first);
    let held = send_item(&s, &id).await;
    assert_eq!(
        (held.state.as_str(), held.lease_owner.as_deref()),
        ("running", Some("replica-a"))
    );

    let second = s.start_server_with(s.port, &s.sandbox_url, "replica-a", &long_lease);
    s.wait_for(&id, ProposalStatus::Verified, Duration::from_secs(30))
        .await;
    wait_for_send_item(&s, &id, storage::work::DONE).await;
    kill(second);
    assert_eq!(s.sandbox.ledger().count_for(&id), 1);
}

#[tokio::test]
async fn a_graceful_shutdown_lets_a_refund_in_flight_finish_and_be_recorded_before_the_process_exits()
 {
    let s = Scenario::new(FaultPlan::new(vec![FaultRule::always(
        FaultMode::Latency { ms: 1500 },
    )]))
    .await;
    let mut server = s.start_server(&s.sandbox_url);
    s.wait_ready().await;
    let id = s.propose_and_approve().await;
    s.wait_until_provider_saw_a_request().await;
    let terminated = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());
    let exit = tokio::task::spawn_blocking(move || server.wait().unwrap())
        .await
        .unwrap();
    assert!(exit.success(), "a clean exit after SIGTERM: {exit:?}");
    assert_eq!(
        s.status(&id).await,
        ProposalStatus::Verified,
        "the send in flight finished and its answer was recorded before the exit"
    );
    assert_eq!(s.sandbox.ledger().count_for(&id), 1);
    assert_eq!(send_item(&s, &id).await.state, storage::work::DONE);
}

/// A provider that answers questions about charges from the real one but
/// takes refund calls and never answers them: the claim is committed and
/// the call is under way, yet nothing reaches the real provider. Returns
/// its URL and a channel that says when a refund call arrived.
async fn black_hole_for_refunds(real: &str) -> (String, tokio::sync::mpsc::Receiver<()>) {
    let hole = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hole_url = format!("http://{}", hole.local_addr().unwrap());
    let (accepted, accepted_rx) = tokio::sync::mpsc::channel::<()>(1);
    let real = real.to_owned();
    let forward_charge = move |axum::extract::Path(id): axum::extract::Path<String>,
                               headers: axum::http::HeaderMap| {
        let real = real.clone();
        async move {
            let mut request = reqwest::Client::new().get(format!("{real}/v1/charges/{id}"));
            if let Some(auth) = headers.get("authorization") {
                request = request.header("authorization", auth.as_bytes());
            }
            let answer = request.send().await.unwrap();
            let status = axum::http::StatusCode::from_u16(answer.status().as_u16()).unwrap();
            (status, answer.text().await.unwrap())
        }
    };
    let swallow_refund = move || {
        let accepted = accepted.clone();
        async move {
            let _ = accepted.try_send(());
            std::future::pending::<()>().await
        }
    };
    let router = axum::Router::new()
        .route("/v1/charges/{id}", axum::routing::get(forward_charge))
        .route("/v1/refunds", axum::routing::post(swallow_refund));
    tokio::spawn(async move { axum::serve(hole, router).await });
    (hole_url, accepted_rx)
}

// --- Two agent groups as separate processes -------------------------------

/// Makes `group`'s first key version (sealed under `master` in `db`) and
/// returns what peers pin of it.
async fn own_key(
    db: &storage::Database,
    group: &str,
    master: &str,
) -> Vec<(gateway::KeyRef, gateway::PinnedKey)> {
    engine::gateway::KeyBroker::published(&engine::gateway::OwnKeys::new(
        db.clone(),
        engine::Clock::system(),
        gateway::GroupName::parse(group).unwrap(),
        gateway::MasterKey::parse(master).unwrap(),
        chrono::Duration::hours(24),
    ))
    .await
    .unwrap()
}

async fn pin_at(db: &storage::Database, keys: &[(gateway::KeyRef, gateway::PinnedKey)]) {
    use base64::Engine as _;
    for (key, pinned) in keys {
        storage::gateway::trust::pin_key(
            db.conn(),
            storage::gateway::trust::PinnedKeyRow {
                group_name: key.group.to_string(),
                key_id: key.key_id.to_string(),
                version: i32::try_from(key.version).unwrap(),
                public_key: base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(pinned.public_key),
                valid_from: pinned.valid_from,
                usable_until: pinned.usable_until,
                pinned_by: "test".into(),
                pinned_at: chrono::Utc::now(),
            },
        )
        .await
        .unwrap();
    }
}

/// The demo customer's API token and a conversation it opened at `base`.
async fn customer_conversation(
    db: &storage::Database,
    client: &reqwest::Client,
    base: &str,
) -> (String, String) {
    let customer = engine::accounts::Accounts::with_system_clock(db.clone())
        .create_token("customer", "process test")
        .await
        .unwrap()
        .secret;
    let conversation: Value = client
        .post(format!("{base}/api/v1/conversations"))
        .bearer_auth(&customer)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = conversation["id"].as_str().unwrap().to_owned();
    (customer, id)
}

/// A `countersign serve` process of agent group `group` on `db_url`.
fn start_group(
    db_url: &str,
    port: u16,
    group: &str,
    master: &str,
    extra: &[(&str, &str)],
) -> Child {
    Command::new(env!("CARGO_BIN_EXE_countersign"))
        .arg("serve")
        .env("COUNTERSIGN_DATABASE_URL", db_url)
        .env("COUNTERSIGN_LISTEN", format!("127.0.0.1:{port}"))
        .env("COUNTERSIGN_EXECUTOR_NAME", format!("executor-{group}"))
        .env("COUNTERSIGN_SEED_DEMO", "false")
        .env("COUNTERSIGN_GATEWAY_GROUP", group)
        .env("COUNTERSIGN_GATEWAY_MASTER_KEY", master)
        .env("RUST_LOG", "warn")
        .envs(extra.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn a_task_in_the_outbox_survives_a_kill_of_the_sending_group_and_reaches_the_peer_exactly_once()
 {
    let support = TestDatabase::new().await;
    let returns = TestDatabase::new().await;
    for db in [&support.db, &returns.db] {
        engine::demo::seed_demo(
            db,
            PASSWORD,
            engine::demo::ReferenceStyle::Sandbox,
            engine::now(),
        )
        .await
        .unwrap();
    }
    engine::demo::seed_returned_parcels(&returns.db, engine::now())
        .await
        .unwrap();
    let (support_master, returns_master) = (
        gateway::MasterKey::generate(),
        gateway::MasterKey::generate(),
    );
    pin_at(
        &returns.db,
        &own_key(&support.db, "support", &support_master).await,
    )
    .await;
    pin_at(
        &support.db,
        &own_key(&returns.db, "returns", &returns_master).await,
    )
    .await;
    allow_inspections(&returns.db, "support", "returns").await;
    // The returns group is down: nothing listens on its port yet.
    let (support_port, returns_port) = (free_port().await, free_port().await);
    set_peer(&support.db, "returns", returns_port).await;
    let desk = [("COUNTERSIGN_GATEWAY_RETURNS_DESK", "returns")];
    let sender = start_group(
        &support.url,
        support_port,
        "support",
        &support_master,
        &desk,
    );
    wait_ready_on(support_port).await;

    // The customer's turn sends the inspection; the process is killed while
    // the turn waits for an answer that cannot come.
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{support_port}");
    let (customer, id) = customer_conversation(&support.db, &client, &base).await;
    let conversation = json!({ "id": id });
    let turn = tokio::spawn({
        let (client, customer) = (client.clone(), customer.clone());
        async move {
            // Cut by the kill: the answer never comes.
            let _ = client
                .post(format!("{base}/api/v1/conversations/{id}/messages"))
                .bearer_auth(&customer)
                .json(&json!({ "text": "check order 4821 and refund it if it qualifies" }))
                .send()
                .await;
        }
    });
    // Cross-process: poll the sender's database until the task is committed.
    let mut sent = Vec::new();
    for _ in 0..200 {
        sent = storage::gateway::outbox::for_subject(
            support.db.conn(),
            conversation["id"].as_str().unwrap(),
        )
        .await
        .unwrap();
        if !sent.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(sent.len(), 1, "the task was committed to the outbox");
    kill(sender);
    turn.await.unwrap();
    let task = storage::gateway::outbox::get(support.db.conn(), &sent[0].id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(task.state, "queued", "not delivered before the kill");

    // The returns group comes up, then the sender again: the outbox
    // delivers the task, once, and follows it to its signed answer.
    let peer = start_group(&returns.url, returns_port, "returns", &returns_master, &[]);
    wait_ready_on(returns_port).await;
    let sender = start_group(
        &support.url,
        support_port,
        "support",
        &support_master,
        &desk,
    );
    wait_ready_on(support_port).await;
    let mut state = String::new();
    for _ in 0..600 {
        state = storage::gateway::outbox::get(support.db.conn(), &task.id)
            .await
            .unwrap()
            .unwrap()
            .state;
        if state == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    kill(sender);
    kill(peer);
    assert_eq!(state, "completed");
    let received = storage::gateway::inbox::find(returns.db.conn(), "support", &task.task_key)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(received.state, "completed");
    let answered = storage::gateway::outbox::get(support.db.conn(), &task.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        answered.remote_task_id.as_deref(),
        Some(received.id.as_str())
    );
    assert!(answered.result.unwrap().contains("sealed"));
}

/// Polls another process's committed state (there is no in-process signal
/// across processes) until `done` says so, for at most 60 s.
async fn until<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..1200 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not happen in 60 s");
}

async fn set_peer(db: &storage::Database, group: &str, port: u16) {
    storage::gateway::peers::set(
        db.conn(),
        storage::gateway::peers::Peer {
            group_name: group.into(),
            url: format!("http://127.0.0.1:{port}/a2a"),
            updated_by: "test".into(),
            updated_at: chrono::Utc::now(),
        },
    )
    .await
    .unwrap();
}

async fn allow_inspections(db: &storage::Database, from: &str, to: &str) {
    storage::gateway::trust::allow_pair(
        db.conn(),
        storage::gateway::trust::PairRow {
            from_group: from.into(),
            to_group: to.into(),
            kind: "returns.inspection".into(),
            allowed_by: "test".into(),
            allowed_at: chrono::Utc::now(),
        },
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn stop_cancels_the_task_at_all_three_groups_even_across_a_link_cut_and_restored() {
    let names = ["support", "returns", "warehouse"];
    let mut dbs = Vec::new();
    let mut masters = Vec::new();
    for _ in names {
        let db = TestDatabase::new().await;
        engine::demo::seed_demo(
            &db.db,
            PASSWORD,
            engine::demo::ReferenceStyle::Sandbox,
            engine::now(),
        )
        .await
        .unwrap();
        dbs.push(db);
        masters.push(gateway::MasterKey::generate());
    }
    // Every group pins every other's keys; each allows and reaches the next.
    let mut keys = Vec::new();
    for ((name, db), master) in names.iter().zip(&dbs).zip(&masters) {
        keys.push(own_key(&db.db, name, master).await);
    }
    for (at, db) in dbs.iter().enumerate() {
        for (of, published) in keys.iter().enumerate() {
            if at != of {
                pin_at(&db.db, published).await;
            }
        }
    }
    allow_inspections(&dbs[1].db, "support", "returns").await;
    allow_inspections(&dbs[2].db, "returns", "warehouse").await;
    let ports = [free_port().await, free_port().await, free_port().await];
    set_peer(&dbs[0].db, "returns", ports[1]).await;
    set_peer(&dbs[1].db, "warehouse", ports[2]).await;
    let [support_db, returns_db, warehouse_db] = [&dbs[0], &dbs[1], &dbs[2]];

    let support = start_group(
        &support_db.url,
        ports[0],
        "support",
        &masters[0],
        &[("COUNTERSIGN_GATEWAY_RETURNS_DESK", "returns")],
    );
    // Returns has no parcel records: it asks the warehouse.
    let returns = start_group(
        &returns_db.url,
        ports[1],
        "returns",
        &masters[1],
        &[(
            "COUNTERSIGN_GATEWAY_FORWARD",
            "returns.inspection=warehouse",
        )],
    );
    // The warehouse takes tasks but runs no lanes: its task stays open.
    let warehouse_env = [("COUNTERSIGN_WORK_RUNNER", "false")];
    let warehouse = start_group(
        &warehouse_db.url,
        ports[2],
        "warehouse",
        &masters[2],
        &warehouse_env,
    );
    for port in ports {
        wait_ready_on(port).await;
    }

    // The customer's turn asks returns about order 4821; the turn gives up
    // waiting (the warehouse never answers) and asks the customer instead.
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{}", ports[0]);
    let (customer, id) = customer_conversation(&support_db.db, &client, &base).await;
    let turn = tokio::spawn({
        let (client, customer, base, id) =
            (client.clone(), customer.clone(), base.clone(), id.clone());
        async move {
            client
                .post(format!("{base}/api/v1/conversations/{id}/messages"))
                .bearer_auth(&customer)
                .json(&json!({ "text": "check order 4821 and refund it if it qualifies" }))
                .send()
                .await
                .unwrap()
                .status()
        }
    });
    until("the warehouse receiving the child task", || async {
        !storage::gateway::inbox::recent(warehouse_db.db.conn(), 1)
            .await
            .unwrap()
            .is_empty()
    })
    .await;
    let held = storage::gateway::inbox::recent(warehouse_db.db.conn(), 1)
        .await
        .unwrap()
        .remove(0);
    assert_eq!(
        (held.sender_group.as_str(), held.state.as_str()),
        ("returns", "submitted")
    );
    assert!(turn.await.unwrap().is_success());

    // The link to the warehouse is cut; the customer presses Stop.
    kill(warehouse);
    let stop = client
        .post(format!("{base}/api/v1/conversations/{id}/stop"))
        .bearer_auth(&customer)
        .send()
        .await
        .unwrap();
    assert!(stop.status().is_success(), "{}", stop.status());
    let sent = storage::gateway::outbox::for_subject(support_db.db.conn(), &id)
        .await
        .unwrap()
        .remove(0);
    until("support's task canceled at returns", || async {
        storage::gateway::outbox::get(support_db.db.conn(), &sent.id)
            .await
            .unwrap()
            .unwrap()
            .state
            == "canceled"
    })
    .await;
    let child = || async {
        storage::gateway::outbox::recent(returns_db.db.conn(), 1)
            .await
            .unwrap()
            .remove(0)
    };
    until("returns asking to cancel its child", || async {
        child().await.state == "canceling"
    })
    .await;
    // The warehouse is unreachable: the cancel waits for its answer
    // (retried with backoff); nothing records it canceled on a guess.

    // The link comes back: the cancel lands at the warehouse.
    let warehouse = start_group(
        &warehouse_db.url,
        ports[2],
        "warehouse",
        &masters[2],
        &warehouse_env,
    );
    wait_ready_on(ports[2]).await;
    until("returns' child canceled at the warehouse", || async {
        child().await.state == "canceled"
    })
    .await;
    kill(warehouse);
    kill(returns);
    kill(support);
    let held = storage::gateway::inbox::get(warehouse_db.db.conn(), &held.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.state, "canceled");
    let parent = storage::gateway::inbox::find(returns_db.db.conn(), "support", &sent.task_key)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(parent.state, "canceled");
}
