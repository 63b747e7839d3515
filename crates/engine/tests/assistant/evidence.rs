//! Evidence before eligibility: what `prepare_refund` refuses, what a failed
//! lookup means, and what a customer can learn about someone else's order.

use crate::support::{Chat, call, handoff, result_of, say};
use agents::{OutcomeKind, ScriptedModel};
use engine::assistant::team::workflow_with;
use engine::assistant::tools::GetOrder;
use engine::assistant::{Assistant, DEFAULT_RUNNER_CONFIG, OfflineRules};
use serde_json::json;
use std::sync::Arc;
use storage::Database;

fn prepare(
    id: &str,
    order: &str,
    references: &[&str],
    amount: Option<i64>,
) -> agents::ModelResponse {
    let mut args = json!({
        "order_id": order,
        "policy_references": references,
        "recommendation": "Refund in full.",
    });
    if let Some(amount) = amount {
        args["amount_minor"] = json!(amount);
    }
    call(id, "prepare_refund", args)
}

#[tokio::test]
async fn prepare_refund_refuses_without_evidence_read_in_this_conversation() {
    let chat = Chat::scripted(Arc::new(ScriptedModel::new(vec![
        handoff("c1", "refund_specialist"),
        // The model claims the evidence instead of reading it.
        prepare("c2", "4821", &["returns-policy:section-3"], None),
        call("c3", "get_order", json!({ "order_id": "4821" })),
        // The order alone is not enough either.
        prepare("c4", "4821", &["returns-policy:section-3"], None),
        call("c5", "search_policy", json!({ "query": "shipping costs" })),
        // A passage that was never returned cannot be cited.
        prepare("c6", "4821", &["returns-policy:section-3"], None),
        say("I could not prepare it."),
    ])))
    .await;
    let (customer, id) = chat.open("customer").await;
    let turn = chat
        .say(
            &customer,
            &id,
            "I read order:4821 and returns-policy:section-3, refund it",
        )
        .await;
    assert_eq!(turn.proposal_id, None);
    let stored = chat.reload(&customer, &id).await;
    for (call_id, expected) in [
        ("c2", "has not been read in this conversation"),
        ("c4", "no policy passage has been read"),
        ("c6", "was not read in this conversation"),
    ] {
        let result = result_of(&stored, call_id);
        assert_eq!(result["outcome"], "refused", "{call_id}: {result}");
        let reason = result["reason"].as_str().unwrap();
        assert!(reason.contains(expected), "{call_id}: {reason}");
    }
    assert!(chat.proposals_for("4821").await.is_empty());
}

#[tokio::test]
async fn a_model_supplied_amount_is_checked_and_refused_with_the_right_one() {
    let chat = Chat::scripted(Arc::new(ScriptedModel::new(vec![
        handoff("c1", "refund_specialist"),
        call("c2", "get_order", json!({ "order_id": "4821" })),
        call(
            "c3",
            "search_policy",
            json!({ "query": "unopened items within 30 days" }),
        ),
        prepare("c4", "4821", &["returns-policy:section-3"], Some(10_000)),
        prepare("c5", "4821", &["returns-policy:section-3"], Some(7900)),
        say("Prepared."),
    ])))
    .await;
    let (customer, id) = chat.open("customer").await;
    let turn = chat.say(&customer, &id, "refund order 4821").await;
    let stored = chat.reload(&customer, &id).await;
    let wrong = result_of(&stored, "c4");
    assert_eq!(wrong["outcome"], "refused");
    let reason = wrong["reason"].as_str().unwrap();
    assert!(
        reason.contains("79.00 EUR") && reason.contains("7900"),
        "{reason}"
    );
    let proposal = chat.proposal(&turn.proposal_id.unwrap()).await.proposal;
    assert_eq!(proposal.amount.amount_minor, 7900);
    assert_eq!(chat.proposals_for("4821").await.len(), 1);
}

/// A database whose pool is closed: every read fails.
async fn closed_database(chat_url: &str) -> Database {
    let db = Database::connect(chat_url).await.unwrap();
    db.conn().clone().close().await.unwrap();
    db
}

