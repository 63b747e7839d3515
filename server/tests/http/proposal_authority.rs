//! Who may propose and how much, through the real server: only agent
//! service accounts and staff propose, under the name bound to their
//! credential; the submitter is shown; a credential cannot flood the
//! queue; one live proposal per order and request; a proposal stays out of
//! other customers' conversations.

use crate::support::{TestApp, json};
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

async fn token(app: &TestApp, user: &str) -> String {
    app.engine
        .accounts
        .create_token(user, "tests")
        .await
        .unwrap()
        .secret
}

async fn post(app: &TestApp, bearer: &str, path: &str, body: Value) -> Response {
    app.bare_client()
        .post(app.url(path))
        .bearer_auth(bearer)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn get(app: &TestApp, bearer: &str, path: &str) -> Value {
    let response = app
        .bare_client()
        .get(app.url(path))
        .bearer_auth(bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    json(response).await
}

/// A full refund of `order` citing the order and section 3, with `more`
/// fields added.
fn refund(order: &str, more: Value) -> Value {
    let mut body = json!({
        "order_id": order,
        "evidence": [{"reference": format!("order:{order}")}, {"reference": "returns-policy:section-3"}],
        "recommendation": "Unopened, within 30 days: refund in full under section 3.",
    });
    if let (Some(body), Value::Object(more)) = (body.as_object_mut(), more) {
        body.extend(more);
    }
    body
}

async fn propose(app: &TestApp, bearer: &str, body: Value) -> (StatusCode, Value) {
    let response = post(app, bearer, "/api/v1/proposals", body).await;
    let status = response.status();
    (status, json(response).await)
}

/// Every proposal stored for `order`, whatever its status.
async fn stored_for(app: &TestApp, order: &str) -> usize {
    let filter = storage::proposals::ProposalFilter {
        order_id: Some(order.to_owned()),
        ..Default::default()
    };
    storage::proposals::list(app.db().conn(), &filter, 500, 0)
        .await
        .unwrap()
        .len()
}

#[tokio::test]
async fn a_signed_in_customer_cannot_propose_a_refund_as_the_in_house_specialist() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;
    let csrf = app.csrf_token().await;
    let response = app
        .client
        .post(app.url("/api/v1/proposals"))
        .header("x-csrf-token", &csrf)
        .json(&refund(
            "4821",
            json!({
                "agent": "refund_specialist",
                "open_questions": [{"question": "Was the item opened?", "ask": "customer", "answer": "No, still sealed"}],
            }),
        ))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body = json(response).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "forbidden", "{body}");
    assert_eq!(
        stored_for(&app, "4821").await,
        0,
        "nothing reached the queue"
    );
}

