//! Three agent groups, each a real server with its own database, over real
//! HTTP: support asks returns; where returns has no record of a parcel it
//! passes the task on to warehouse as a signed child (`gateway_forward`).
//! The chain's rules hold across machines: the route and depth travel
//! signed, a group already on the route is never asked again, a receiver
//! refuses a chain past its depth limit, and canceling at the root cancels
//! every hop.

use crate::groups::{
    always, answered, group, inspection, journal_kinds, key_pinned_at, lying_peer, pin_keys_of,
    sender, signing_peer_as,
};
use crate::support::TestApp;
use chrono::Utc;
use storage::gateway::{inbox, outbox, peers, trust};

/// A group that passes the inspections it has no record for to `forward`,
/// with `max_depth`, and runs its work lanes when `works`.
async fn forwarding_group(name: &str, forward: &str, max_depth: u32, works: bool) -> TestApp {
    let master = gateway::MasterKey::generate();
    TestApp::spawn_with(|s| {
        s.gateway_group = Some(name.into());
        s.gateway_master_key = Some(master.into());
        if !forward.is_empty() {
            s.gateway_forward = Some(format!("returns.inspection={forward}"));
        }
        s.gateway_max_depth = max_depth;
        s.work_runner = works;
    })
    .await
}

/// `to` takes `from`'s inspections, as its admin would allow them.
async fn allow(to: &TestApp, from: &str, to_name: &str) {
    trust::allow_pair(
        to.db().conn(),
        trust::PairRow {
            from_group: from.into(),
            to_group: to_name.into(),
            kind: "returns.inspection".into(),
            allowed_by: "usr_admin".into(),
            allowed_at: Utc::now(),
        },
    )
    .await
    .unwrap();
}

/// `from` reaches group `name` at `app`.
async fn reach(from: &TestApp, name: &str, app: &TestApp) {
    peers::set(
        from.db().conn(),
        peers::Peer {
            group_name: name.into(),
            url: app.url("/a2a"),
            updated_by: "usr_admin".into(),
            updated_at: Utc::now(),
        },
    )
    .await
    .unwrap();
}

/// Every group pins every other's keys (a chain's receiver verifies each
/// signature back to the root, and each sender the answers it gets); each
/// group allows and reaches the next one's inspections.
async fn link(groups: &[(&str, &TestApp)]) {
    for (_, at) in groups {
        for (_, of) in groups {
            if !std::ptr::eq(*at, *of) {
                pin_keys_of(at, of).await;
            }
        }
    }
    for pair in groups.windows(2) {
        let ((from, from_app), (to, to_app)) = (pair[0], pair[1]);
        allow(to_app, from, to).await;
        reach(from_app, to, to_app).await;
    }
}

async fn chain(support: &TestApp, returns: &TestApp, warehouse: &TestApp) {
    link(&[
        ("support", support),
        ("returns", returns),
        ("warehouse", warehouse),
    ])
    .await;
}

/// The warehouse recorded a parcel for order 4831 that the returns desk
/// never saw.
async fn warehouse_received_4831(warehouse: &TestApp) {
    storage::returns::parcels::record(
        warehouse.db().conn(),
        storage::returns::parcels::Parcel {
            order_id: "4831".into(),
            received_at: Utc::now() - chrono::Duration::days(1),
            condition: "opened".into(),
            note: Some("Box opened at the dock; item inside unused.".into()),
            inspected_by: "warehouse dock".into(),
        },
    )
    .await
    .unwrap();
}

