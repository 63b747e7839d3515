//! The review queue's server function: soonest expiry first, and a notice
//! instead of a silent cut when more wait than one page shows.

use crate::support::{TestApp, json};
use engine::core::Actor;
use engine::proposals::SubmitProposal;
use reqwest::StatusCode;
use serde_json::json as value;

/// The demo's outside agent, as the engine sees it.
async fn agent(app: &TestApp) -> Actor {
    let agent = storage::users::find_by_name(app.db().conn(), "agent")
        .await
        .unwrap()
        .unwrap();
    Actor {
        user_id: agent.id,
        name: agent.name,
        roles: agent.roles,
        widget_session: None,
    }
}

#[tokio::test]
async fn a_queue_longer_than_a_page_shows_the_soonest_to_expire_and_says_more_wait() {
    let pages = usize::try_from(app::queue::QUEUE_PAGE).unwrap() + 1;
    let app = TestApp::spawn_with(|settings| {
        settings.max_proposals_per_submitter = u64::try_from(pages).unwrap();
    })
    .await;
    let actor = agent(&app).await;
    // One live proposal per order and request: a page's worth of orders.
    let customer = storage::users::find_by_name(app.db().conn(), "customer3")
        .await
        .unwrap()
        .unwrap();
    let tx = app.db().begin_write().await.unwrap();
    for n in 0..pages {
        let order =
            engine::demo::delivered_cap_order(&format!("q{n}"), &customer.id, engine::now());
        storage::orders::insert(&*tx, &order).await.unwrap();
    }
    tx.commit().await.unwrap();
    for n in 0..pages {
        let request: SubmitProposal = serde_json::from_value(value!({
            "order_id": format!("q{n}"),
            "evidence": [{"reference": format!("order:q{n}")}, {"reference": "returns-policy:section-3"}],
            "recommendation": "Unopened, within 30 days.",
        }))
        .unwrap();
        app.engine
            .proposals
            .submit_proposal(&actor, request)
            .await
            .unwrap();
    }

    app.login_ok("approver").await;
    let response = app.get("/fn/review_queue").await;
    assert_eq!(response.status(), StatusCode::OK);
    let queue = json(response).await;
    let cards = queue["cards"].as_array().unwrap();
    assert_eq!(cards.len() as u64, app::queue::QUEUE_PAGE);
    assert_eq!(queue["total"], pages as u64);
    assert_eq!(queue["pages"], 2);
    let expiries: Vec<&str> = cards
        .iter()
        .map(|c| c["proposal"]["expires_at"].as_str().unwrap())
        .collect();
    assert!(
        expiries.windows(2).all(|w| w[0] <= w[1]),
        "soonest expiry first"
    );
}

#[tokio::test]
async fn two_live_proposals_for_one_order_are_marked_on_both_queue_cards() {
    let app = TestApp::spawn().await;
    let actor = agent(&app).await;
    // Different lines of one order may both be in flight.
    let request = |order: &str, lines: &[&str]| -> SubmitProposal {
        serde_json::from_value(value!({
            "order_id": order,
            "lines": lines,
            "evidence": [{"reference": format!("order:{order}")}, {"reference": "returns-policy:section-3"}],
            "recommendation": "Unopened, within 30 days.",
        }))
        .unwrap()
    };
    let first = app
        .engine
        .proposals
        .submit_proposal(&actor, request("4830", &["BOTTLE-1L"]))
        .await
        .unwrap();
    let second = app
        .engine
        .proposals
        .submit_proposal(&actor, request("4830", &["CAP-SUN"]))
        .await
        .unwrap();
    let alone = app
        .engine
        .proposals
        .submit_proposal(&actor, request("4821", &[]))
        .await
        .unwrap();

    app.login_ok("approver").await;
    let queue = json(app.get("/fn/review_queue").await).await;
    let other_live = |id: &str| -> Vec<String> {
        queue["cards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["proposal"]["id"] == id)
            .map(|c| serde_json::from_value(c["other_live"].clone()).unwrap())
            .unwrap()
    };
    assert_eq!(
        other_live(&first.proposal.id),
        vec![second.proposal.id.clone()]
    );
    assert_eq!(
        other_live(&second.proposal.id),
        vec![first.proposal.id.clone()]
    );
    assert!(other_live(&alone.proposal.id).is_empty());
    let (_, page) = app.get_page("/queue").await;
    assert_eq!(
        page.matches("data-testid=\"other-live\"").count(),
        2,
        "both cards warn"
    );
}

#[tokio::test]
async fn each_queue_card_names_the_customer_of_its_own_order() {
    let app = TestApp::spawn().await;
    let actor = agent(&app).await;
    let request = |order: &str| -> SubmitProposal {
        serde_json::from_value(value!({
            "order_id": order,
            "evidence": [{"reference": format!("order:{order}")}, {"reference": "returns-policy:section-3"}],
            "recommendation": "Unopened, within 30 days.",
        }))
        .unwrap()
    };
    let mut ids = Vec::new();
    for order in ["4821", "4830", "4822"] {
        let submitted = app
            .engine
            .proposals
            .submit_proposal(&actor, request(order))
            .await
            .unwrap();
        ids.push(submitted.proposal.id);
    }

    app.login_ok("approver").await;
    let queue = json(app.get("/fn/review_queue").await).await;
    let customer_of = |id: &str| -> String {
        queue["cards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["proposal"]["id"] == id)
            .map(|c| c["customer"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(customer_of(&ids[0]), "Cora Customer");
    assert_eq!(customer_of(&ids[1]), "Kit Customer");
    assert_eq!(customer_of(&ids[2]), "Cas Customer");
}