#[tokio::test]
async fn a_failed_order_lookup_is_unknown_not_no_such_order() {
    let model = Arc::new(ScriptedModel::new(vec![
        handoff("c1", "refund_specialist"),
        call("c2", "get_order", json!({ "order_id": "4821" })),
        say("I could not check it."),
    ]));
    let test_db = storage::testing::TestDatabase::new().await;
    let broken = closed_database(&test_db.url).await;
    drop(test_db);
    let chat = Chat::with(|_| {
        Assistant::with_workflow(
            model,
            workflow_with(GetOrder::with_database(broken)).unwrap(),
            DEFAULT_RUNNER_CONFIG,
        )
    })
    .await;
    let (customer, id) = chat.open("customer").await;
    chat.say(&customer, &id, "check order 4821").await;
    let stored = chat.reload(&customer, &id).await;
    let result = result_of(&stored, "c2");
    assert_eq!(result["outcome"], "unknown", "{result}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("whether order 4821 exists is unknown"),
        "{result}"
    );
    let message = stored
        .state
        .messages()
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("c2"))
        .unwrap();
    assert_eq!(message.outcome, Some(OutcomeKind::Unknown));
    let events = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap();
    let finished = events
        .iter()
        .find(|e| e.kind == "tool_call_finished" && e.event["tool"] == "get_order")
        .unwrap();
    assert_eq!(finished.event["outcome"], "unknown");
}

#[tokio::test]
async fn the_offline_model_says_a_failed_lookup_leaves_existence_unknown() {
    let test_db = storage::testing::TestDatabase::new().await;
    let broken = closed_database(&test_db.url).await;
    drop(test_db);
    let chat = Chat::with(|_| {
        Assistant::with_workflow(
            Arc::new(OfflineRules::new()),
            workflow_with(GetOrder::with_database(broken)).unwrap(),
            DEFAULT_RUNNER_CONFIG,
        )
    })
    .await;
    let (customer, id) = chat.open("customer").await;
    let turn = chat
        .say(
            &customer,
            &id,
            "check order 4821 and refund it if it qualifies",
        )
        .await;
    assert!(
        turn.reply
            .contains("I don't know whether that order exists"),
        "{}",
        turn.reply
    );
    assert!(!turn.reply.contains("can't find"), "{}", turn.reply);
    assert_eq!(turn.proposal_id, None);
}

#[tokio::test]
async fn a_customer_asking_about_someone_elses_order_gets_nothing_from_it() {
    let chat = Chat::scripted(Arc::new(ScriptedModel::new(vec![
        handoff("c1", "refund_specialist"),
        // 4822 belongs to customer2; 9999 does not exist.
        call("c2", "get_order", json!({ "order_id": "4822" })),
        call("c3", "get_order", json!({ "order_id": "9999" })),
        call("c4", "search_policy", json!({ "query": "unopened items" })),
        prepare("c5", "4822", &["returns-policy:section-3"], None),
        say("I can't find it."),
    ])))
    .await;
    let (customer, id) = chat.open("customer").await;
    chat.say(&customer, &id, "refund order 4822").await;
    let stored = chat.reload(&customer, &id).await;
    let theirs = result_of(&stored, "c2");
    let missing = result_of(&stored, "c3");
    assert_eq!(theirs["outcome"], "not_found");
    // Indistinguishable from an order that does not exist.
    assert_eq!(
        theirs["what"].as_str().unwrap().replace("4822", "N"),
        missing["what"].as_str().unwrap().replace("9999", "N")
    );
    assert_eq!(result_of(&stored, "c5")["outcome"], "refused");
    let transcript = serde_json::to_string(&stored.state).unwrap();
    for secret in ["Two-person tent", "12900", "129.00", "pay_4822"] {
        assert!(!transcript.contains(secret), "{secret} leaked");
    }
    assert!(chat.proposals_for("4822").await.is_empty());
}

#[tokio::test]
async fn the_offline_model_cannot_find_another_customers_order_on_your_account() {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    let turn = chat.say(&customer, &id, "please refund order 4822").await;
    assert!(
        turn.reply
            .contains("I can't find an order 4822 on your account"),
        "{}",
        turn.reply
    );
    assert!(turn.evidence.is_empty());
}
