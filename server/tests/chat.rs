//! The customer chat through the real server over HTTP: the offline rules
//! model (the embedded default) drives the coordinator and the refund
//! specialist through the brief's flow and its variations; the API's
//! validation, access rules, one-turn-at-a-time and Stop are checked at the
//! edge. SQLite by default, PostgreSQL with `TEST_DATABASE_URL`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use reqwest::{Client, Response, StatusCode};
use serde_json::{Value, json};
use server::config::{ModelBackend, Settings};
use server::startup::Application;
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::testing::TestDatabase;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

const PASSWORD: &str = "chat-test-password";

struct ChatApp {
    address: String,
    client: Client,
    server: JoinHandle<()>,
    // Dropped after the server task is stopped.
    database: TestDatabase,
}

impl Drop for ChatApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl ChatApp {
    async fn spawn() -> ChatApp {
        ChatApp::spawn_with(|_| {}).await
    }

    async fn spawn_with(configure: impl FnOnce(&mut Settings)) -> ChatApp {
        let database = TestDatabase::new().await;
        engine::demo::seed_demo(
            &database.db,
            PASSWORD,
            engine::demo::ReferenceStyle::Sandbox,
            engine::now(),
        )
        .await
        .unwrap();
        let mut settings = Settings {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: database.url.clone(),
            seed_demo: Some(false),
            reconcile_interval_seconds: 0,
            ..Settings::default()
        };
        configure(&mut settings);
        settings.validate().unwrap();
        let app = Application::build(Arc::new(settings), database.db.clone())
            .await
            .unwrap();
        let address = format!("http://{}", app.local_addr().unwrap());
        let server = tokio::spawn(async move {
            app.run_until(std::future::pending()).await.unwrap();
        });
        ChatApp {
            address,
            client: Client::new(),
            server,
            database,
        }
    }

    /// A bearer token for a demo user.
    async fn token(&self, user: &str) -> String {
        engine::accounts::Accounts::with_system_clock(self.database.db.clone())
            .create_token(user, "chat test")
            .await
            .unwrap()
            .secret
    }

    async fn user_id(&self, name: &str) -> String {
        storage::users::find_by_name(self.database.db.conn(), name)
            .await
            .unwrap()
            .unwrap()
            .id
    }