async fn only_inbox_task(app: &TestApp) -> inbox::InboxTask {
    let tasks = inbox::recent(app.db().conn(), 10).await.unwrap();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    tasks.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_parcel_the_returns_desk_never_saw_is_answered_from_the_warehouse_through_a_signed_chain()
{
    let support = group("support", None).await;
    let returns = forwarding_group("returns", "warehouse", 5, true).await;
    let warehouse = group("warehouse", None).await;
    chain(&support, &returns, &warehouse).await;
    warehouse_received_4831(&warehouse).await;

    let sender = sender(&support);
    let task = answered(&sender, &sender.send(inspection("4831")).await.unwrap()).await;
    assert_eq!(task.state, "completed", "{task:?}");
    let result = task.result.unwrap();
    assert_eq!(result["condition"], "opened");
    assert!(result["note"].as_str().unwrap().contains("at the dock"));
    // Support asked returns; returns signed the answer it passed back.
    assert_eq!(task.answer_signer.as_deref(), Some("returns/gateway/v1"));

    // The warehouse holds the child: one hop deeper, the route signed
    // through returns, the same root, its parent the task support sent.
    let child = only_inbox_task(&warehouse).await;
    assert_eq!(
        (child.sender_group.as_str(), child.state.as_str()),
        ("returns", "completed")
    );
    assert_eq!(child.root_key, task.task_key);
    assert_eq!(child.parent_key.as_deref(), Some(task.task_key.as_str()));
    let envelope: serde_json::Value = serde_json::from_str(&child.envelope).unwrap();
    assert_eq!(
        envelope["envelope"]["route"],
        serde_json::json!(["support", "returns"])
    );
    assert_eq!(envelope["envelope"]["depth"], 1);
    // The child's budget is what remained of the parent's once returns
    // charged its own step, deadline included.
    let parent = &envelope["envelope"]["parent"]["envelope"];
    let (budget, parents) = (&envelope["envelope"]["budget"], &parent["budget"]);
    assert_eq!(budget["steps"], parents["steps"].as_u64().unwrap() - 1);
    assert_eq!(budget["model_calls"], parents["model_calls"]);
    assert_eq!(budget["deadline"], parents["deadline"]);
    assert_eq!(parent["task_key"], task.task_key.as_str());
    // What the chain spent, signed by returns: its step and the warehouse's.
    assert_eq!(
        task.spent,
        Some(gateway::Spent {
            steps: 2,
            ..gateway::Spent::default()
        })
    );

    // The returns group journaled passing it on in the parent's stream.
    let held = task.remote_task_id.unwrap();
    assert_eq!(
        journal_kinds(&returns, &storage::journal::task_stream(&held)).await,
        [
            "gateway.task_received",
            "gateway.task_working",
            "gateway.task_delegated",
            "gateway.task_completed"
        ]
    );
}

#[tokio::test]
async fn a_parcel_the_returns_desk_recorded_is_answered_there_without_asking_the_warehouse() {
    let support = group("support", None).await;
    let returns = forwarding_group("returns", "warehouse", 5, true).await;
    let warehouse = group("warehouse", None).await;
    chain(&support, &returns, &warehouse).await;
    engine::demo::seed_returned_parcels(returns.db(), Utc::now())
        .await
        .unwrap();

    let sender = sender(&support);
    let task = answered(&sender, &sender.send(inspection("4821")).await.unwrap()).await;
    assert_eq!(task.state, "completed", "{task:?}");
    assert_eq!(task.result.unwrap()["condition"], "sealed");
    assert!(
        inbox::recent(warehouse.db().conn(), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_lying_group_that_passes_a_task_back_to_the_group_it_came_through_is_refused_there_as_a_cycle()
 {
    let support = group("support", None).await;
    let returns = forwarding_group("returns", "rogue", 5, true).await;
    pin_keys_of(&returns, &support).await;
    pin_keys_of(&support, &returns).await;
    allow(&returns, "support", "returns").await;
    reach(&support, "returns", &returns).await;
    // Rogue: a group returns trusts, that turns the task down and keeps
    // what returns passed it.
    let rogue_key = key_pinned_at(&returns, "rogue").await;
    allow(&returns, "rogue", "returns").await;
    let rogue = lying_peer(always(
        serde_json::json!({ "id": "gtk_rogue", "status": { "state": "TASK_STATE_REJECTED" } }),
    ))
    .await;
    peers::set(
        returns.db().conn(),
        peers::Peer {
            group_name: "rogue".into(),
            url: format!("{}/a2a", rogue.uri()),
            updated_by: "usr_admin".into(),
            updated_at: Utc::now(),
        },
    )
    .await
    .unwrap();
    let sender = sender(&support);
    answered(&sender, &sender.send(inspection("4823")).await.unwrap()).await;
    let passed = rogue.received_requests().await.unwrap();
    let asked: serde_json::Value = serde_json::from_slice(&passed[0].body).unwrap();
    let child = gateway::SignedEnvelope::from_stored(
        &asked["params"]["message"]["metadata"][gateway::EXTENSION].to_string(),
    )
    .unwrap();
    assert_eq!(
        child.envelope.route.len(),
        2,
        "support → returns, sent to rogue"
    );

    // Rogue sends it back to returns, signed, route extended honestly.
    let mut route = child.envelope.route.clone();
    route.push(child.envelope.to.clone());
    let back = gateway::TaskEnvelope {
        v: gateway::ENVELOPE_VERSION,
        task_key: gateway::TaskKey::parse("rogue:back-1").unwrap(),
        kind: child.envelope.kind.clone(),
        input: child.envelope.input.clone(),
        from: rogue_key.key_ref().group.clone(),
        to: crate::groups::name("returns"),
        root_key: child.envelope.root_key.clone(),
        parent_key: Some(child.envelope.task_key.clone()),
        depth: u32::try_from(route.len()).unwrap() - 1,
        route,
        budget: child.envelope.budget.clone(),
        parent_remaining: Some(child.envelope.budget.clone()),
        created: Utc::now(),
        nonce: "rogue-nonce-1".into(),
        signer: rogue_key.key_ref().clone(),
        parent: Some(Box::new(child)),
    };
    let signed = gateway::jws::sign(back, &rogue_key).unwrap();
    let message = serde_json::json!({ "messageId": "m", "role": "ROLE_USER", "parts": [],
        "metadata": { gateway::EXTENSION: signed } });
    let answer = crate::groups::send_message(&returns, None, message).await;
    // Returns verified its own link in the chain, then saw itself on the
    // signed route: refused as the cycle it is, and journaled.
    let metadata = &answer["error"]["data"][0]["metadata"];
    assert_eq!(metadata["countersignReason"], "cycle", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("returns already appears in the route support → returns → rogue"),
        "{answer}"
    );
    assert!(
        journal_kinds(&returns, storage::journal::GATEWAY_STREAM)
            .await
            .contains(&"gateway.task_refused".to_owned())
    );
}

#[tokio::test]
async fn a_desk_told_to_pass_a_task_back_to_the_group_that_asked_refuses_the_cycle_and_says_why() {
    let support = group("support", None).await;
    // Misconfigured: returns would ask support about support's own task.
    let returns = forwarding_group("returns", "support", 5, true).await;
    pin_keys_of(&returns, &support).await;
    pin_keys_of(&support, &returns).await;
    allow(&returns, "support", "returns").await;
    allow(&support, "returns", "support").await;
    reach(&support, "returns", &returns).await;
    reach(&returns, "support", &support).await;

    let sender = sender(&support);
    let task = answered(&sender, &sender.send(inspection("4831")).await.unwrap()).await;
    assert_eq!(task.state, "failed", "{task:?}");
    let error = task.error.unwrap();
    assert!(
        error.contains("cycle: support already appears in the route support → returns"),
        "{error}"
    );
    // Nothing went back to support, and returns sent nothing at all.
    assert!(
        inbox::recent(support.db().conn(), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        outbox::recent(returns.db().conn(), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_four_group_chain_past_the_last_receivers_depth_limit_is_refused_there_and_the_root_learns_why()
 {
    let support = group("support", None).await;
    let returns = forwarding_group("returns", "warehouse", 5, true).await;
    let warehouse = forwarding_group("warehouse", "dock", 5, true).await;
    // The dock takes tasks at most one hop from their root.
    let dock = forwarding_group("dock", "", 1, true).await;
    link(&[
        ("support", &support),
        ("returns", &returns),
        ("warehouse", &warehouse),
        ("dock", &dock),
    ])
    .await;

    let sender = sender(&support);
    let task = answered(&sender, &sender.send(inspection("4831")).await.unwrap()).await;
    assert_eq!(task.state, "failed", "{task:?}");
    let error = task.error.unwrap();
    assert!(error.contains("dock did not answer (refused"), "{error}");
    assert!(
        error.contains("depth 2 is beyond this group's limit of 1"),
        "{error}"
    );
    // The warehouse passed it on (depth 2 is within its own limit); the
    // dock refused it before writing anything, and journaled why.
    assert_eq!(only_inbox_task(&warehouse).await.state, "failed");
    assert!(
        inbox::recent(dock.db().conn(), 10)
            .await
            .unwrap()
            .is_empty()
    );
    let refused = journal_kinds(&dock, storage::journal::GATEWAY_STREAM).await;
    assert_eq!(refused, ["gateway.task_refused"]);
}

#[tokio::test]
async fn canceling_at_the_root_cancels_the_task_at_every_group_down_the_chain() {
    let support = group("support", None).await;
    let returns = forwarding_group("returns", "warehouse", 5, true).await;
    // The warehouse takes tasks but runs no lanes: its task stays open.
    let warehouse = forwarding_group("warehouse", "", 5, false).await;
    chain(&support, &returns, &warehouse).await;
    let mut finished = returns.runner.as_ref().unwrap().finished();

    let sender = sender(&support);
    let sent = sender.send(inspection("4831")).await.unwrap();
    // Returns passed it on and the warehouse acknowledged the child.
    loop {
        let end = finished.recv().await.unwrap();
        if end.kind == "gateway.relay" {
            assert_eq!(end.state, "done", "{end:?}");
            break;
        }
    }
    assert_eq!(only_inbox_task(&warehouse).await.state, "submitted");

    assert!(sender.cancel(&sent.id, "user:admin").await.unwrap());
    let task = answered(&sender, &sent).await;
    assert_eq!(task.state, "canceled", "{task:?}");
    // Returns canceled its own task and the child it passed on, and the
    // warehouse canceled the child.
    let returns_sender = crate::groups::sender(&returns);
    let child = returns_sender
        .tasks_for(&format!("inbox:{}", task.remote_task_id.unwrap()))
        .await
        .unwrap()
        .pop()
        .unwrap();
    let child = answered(&returns_sender, &child).await;
    assert_eq!(child.state, "canceled", "{child:?}");
    assert_eq!(only_inbox_task(&warehouse).await.state, "canceled");
    assert_eq!(
        journal_kinds(&returns, &storage::journal::task_stream(&child.id)).await,
        [
            "gateway.task_sent",
            "gateway.task_delivered",
            "gateway.cancel_requested",
            "gateway.task_canceled"
        ]
    );
}

#[tokio::test]
async fn a_grandchild_that_spends_beyond_its_budget_stops_every_task_above_it() {
    let support = group("support", None).await;
    let returns = forwarding_group("returns", "warehouse", 5, true).await;
    link(&[("support", &support), ("returns", &returns)]).await;
    // The warehouse is not Countersign: it signs with a key returns pinned,
    // and claims 99 steps for a task given 3.
    let key = key_pinned_at(&returns, "warehouse").await;
    let overspent = gateway::Spent {
        steps: 99,
        ..gateway::Spent::default()
    };
    let result = serde_json::json!({
        "received_at": null, "condition": "sealed", "note": "trust me"
    });
    let warehouse = lying_peer(signing_peer_as(key, "returns", overspent, result, |_| {})).await;
    peers::set(
        returns.db().conn(),
        peers::Peer {
            group_name: "warehouse".into(),
            url: format!("{}/a2a", warehouse.uri()),
            updated_by: "usr_admin".into(),
            updated_at: Utc::now(),
        },
    )
    .await
    .unwrap();

    let sender = sender(&support);
    let task = answered(&sender, &sender.send(inspection("4831")).await.unwrap()).await;
    assert_eq!(task.state, "failed", "{task:?}");
    assert_eq!(task.result, None);
    let error = task.error.unwrap();
    assert!(
        error.contains(
            "warehouse spent more than the task's budget: steps asked 99 but only 3 remains"
        ),
        "{error}"
    );
    // Returns journaled the overspend on its child and failed its own task.
    let child = crate::groups::sender(&returns)
        .tasks_for(&format!("inbox:{}", task.remote_task_id.clone().unwrap()))
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(child.state, "failed");
    assert_eq!(child.result, None);
    let kinds = journal_kinds(&returns, &storage::journal::task_stream(&child.id)).await;
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("gateway.task_overspent")
    );
    let held = inbox::get(returns.db().conn(), &task.remote_task_id.unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.state, "failed");
}

#[tokio::test]
async fn a_task_whose_budget_cannot_cover_the_desks_own_step_is_declined_not_overspent() {
    let support = group("support", None).await;
    let returns = forwarding_group("returns", "", 5, true).await;
    link(&[("support", &support), ("returns", &returns)]).await;
    engine::demo::seed_returned_parcels(returns.db(), Utc::now())
        .await
        .unwrap();

    let sender = sender(&support);
    let mut ask = inspection("4821");
    ask.budget.steps = 0;
    let task = answered(&sender, &sender.send(ask).await.unwrap()).await;
    assert_eq!(task.state, "failed", "{task:?}");
    let error = task.error.unwrap();
    assert!(
        error.contains("does not cover this group's work on it: steps asked 1 but only 0 remains"),
        "{error}"
    );
}
