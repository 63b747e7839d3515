//! Who may open which page and call which server function.

use crate::support::{TestApp, json};

use reqwest::StatusCode;

#[tokio::test]
async fn a_signed_out_visitor_is_sent_to_sign_in_with_the_page_to_return_to() {
    let app = TestApp::spawn().await;

    let home = app.get("/").await;
    assert_eq!(home.status(), StatusCode::SEE_OTHER);
    assert_eq!(home.headers()["location"], "/login?next=%2F");

    let queue = app.get("/queue?tab=mine").await;
    assert_eq!(queue.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        queue.headers()["location"],
        "/login?next=%2Fqueue%3Ftab%3Dmine"
    );

    let (status, html) = app.get_page("/login?next=%2F").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("Sign in"), "{html}");
}

#[tokio::test]
async fn a_customer_is_refused_the_review_queue_page_and_staff_order_function() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;

    let (status, html) = app.get_page("/queue").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(html.contains("You do not have access to this page"));

    let response = app.get("/fn/staff_order?order_id=4821").await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let body = json(response).await;
    assert_eq!(body["error"]["code"], "forbidden");
    assert_eq!(
        body["error"]["message"],
        "this needs the approver or manager or admin role"
    );
}

#[tokio::test]
async fn an_approver_opens_the_review_queue_and_reads_any_order() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;

    let (status, html) = app.get_page("/queue").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("Review queue"), "{html}");

    let response = app.get("/fn/staff_order?order_id=4821").await;
    assert_eq!(response.status(), StatusCode::OK);
    let order = json(response).await;
    assert_eq!(order["id"], "4821");
    assert_eq!(order["total"]["amount_minor"], 7900);
    assert_eq!(order["lines"][0]["sku"], "JKT-TRAIL-M");

    assert_eq!(order["proposals"], serde_json::json!([]));

    let missing = app.get("/fn/staff_order?order_id=0000").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(json(missing).await["error"]["code"], "not_found");
}

#[tokio::test]
async fn a_signed_out_caller_of_a_server_function_is_unauthenticated() {
    let app = TestApp::spawn().await;
    let response = app.get("/fn/staff_order?order_id=4821").await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(json(response).await["error"]["code"], "unauthenticated");
}

#[tokio::test]
async fn a_customer_sees_only_their_own_orders() {
    let app = TestApp::spawn().await;
    app.login_ok("customer").await;

    let response = app.get("/fn/my_orders").await;

    assert_eq!(response.status(), StatusCode::OK);
    let orders = json(response).await;
    let mut ids: Vec<&str> = orders
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["4821", "4823"]);

    app.logout().await;
    app.login_ok("approver").await;
    let staff = app.get("/fn/my_orders").await;
    assert_eq!(staff.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn head_requests_are_guarded_like_get() {
    let app = TestApp::spawn().await;
    let anonymous = app.client.head(app.url("/")).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);

    app.login_ok("customer").await;
    let customer = app.client.head(app.url("/queue")).send().await.unwrap();
    assert_eq!(customer.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_mistyped_address_shows_the_not_found_page_with_the_person_still_signed_in() {
    let app = TestApp::spawn().await;
    app.login_ok("approver").await;
    let (status, html) = app.get_page("/queue-typo").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        html.contains("data-testid=\"signed-in-as\""),
        "the page's header still knows who is signed in: {html}"
    );
}

#[tokio::test]
async fn staff_looking_up_an_order_reach_every_refund_proposed_for_it() {
    let app = TestApp::spawn().await;
    let proposal = crate::refund::propose(&app, "4821").await;
    app.login_ok("approver").await;
    let order = json(app.get("/fn/staff_order?order_id=4821").await).await;
    let listed = order["proposals"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{order}");
    assert_eq!(listed[0]["id"], proposal["id"]);
    assert_eq!(listed[0]["status"], "awaiting_approval");
    assert_eq!(listed[0]["amount"]["amount_minor"], 7900);

    let other = json(app.get("/fn/staff_order?order_id=4822").await).await;
    assert_eq!(
        other["proposals"],
        serde_json::json!([]),
        "only this order's"
    );
}

#[tokio::test]
async fn only_an_admin_reads_the_policy_text_in_force_and_an_unknown_policy_is_not_found() {
    let app = TestApp::spawn().await;
    app.login_ok("manager").await;
    let refused = app
        .get("/fn/admin_policy_in_force?slug=returns-policy")
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);

    let app = TestApp::spawn().await;
    app.login_ok("admin").await;
    let response = app
        .get("/fn/admin_policy_in_force?slug=returns-policy")
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text: String = response.json().await.unwrap();
    assert!(text.starts_with("# Returns and refunds policy\n"), "{text}");
    assert!(text.contains("## 3. Unopened items"), "{text}");

    let missing = app
        .get("/fn/admin_policy_in_force?slug=no-such-policy")
        .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        json(missing).await["error"]["message"],
        "no policy is called no-such-policy"
    );
}