    async fn post(&self, token: &str, path: &str, body: &Value) -> Response {
        self.client
            .post(format!("{}{path}", self.address))
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    async fn get(&self, token: &str, path: &str) -> Response {
        self.client
            .get(format!("{}{path}", self.address))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    /// Opens a conversation for the token's customer.
    async fn open(&self, token: &str) -> String {
        let response = self.post(token, "/api/v1/conversations", &json!({})).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["model"], "countersign-offline-rules");
        assert_eq!(body["active_agent"], "coordinator");
        body["id"].as_str().unwrap().to_owned()
    }

    /// Sends a message and returns the turn (asserting 200).
    async fn say(&self, token: &str, id: &str, text: &str) -> Value {
        let response = self
            .post(
                token,
                &format!("/api/v1/conversations/{id}/messages"),
                &json!({ "text": text }),
            )
            .await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    async fn proposal(&self, token: &str, id: &str) -> Value {
        let response = self.get(token, &format!("/api/v1/proposals/{id}")).await;
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.unwrap();
        body["proposal"].clone()
    }

    async fn proposals_for(&self, token: &str, order_id: &str) -> Vec<Value> {
        let response = self
            .get(token, &format!("/api/v1/proposals?order_id={order_id}"))
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    }
}

fn reply(turn: &Value) -> &str {
    turn["reply"].as_str().unwrap()
}

fn sources(turn: &Value) -> Vec<String> {
    turn["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_flagship_flow_over_http_ends_in_a_proposal_awaiting_approval() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;

    let first = app
        .say(
            &customer,
            &id,
            "check order 4821 and refund it if it qualifies",
        )
        .await;
    assert_eq!(first["agent"], "refund_specialist");
    assert_eq!(first["outcome"], "answered");
    assert!(reply(&first).contains("delivered 12 days ago"), "{first}");
    assert!(reply(&first).contains("was the item opened?"), "{first}");
    assert_eq!(first["questions"], json!(["Was the item opened?"]));
    assert!(first["proposal_id"].is_null());
    let read = sources(&first);
    assert!(read.contains(&"order:4821".to_owned()), "{read:?}");
    assert!(
        read.contains(&"returns-policy:section-3".to_owned()),
        "{read:?}"
    );

    let second = app.say(&customer, &id, "no, still sealed").await;
    let proposal_id = second["proposal_id"].as_str().unwrap().to_owned();
    assert!(reply(&second).contains(&proposal_id), "{second}");
    assert!(reply(&second).contains("waiting for approval"), "{second}");
    assert!(
        reply(&second).contains("nothing has been refunded yet"),
        "{second}"
    );
    assert_eq!(sources(&second), ["order:4821", "returns-policy:section-3"]);

    let proposal = app.proposal(&customer, &proposal_id).await;
    assert_eq!(proposal["status"], "awaiting_approval");
    assert_eq!(proposal["amount_minor"], 7900);
    assert_eq!(proposal["currency"], "EUR");
    assert_eq!(proposal["agent"], "refund_specialist");
    assert_eq!(proposal["conversation_id"], id.as_str());
    let cited: Vec<&str> = proposal["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reference"].as_str().unwrap())
        .collect();
    assert_eq!(cited, ["order:4821", "returns-policy:section-3"]);
    let question = &proposal["open_questions"][0];
    assert_eq!(proposal["open_questions"].as_array().unwrap().len(), 1);
    assert_eq!(question["question"], "Was the item opened?");
    assert_eq!(question["ask"], "customer");
    assert_eq!(question["answer"], "no, still sealed");
    assert_eq!(question["answered_in"]["conversation_id"], id.as_str());

    // The transcript and the events are stored and linked to the proposal.
    let response = app
        .get(&customer, &format!("/api/v1/conversations/{id}"))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let conversation: Value = response.json().await.unwrap();
    assert_eq!(conversation["turns"], 2);
    assert_eq!(conversation["running"], false);
    assert_eq!(
        conversation["proposals"],
        json!([{ "order_id": "4821", "proposal_id": proposal_id }])
    );
    let tools: Vec<&str> = conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| match c["name"].as_str().unwrap() {
            "handoff" => "handoff",
            "get_order" => "get_order",
            "search_policy" => "search_policy",
            "record_unknown" => "record_unknown",
            "prepare_refund" => "prepare_refund",
            other => panic!("unexpected tool {other}"),
        })
        .collect();
    assert_eq!(
        tools,
        [
            "handoff",
            "get_order",
            "search_policy",
            "record_unknown",
            "prepare_refund"
        ]
    );
    let events: Vec<Value> = app
        .get(&customer, &format!("/api/v1/conversations/{id}/events"))
        .await
        .json()
        .await
        .unwrap();
    assert!(events.iter().any(|e| e["kind"] == "handoff_accepted"));
    assert!(events.iter().all(|e| {
        e["event"]["model"]
            .as_str()
            .is_none_or(|m| m == "countersign-offline-rules")
    }));
}

#[tokio::test]
async fn the_order_number_may_come_later() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;
    let asked = app.say(&customer, &id, "I want a refund").await;
    assert_eq!(asked["agent"], "refund_specialist");
    assert!(reply(&asked).contains("Which order is it?"), "{asked}");
    let unclear = app.say(&customer, &id, "the jacket").await;
    assert!(reply(&unclear).contains("order number"), "{unclear}");
    let checked = app.say(&customer, &id, "4821").await;
    assert!(
        reply(&checked).contains("was the item opened?"),
        "{checked}"
    );
    let done = app.say(&customer, &id, "No").await;
    assert!(done["proposal_id"].is_string(), "{done}");
}

#[tokio::test]
async fn a_policy_question_first_is_answered_by_the_coordinator_with_citations() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;
    let answer = app
        .say(
            &customer,
            &id,
            "what is your returns policy for unopened items?",
        )
        .await;
    assert_eq!(answer["agent"], "coordinator");
    assert!(answer["proposal_id"].is_null());
    let text = reply(&answer);
    assert!(text.contains("[returns-policy:section-3]"), "{text}");
    assert!(
        text.contains("Unopened items in their original packaging may be returned within 30 days"),
        "{text}"
    );
    assert!(sources(&answer).contains(&"returns-policy:section-3".to_owned()));

    let then = app
        .say(
            &customer,
            &id,
            "ok, check order 4821 and refund it if it qualifies",
        )
        .await;
    assert_eq!(then["agent"], "refund_specialist");
    assert!(reply(&then).contains("was the item opened?"), "{then}");
}