#[tokio::test]
async fn an_outside_agent_cannot_pose_as_the_refund_specialist_and_proposes_under_its_own_name() {
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let (status, body) = propose(
        &app,
        &agent,
        refund("4821", json!({"agent": "refund_specialist"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("external:agent"), "{message}");
    assert_eq!(stored_for(&app, "4821").await, 0);

    // Its own name, given or left out, is fine (older clients send it).
    let (status, body) = propose(
        &app,
        &agent,
        refund("4821", json!({"agent": "external:agent"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["agent"], "external:agent");
}

#[tokio::test]
async fn the_submitter_is_shown_in_the_api_views_and_on_the_proposal_page() {
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let (status, created) = propose(&app, &agent, refund("4821", json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["submitted_by"]["name"], "agent", "{created}");
    let id = created["id"].as_str().unwrap();

    let approver = token(&app, "approver").await;
    let detail = get(&app, &approver, &format!("/api/v1/proposals/{id}")).await;
    assert_eq!(
        detail["proposal"]["submitted_by"]["name"], "agent",
        "{detail}"
    );
    let listed = get(&app, &approver, "/api/v1/proposals?order_id=4821").await;
    assert_eq!(listed[0]["submitted_by"]["name"], "agent", "{listed}");

    app.login_ok("approver").await;
    let (status, page) = app.get_page(&format!("/proposals/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(r#"data-testid="submitted-by">agent<"#),
        "the page names the submitter"
    );
}

#[tokio::test]
async fn the_proposal_page_names_each_decision_by_the_approvers_display_name() {
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let (status, created) = propose(&app, &agent, refund("4821", json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap();
    let approver = token(&app, "approver2").await;
    let response = post(
        &app,
        &approver,
        &format!("/api/v1/proposals/{id}/reject"),
        json!({"reason": "The jacket was worn."}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);

    app.login_ok("manager").await;
    let page = json(app.get(&format!("/fn/proposal_page?id={id}")).await).await;
    let decisions = page["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1, "{page}");
    assert_eq!(decisions[0]["approver"], "Abe Approver", "{page}");
}

#[tokio::test]
async fn a_credential_flooding_the_queue_is_answered_429_with_retry_after() {
    let app = TestApp::spawn_with(|settings| {
        settings.max_proposals_per_submitter = 2;
        settings.proposal_submission_window_minutes = 60;
    })
    .await;
    let agent = token(&app, "agent").await;
    for order in ["4821", "4822"] {
        let (status, body) = propose(&app, &agent, refund(order, json!({}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let response = post(&app, &agent, "/api/v1/proposals", refund("4830", json!({}))).await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&retry_after), "{retry_after}");
    let body = json(response).await;
    assert_eq!(body["error"]["code"], "throttled", "{body}");
    assert_eq!(stored_for(&app, "4830").await, 0);

    // Another credential still may.
    let manager = token(&app, "manager").await;
    let (status, body) = propose(&app, &manager, refund("4830", json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["agent"], "staff:manager");
}

#[tokio::test]
async fn a_second_proposal_for_an_order_with_a_live_one_is_refused_naming_it() {
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let (_, first) = propose(&app, &agent, refund("4821", json!({}))).await;
    let (status, body) = propose(&app, &agent, refund("4821", json!({}))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "conflict");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(first["id"].as_str().unwrap()), "{message}");
    assert!(message.contains("supersedes"), "{message}");
    assert_eq!(stored_for(&app, "4821").await, 1);
}

#[tokio::test]
async fn a_proposal_that_supersedes_the_live_one_leaves_the_old_one_unapprovable() {
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let (_, first) = propose(&app, &agent, refund("4821", json!({}))).await;
    let old = first["id"].as_str().unwrap();
    let (status, second) = propose(
        &app,
        &agent,
        refund("4821", json!({"amount_minor": 5000, "supersedes": old})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    assert_eq!(second["supersedes"], old);

    let approver = token(&app, "approver").await;
    let detail = get(&app, &approver, &format!("/api/v1/proposals/{old}")).await;
    assert_eq!(detail["proposal"]["status"], "superseded");
    let response = post(
        &app,
        &approver,
        &format!("/api/v1/proposals/{old}/approve"),
        json!({"action_digest": first["action_digest"]}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let events = get(&app, &approver, &format!("/api/v1/proposals/{old}/events")).await;
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["to_status"] == "superseded"),
        "{events}"
    );
}

#[tokio::test]
async fn proposals_for_different_lines_of_one_order_coexist_and_the_queue_marks_the_order() {
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let (status, bottle) = propose(
        &app,
        &agent,
        refund("4830", json!({"lines": ["BOTTLE-1L"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{bottle}");
    assert_eq!(bottle["amount_minor"], 2990);
    assert_eq!(bottle["lines"], json!(["BOTTLE-1L"]));
    let (status, cap) = propose(&app, &agent, refund("4830", json!({"lines": ["CAP-SUN"]}))).await;
    assert_eq!(status, StatusCode::CREATED, "{cap}");

    app.login_ok("approver").await;
    let queue = json(app.get("/fn/review_queue").await).await;
    let card = queue["cards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["proposal"]["id"] == bottle["id"])
        .unwrap();
    assert_eq!(card["other_live"], json!([cap["id"]]));
}

#[tokio::test]
async fn a_proposal_naming_another_customers_conversation_is_refused_and_their_transcript_stays_clean()
 {
    let app = TestApp::spawn().await;
    app.login_ok("customer2").await;
    let csrf = app.csrf_token().await;
    let response = app
        .client
        .post(app.url("/api/v1/conversations"))
        .header("x-csrf-token", &csrf)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let conversation = json(response).await;
    assert!(status.is_success(), "{status} {conversation}");
    let conversation_id = conversation["id"].as_str().unwrap();

    let agent = token(&app, "agent").await;
    // Order 4821 belongs to another customer than customer2.
    let (status, body) = propose(
        &app,
        &agent,
        refund("4821", json!({"conversation_id": conversation_id})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(stored_for(&app, "4821").await, 0);

    let transcript = json(
        app.get(&format!("/api/v1/conversations/{conversation_id}"))
            .await,
    )
    .await;
    assert_eq!(transcript["proposals"], json!([]), "{transcript}");
}

/// The ids in a list of proposals.
fn ids(list: &Value) -> Vec<String> {
    let mut ids: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn each_caller_lists_only_the_proposals_it_may_open_and_an_account_that_sees_none_is_refused()
{
    let app = TestApp::spawn().await;
    let agent = token(&app, "agent").await;
    let manager = token(&app, "manager").await;
    // The agent proposes for Cora's order, the manager for Cas's.
    let (status, for_cora) = propose(&app, &agent, refund("4821", json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{for_cora}");
    let (status, for_cas) = propose(&app, &manager, refund("4822", json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{for_cas}");
    let (cora_id, cas_id) = (
        for_cora["id"].as_str().unwrap().to_owned(),
        for_cas["id"].as_str().unwrap().to_owned(),
    );

    let mut both = vec![cora_id.clone(), cas_id.clone()];
    both.sort();
    let approver = token(&app, "approver").await;
    assert_eq!(ids(&get(&app, &approver, "/api/v1/proposals").await), both);
    // An agent account: what it asked for, not the manager's.
    assert_eq!(
        ids(&get(&app, &agent, "/api/v1/proposals").await),
        [cora_id.as_str()]
    );
    // A customer: the refunds to them, whoever proposed them.
    let cora = token(&app, "customer").await;
    assert_eq!(
        ids(&get(&app, &cora, "/api/v1/proposals").await),
        [cora_id.as_str()]
    );
    let cas = token(&app, "customer2").await;
    assert_eq!(
        ids(&get(&app, &cas, "/api/v1/proposals").await),
        [cas_id.as_str()]
    );
    // The same rule for one proposal: another's is not there at all.
    let response = app
        .bare_client()
        .get(app.url(&format!("/api/v1/proposals/{cas_id}")))
        .bearer_auth(&cora)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    // A shop account sees no proposals: the list says so.
    let shop = token(&app, "shop").await;
    let response = app
        .bare_client()
        .get(app.url("/api/v1/proposals"))
        .bearer_auth(&shop)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}