#[tokio::test]
async fn two_orders_in_one_conversation_get_two_proposals() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;
    app.say(
        &customer,
        &id,
        "check order 4821 and refund it if it qualifies",
    )
    .await;
    let first = app.say(&customer, &id, "no, still sealed").await;
    let first_id = first["proposal_id"].as_str().unwrap().to_owned();

    let asked = app
        .say(&customer, &id, "can you also refund order 4823?")
        .await;
    assert!(reply(&asked).contains("order 4823"), "{asked}");
    assert!(reply(&asked).contains("was the item opened?"), "{asked}");
    let second = app
        .say(&customer, &id, "it's unopened, in the original packaging")
        .await;
    let second_id = second["proposal_id"].as_str().unwrap().to_owned();
    assert_ne!(first_id, second_id);
    // 44.00 EUR paid, 12.50 EUR already refunded through the support desk.
    let proposal = app.proposal(&customer, &second_id).await;
    assert_eq!(proposal["amount_minor"], 3150);
    assert_eq!(proposal["order_id"], "4823");

    let again = app.say(&customer, &id, "and order 4821?").await;
    assert!(reply(&again).contains("already prepared"), "{again}");
    assert!(reply(&again).contains(&first_id), "{again}");
    assert!(again["proposal_id"].is_null());
    assert_eq!(app.proposals_for(&customer, "4821").await.len(), 1);
}

#[tokio::test]
async fn two_orders_in_one_message_are_investigated_at_once_and_one_answer_gets_both_proposed() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;

    let asked = app
        .say(&customer, &id, "please refund orders 4821 and 4823")
        .await;
    assert_eq!(asked["outcome"], "answered", "{asked}");
    assert_eq!(
        asked["questions"],
        json!(["Was the item opened?", "Was the item opened?"]),
        "{asked}"
    );
    assert_eq!(asked["proposal_ids"], json!([]));
    assert!(reply(&asked).contains("- Order 4821:"), "{asked}");
    assert!(reply(&asked).contains("- Order 4823:"), "{asked}");

    let proposed = app.say(&customer, &id, "both are still sealed").await;
    let ids: Vec<&str> = proposed["proposal_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{proposed}");
    assert_eq!(proposed["proposal_id"], json!(ids[1]));
    let mut orders = Vec::new();
    for proposal_id in ids {
        let proposal = app.proposal(&customer, proposal_id).await;
        orders.push((
            proposal["order_id"].as_str().unwrap().to_owned(),
            proposal["amount_minor"].as_i64().unwrap(),
        ));
    }
    orders.sort();
    assert_eq!(
        orders,
        [("4821".to_owned(), 7900), ("4823".to_owned(), 3150)]
    );

    // The investigators' steps are the turn's events, each tagged.
    let events = app
        .get(&customer, &format!("/api/v1/conversations/{id}/events"))
        .await
        .json::<Value>()
        .await
        .unwrap();
    let investigators: std::collections::HashSet<&str> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "subagent_started")
        .map(|e| e["event"]["subagent"].as_str().unwrap())
        .collect();
    assert_eq!(investigators.len(), 4, "two per turn: {events}");
}

#[tokio::test]
async fn an_order_that_is_not_the_customers_cannot_be_found_on_their_account() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;
    // 4822 is customer2's; 9999 does not exist: the same answer for both.
    let theirs = app.say(&customer, &id, "please refund order 4822").await;
    assert!(
        reply(&theirs).contains("I can't find an order 4822 on your account"),
        "{theirs}"
    );
    assert!(!reply(&theirs).contains("tent"), "{theirs}");
    assert!(theirs["evidence"].as_array().unwrap().is_empty());
    let missing = app.say(&customer, &id, "please refund order 9999").await;
    assert_eq!(
        reply(&missing).replace("9999", "N"),
        reply(&theirs).replace("4822", "N")
    );
    let staff = app.token("approver").await;
    assert!(app.proposals_for(&staff, "4822").await.is_empty());
}

#[tokio::test]
async fn an_opened_item_gets_the_opened_items_rule_and_no_full_refund() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;
    app.say(
        &customer,
        &id,
        "check order 4821 and refund it if it qualifies",
    )
    .await;
    let opened = app.say(&customer, &id, "yes, I opened it").await;
    let text = reply(&opened);
    assert!(text.contains("[returns-policy:section-4]"), "{text}");
    assert!(text.contains("within 14 days"), "{text}");
    assert!(
        text.contains("15 % restocking fee would be 67.15 EUR"),
        "{text}"
    );
    assert!(text.contains("I haven't prepared a refund"), "{text}");
    assert!(opened["proposal_id"].is_null());
    assert!(app.proposals_for(&customer, "4821").await.is_empty());
}

#[tokio::test]
async fn a_damaged_item_is_proposed_under_the_damaged_items_section() {
    let app = ChatApp::spawn().await;
    let customer3 = app.token("customer3").await;
    let id = app.open(&customer3).await;
    app.say(&customer3, &id, "I'd like a refund for order 4830")
        .await;
    let done = app.say(&customer3, &id, "it arrived damaged").await;
    let proposal = app
        .proposal(&customer3, done["proposal_id"].as_str().unwrap())
        .await;
    assert_eq!(proposal["amount_minor"], 4480);
    let cited: Vec<&str> = proposal["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reference"].as_str().unwrap())
        .collect();
    assert_eq!(cited, ["order:4830", "returns-policy:section-2"]);
}

#[tokio::test]
async fn an_order_outside_the_policy_window_is_explained_not_proposed() {
    let app = ChatApp::spawn().await;
    let customer2 = app.token("customer2").await;
    let id = app.open(&customer2).await;
    let late = app.say(&customer2, &id, "refund order 4822 please").await;
    assert!(reply(&late).contains("45 days ago"), "{late}");
    assert!(reply(&late).contains("no longer qualifies"), "{late}");
    assert!(app.proposals_for(&customer2, "4822").await.is_empty());
}

#[tokio::test]
async fn an_order_the_records_show_undelivered_is_checked_in_the_browser_and_without_one_is_explained_not_proposed()
 {
    // Debian's Chromium at a path where there is none: the carrier's page
    // cannot be read, so the record's "shipped" stands and nothing is
    // guessed.
    let app = ChatApp::spawn_with(|settings| {
        settings.browser_executable = "/nonexistent/chromium".to_owned();
    })
    .await;
    let customer2 = app.token("customer2").await;
    let id = app.open(&customer2).await;
    let shipped = app.say(&customer2, &id, "what about order 4824?").await;
    assert!(
        reply(&shipped).contains("couldn't read the carrier's tracking page")
            && reply(&shipped).contains("no browser is installed at /nonexistent/chromium"),
        "{shipped}"
    );
    assert!(app.proposals_for(&customer2, "4824").await.is_empty());
}

#[tokio::test]
async fn the_carrier_page_read_in_the_browser_is_cited_and_its_screenshot_is_shown_to_staff_only() {
    let app = ChatApp::spawn().await;
    let customer2 = app.token("customer2").await;
    let approver = app.token("approver").await;
    let id = app.open(&customer2).await;
    // The records say "shipped"; the sandbox carrier delivered it yesterday.
    let asked = app
        .say(&customer2, &id, "I want to return order 4824")
        .await;
    assert!(
        reply(&asked).contains("[browser-check:brc_")
            && reply(&asked).contains("was the item opened"),
        "{asked}"
    );
    app.say(&customer2, &id, "no, it's still sealed").await;
    let proposals = app.proposals_for(&customer2, "4824").await;
    assert_eq!(proposals.len(), 1);
    let proposal = app
        .proposal(&approver, proposals[0]["id"].as_str().unwrap())
        .await;
    let page = proposal["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "browser_capture")
        .unwrap_or_else(|| panic!("no page cited: {proposal}"))
        .clone();
    let check = page["reference"]
        .as_str()
        .unwrap()
        .strip_prefix("browser-check:")
        .unwrap()
        .to_owned();
    let path = format!("/api/v1/browser-checks/{check}/screenshot");

    let shown = app.get(&approver, &path).await;
    assert_eq!(shown.status(), 200);
    assert_eq!(shown.headers()["content-type"], "image/png");
    let hash = shown.headers()["x-content-sha256"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(hash, page["version"].as_str().unwrap());
    let png = shown.bytes().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    assert_eq!(app.get(&customer2, &path).await.status(), 403);
    assert_eq!(
        app.get(&approver, "/api/v1/browser-checks/brc_none/screenshot")
            .await
            .status(),
        404
    );
}

#[tokio::test]
async fn the_offline_model_says_plainly_when_it_does_not_understand() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;
    let hello = app.say(&customer, &id, "hello").await;
    assert!(reply(&hello).contains("not a language model"), "{hello}");
    let nonsense = app.say(&customer, &id, "purple elephants dance").await;
    assert_eq!(nonsense["agent"], "coordinator");
    assert!(
        reply(&nonsense).contains("I didn't understand"),
        "{nonsense}"
    );
    // From the specialist too: unrelated text goes back to the coordinator.
    app.say(&customer, &id, "check order 4821").await;
    let unrelated = app.say(&customer, &id, "thanks").await;
    assert_eq!(unrelated["agent"], "coordinator");
}

#[tokio::test]
async fn chat_requests_are_validated_and_scoped() {
    let app = ChatApp::spawn().await;
    let customer = app.token("customer").await;
    let id = app.open(&customer).await;
    let path = format!("/api/v1/conversations/{id}/messages");

    for (body, status) in [
        (json!({ "text": "" }), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({ "text": "   " }), StatusCode::UNPROCESSABLE_ENTITY),
        (
            json!({ "text": "x".repeat(4001) }),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (json!({ "text": 4821 }), StatusCode::UNPROCESSABLE_ENTITY),
        (
            json!({ "text": "hi", "agent": "x" }),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (json!({}), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let response = app.post(&customer, &path, &body).await;
        assert_eq!(response.status(), status, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["code"], "invalid", "{error}");
    }

    let anonymous = app
        .client
        .get(format!("{}/api/v1/conversations/{id}", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    // Without credentials a write is refused before anything else, and told why.
    let anonymous = app
        .client
        .post(format!("{}{path}", app.address))
        .json(&json!({ "text": "hi" }))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    let other = app.token("customer2").await;
    let hidden = app.post(&other, &path, &json!({ "text": "hi" })).await;
    assert_eq!(hidden.status(), StatusCode::NOT_FOUND);
    let hidden = app
        .get(&other, &format!("/api/v1/conversations/{id}"))
        .await;
    assert_eq!(hidden.status(), StatusCode::NOT_FOUND);
    let missing = app
        .post(
            &customer,
            "/api/v1/conversations/cnv_nope/messages",
            &json!({ "text": "hi" }),
        )
        .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);

    let approver = app.token("approver").await;
    let readable = app
        .get(&approver, &format!("/api/v1/conversations/{id}"))
        .await;
    assert_eq!(readable.status(), StatusCode::OK);
    let read_only = app.post(&approver, &path, &json!({ "text": "hi" })).await;
    assert_eq!(read_only.status(), StatusCode::FORBIDDEN);

    let idle = app
        .post(
            &customer,
            &format!("/api/v1/conversations/{id}/stop"),
            &json!({}),
        )
        .await;
    assert_eq!(idle.status(), StatusCode::CONFLICT);
    let error: Value = idle.json().await.unwrap();
    assert_eq!(error["error"]["code"], "not_running");

    // Staff and agent accounts name the customer; customers cannot name another.
    let agent = app.token("agent").await;
    let nameless = app.post(&agent, "/api/v1/conversations", &json!({})).await;
    assert_eq!(nameless.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let customer_id = app.user_id("customer").await;
    let for_customer = app
        .post(
            &agent,
            "/api/v1/conversations",
            &json!({ "customer_id": customer_id }),
        )
        .await;
    assert_eq!(for_customer.status(), StatusCode::CREATED);
    let body: Value = for_customer.json().await.unwrap();
    assert_eq!(body["customer_id"], customer_id.as_str());
    let customer2_id = app.user_id("customer2").await;
    let someone_else = app
        .post(
            &customer,
            "/api/v1/conversations",
            &json!({ "customer_id": customer2_id }),
        )
        .await;
    assert_eq!(someone_else.status(), StatusCode::FORBIDDEN);
    let unknown = app
        .post(
            &agent,
            "/api/v1/conversations",
            &json!({ "customer_id": "usr_nobody" }),
        )
        .await;
    assert_eq!(unknown.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let error: Value = unknown.json().await.unwrap();
    assert_eq!(error["error"]["code"], "unknown_customer");
}

/// An OpenAI-compatible endpoint that accepts connections and never
/// answers; says on the channel each time a model call reaches it.
async fn silent_model_server() -> (String, tokio::sync::mpsc::UnboundedReceiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}/v1", listener.local_addr().unwrap());
    let (called, calls) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
            let _ = called.send(());
        }
    });
    (address, calls)
}

#[tokio::test]
async fn stop_over_http_ends_a_turn_stuck_on_a_slow_model_and_cancels_the_message_queued_behind_it()
{
    let (base_url, mut model_calls) = silent_model_server().await;
    let app = ChatApp::spawn_with(|settings| {
        settings.model_backend = ModelBackend::Openai;
        settings.model_base_url = Some(base_url);
        settings.model_name = Some("slow-model".into());
        settings.metrics_token = Some(SCRAPE_TOKEN.into());
    })
    .await;
    let stops_before = app
        .metric("countersign_chat_stop_duration_seconds_count")
        .await;
    let customer = app.token("customer").await;
    let response = app
        .post(&customer, "/api/v1/conversations", &json!({}))
        .await;
    let id = response.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/api/v1/conversations/{id}/messages");

    let turn = {
        let (client, url, token) = (
            app.client.clone(),
            format!("{}{path}", app.address),
            customer.clone(),
        );
        tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(token)
                .json(&json!({ "text": "what is your refund policy?" }))
                .send()
                .await
                .unwrap()
        })
    };
    // The turn holds the conversation once its model call is under way.
    tokio::time::timeout(Duration::from_secs(10), model_calls.recv())
        .await
        .expect("the turn reached the model")
        .expect("the model server is up");
    let conversation: Value = app
        .get(&customer, &format!("/api/v1/conversations/{id}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(conversation["running"], true);

    // A second message is kept, not refused: it waits for the next turn.
    let unknown_priority = app
        .post(
            &customer,
            &path,
            &json!({ "text": "hello?", "priority": "urgent" }),
        )
        .await;
    assert_eq!(unknown_priority.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let error: Value = unknown_priority.json().await.unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("priority must be \"now\", \"this_turn\" or \"later\""),
        "{error}"
    );
    let second = app
        .post(&customer, &path, &json!({ "text": "hello?" }))
        .await;
    assert_eq!(second.status(), StatusCode::ACCEPTED);
    let queued: Value = second.json().await.unwrap();
    assert_eq!(queued["priority"], "later");
    assert_eq!(queued["state"], "waiting");
    assert_eq!(queued["preempting"], false);
    let queued_id = queued["message_id"].as_str().unwrap().to_owned();
    let conversation: Value = app
        .get(&customer, &format!("/api/v1/conversations/{id}"))
        .await
        .json()
        .await
        .unwrap();
    let queue: Vec<(&str, &str)> = conversation["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["text"].as_str().unwrap(), m["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        queue,
        [
            ("what is your refund policy?", "running"),
            ("hello?", "waiting")
        ]
    );

    let stopped_at = Instant::now();
    let stop = app
        .post(
            &customer,
            &format!("/api/v1/conversations/{id}/stop"),
            &json!({}),
        )
        .await;
    assert_eq!(stop.status(), StatusCode::ACCEPTED);
    let receipt: Value = stop.json().await.unwrap();
    assert_eq!(receipt["stopping"], true);
    assert_eq!(receipt["cancelled_messages"], json!([queued_id]));
    let response = turn.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let result: Value = response.json().await.unwrap();
    assert_eq!(result["outcome"], "stopped");
    assert_eq!(result["reply"], "Stopped before finishing.");
    assert!(stopped_at.elapsed() < Duration::from_secs(5));

    let conversation: Value = app
        .get(&customer, &format!("/api/v1/conversations/{id}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(conversation["running"], false);
    assert_eq!(conversation["model"], "slow-model");
    let texts: Vec<&str> = conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["what is your refund policy?", "Stopped before finishing."]
    );
    let states: Vec<(&str, &str)> = conversation["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["text"].as_str().unwrap(), m["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("what is your refund policy?", "answered"),
            ("hello?", "cancelled")
        ]
    );
    // Operators see how long Stop took to land (timed per process; tests
    // share it: at least ours).
    assert!(
        app.metric("countersign_chat_stop_duration_seconds_count")
            .await
            >= stops_before + 1.0,
        "the Stop was timed"
    );
}

const SCRAPE_TOKEN: &str = "scrape-token-for-the-chat-tests-01";

impl ChatApp {
    /// The value of an unlabelled sample on `/metrics` (0 when not shown yet).
    async fn metric(&self, name: &str) -> f64 {
        let text = self
            .client
            .get(format!("{}/metrics", self.address))
            .bearer_auth(SCRAPE_TOKEN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .map_or(0.0, |value| value.trim().parse().unwrap())
    }
}

#[tokio::test]
async fn the_openapi_document_describes_the_chat_endpoints() {
    let app = ChatApp::spawn().await;
    let document: Value = app
        .client
        .get(format!("{}/api/openapi.json", app.address))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for path in [
        "/api/v1/conversations",
        "/api/v1/conversations/{id}",
        "/api/v1/conversations/{id}/messages",
        "/api/v1/conversations/{id}/stop",
        "/api/v1/conversations/{id}/events",
    ] {
        assert!(document["paths"][path].is_object(), "{path} missing");
    }
    assert!(document["components"]["schemas"]["TurnView"].is_object());
}

/// An Ollama-like model server: it cuts its first reply off at the output
/// cap, and, like vLLM serving a Mistral or Gemma chat template, refuses a
/// conversation whose user and assistant turns do not alternate.
async fn cutting_off_model_server() -> (String, Arc<std::sync::Mutex<Vec<Value>>>) {
    use axum::{Json, Router, extract::State, http::StatusCode as Status, routing::post};
    type Seen = Arc<std::sync::Mutex<Vec<Value>>>;
    async fn complete(State(seen): State<Seen>, Json(body): Json<Value>) -> (Status, Json<Value>) {
        let calls = {
            let mut seen = seen.lock().unwrap();
            seen.push(body.clone());
            seen.len()
        };
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["role"].as_str())
            .filter(|role| *role != "system")
            .collect();
        if roles.windows(2).any(|pair| pair == ["user", "user"]) {
            return (
                Status::BAD_REQUEST,
                Json(
                    json!({ "object": "error", "code": 400, "type": "BadRequestError",
                    "message": "Conversation roles must alternate user/assistant/user/assistant/..." }),
                ),
            );
        }
        let (content, finish_reason) = if calls == 1 {
            ("Your order 4821 was delivered 12 days ago (orde", "length")
        } else {
            ("Hello! Which order is it about?", "stop")
        };
        (
            Status::OK,
            Json(json!({
                "id": "chatcmpl-7", "object": "chat.completion", "created": 1_733_000_000,
                "model": "qwen2.5:7b", "system_fingerprint": "fp_ollama",
                "choices": [{ "index": 0, "finish_reason": finish_reason,
                              "message": { "role": "assistant", "content": content } }],
                "usage": { "prompt_tokens": 2100, "completion_tokens": 512, "total_tokens": 2612 },
            })),
        )
    }
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(seen.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (address, seen)
}

#[tokio::test]
async fn a_reply_cut_off_by_the_model_reaches_the_customer_as_could_not_finish_and_the_resend_is_accepted()
 {
    let (base_url, seen) = cutting_off_model_server().await;
    let app = ChatApp::spawn_with(|settings| {
        settings.model_backend = ModelBackend::Openai;
        settings.model_base_url = Some(base_url);
        settings.model_name = Some("qwen2.5:7b".into());
        settings.model_temperature = 0.1;
        settings.model_max_output_tokens = 512;
    })
    .await;
    let customer = app.token("customer").await;
    let response = app
        .post(&customer, "/api/v1/conversations", &json!({}))
        .await;
    let id = response.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/api/v1/conversations/{id}/messages");

    let cut = app
        .post(&customer, &path, &json!({ "text": "where is 4821?" }))
        .await;
    assert_eq!(cut.status(), StatusCode::BAD_GATEWAY);
    let error: Value = cut.json().await.unwrap();
    assert_eq!(error["error"]["code"], "model_failed");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("truncated"),
        "{error}"
    );
    let conversation: Value = app
        .get(&customer, &format!("/api/v1/conversations/{id}"))
        .await
        .json()
        .await
        .unwrap();
    let texts: Vec<&str> = conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["where is 4821?", engine::assistant::FAILED_NOTE]);

    let resent = app.say(&customer, &id, "where is 4821?").await;
    assert_eq!(reply(&resent), "Hello! Which order is it about?");

    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["temperature"], json!(0.1));
    assert_eq!(requests[0]["max_tokens"], json!(512));
}

/// A model server that plays `script` (chat completion bodies), one per
/// request, in order.
async fn scripted_model_server(script: Vec<Value>) -> String {
    use axum::{Json, Router, extract::State, routing::post};
    type Script = Arc<std::sync::Mutex<std::collections::VecDeque<Value>>>;
    async fn complete(State(script): State<Script>) -> Json<Value> {
        let next = script.lock().unwrap().pop_front();
        Json(next.unwrap_or_else(|| {
            completion(json!({ "role": "assistant", "content": "script exhausted" }))
        }))
    }
    let script: Script = Arc::new(std::sync::Mutex::new(script.into()));
    let app = Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(script);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

fn completion(message: Value) -> Value {
    let finish_reason = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_733_000_000,
        "model": "gpt-4o-2024-08-06",
        "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason }],
        "usage": { "prompt_tokens": 900, "completion_tokens": 30, "total_tokens": 930 },
    })
}

fn model_says(text: &str) -> Value {
    completion(json!({ "role": "assistant", "content": text }))
}

fn model_calls(id: &str, name: &str, arguments: Value) -> Value {
    completion(json!({
        "role": "assistant", "content": null,
        "tool_calls": [{ "id": id, "type": "function",
                         "function": { "name": name, "arguments": arguments.to_string() } }],
    }))
}

#[tokio::test]
async fn only_the_reply_to_was_the_item_opened_is_its_answer_and_a_status_question_then_prepares_nothing()
 {
    let base_url = scripted_model_server(vec![
        // "I want a refund for my tent": the model asks before it knows the order.
        model_calls(
            "c1",
            "handoff",
            json!({ "to": "refund_specialist", "reason": "refund" }),
        ),
        model_calls(
            "c2",
            "record_unknown",
            json!({ "question": "Was the item opened?" }),
        ),
        model_says("Was the item opened?"),
        // "no, still sealed", "thanks!", "can I talk to a human?"
        model_says("Thanks. Which order is it?"),
        model_says("You're welcome. Which order number?"),
        model_says("I can check your order for you here."),
        // "check order 4822"
        model_calls("c3", "get_order", json!({ "order_id": "4822" })),
        model_calls(
            "c4",
            "search_policy",
            json!({ "query": "return unopened items within 30 days of delivery" }),
        ),
        model_calls(
            "c5",
            "prepare_refund",
            json!({
                "order_id": "4822",
                "policy_references": ["returns-policy:section-3"],
                "recommendation": "The customer says the tent is still sealed: refund it in full."
            }),
        ),
        model_says("Proposal prepared; it is waiting for approval."),
        // "What is the status of my refund for 4822?"
        model_calls("c6", "refund_status", json!({ "order_id": "4822" })),
        model_says("Your refund for order 4822 is waiting for approval by our staff."),
    ])
    .await;
    let app = ChatApp::spawn_with(|settings| {
        settings.model_backend = ModelBackend::Openai;
        settings.model_base_url = Some(base_url);
        settings.model_name = Some("gpt-4o".into());
    })
    .await;
    let customer = app.token("customer2").await;
    let response = app
        .post(&customer, "/api/v1/conversations", &json!({}))
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let id = response.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for text in [
        "I want a refund for my tent",
        "no, still sealed",
        "thanks!",
        "can I talk to a human?",
    ] {
        let turn = app.say(&customer, &id, text).await;
        assert!(turn["proposal_id"].is_null(), "{turn}");
    }
    let named = app.say(&customer, &id, "check order 4822").await;
    let proposal_id = named["proposal_id"].as_str().unwrap().to_owned();

    let proposal = app.proposal(&customer, &proposal_id).await;
    let questions = proposal["open_questions"].as_array().unwrap();
    assert_eq!(questions.len(), 1, "{proposal}");
    assert_eq!(questions[0]["answer"], "no, still sealed", "{proposal}");
    let answered_in = &questions[0]["answered_in"];
    assert_eq!(answered_in["conversation_id"], id.as_str());
    let index = answered_in["message_index"].as_u64().unwrap();
    assert_eq!(
        answered_in["link"],
        format!("/chat?conversation={id}#m-{index}")
    );
    let conversation: Value = app
        .get(&customer, &format!("/api/v1/conversations/{id}"))
        .await
        .json()
        .await
        .unwrap();
    let message = &conversation["messages"][usize::try_from(index).unwrap()];
    assert_eq!(message["role"], "user");
    assert_eq!(message["text"], "no, still sealed");
    assert!(answered_in["at"].is_string(), "{answered_in}");

    let status = app
        .say(&customer, &id, "What is the status of my refund for 4822?")
        .await;
    assert!(status["proposal_id"].is_null(), "{status}");
    let proposals = app.proposals_for(&customer, "4822").await;
    assert_eq!(proposals.len(), 1, "no second proposal: {proposals:?}");
}

#[tokio::test]
async fn a_customer_asking_the_status_of_a_refund_awaiting_approval_is_told_it_and_no_proposal_is_made()
 {
    let app = ChatApp::spawn().await;
    let agent = app.token("agent").await;
    let submitted = app
        .post(
            &agent,
            "/api/v1/proposals",
            &json!({
                "order_id": "4822",
                "evidence": [{ "reference": "order:4822" }, { "reference": "returns-policy:section-3" }],
                "open_questions": [],
                "recommendation": "Unopened, within the window."
            }),
        )
        .await;
    assert_eq!(submitted.status(), StatusCode::CREATED);
    let live: Value = submitted.json().await.unwrap();
    let customer = app.token("customer2").await;
    let id = app.open(&customer).await;
    let before = app.proposals_for(&customer, "4822").await.len();

    let turn = app
        .say(&customer, &id, "What is the status of my refund for 4822?")
        .await;

    assert!(turn["proposal_id"].is_null(), "{turn}");
    assert!(
        reply(&turn).contains(live["id"].as_str().unwrap()),
        "{turn}"
    );
    assert!(reply(&turn).contains("waiting for approval"), "{turn}");
    assert!(reply(&turn).contains("they decide by"), "{turn}");
    assert_eq!(app.proposals_for(&customer, "4822").await.len(), before);
}
