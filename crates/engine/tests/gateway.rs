//! Receiving tasks from other agent groups through the engine, on a real
//! database (SQLite by default, PostgreSQL when `TEST_DATABASE_URL` is set):
//! what is accepted is in the inbox once with its journal event, what is
//! refused is journaled with its reason and leaves no task behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{Duration, TimeZone, Utc};
use engine::ManualClock;
use engine::gateway::{CancelError, KeyBroker, ReceiveError, Receiver};
use gateway::jws::sign;
use gateway::{
    Budget, GroupName, KeyId, KeyRef, KindRegistry, SignedEnvelope, SigningKey, TaskEnvelope,
    TaskKey, TaskKind,
};
use serde_json::{Value, json};
use std::sync::Arc;
use storage::gateway::inbox;
use storage::gateway::trust::{self, PairRow, PinnedKeyRow};
use storage::journal::{GATEWAY_STREAM, JournalFilter, task_stream};
use storage::testing::TestDatabase;

fn t0() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 0).unwrap()
}

fn name(group: &str) -> GroupName {
    GroupName::parse(group).unwrap()
}

fn kinds() -> Arc<KindRegistry> {
    let mut kinds = KindRegistry::default();
    kinds
        .register(
            TaskKind::parse("returns.inspection").unwrap(),
            "What the returns desk found in a returned parcel",
            json!({ "type": "object", "required": ["order_id"],
                    "properties": { "order_id": { "type": "string" } } }),
            json!({ "type": "object" }),
        )
        .unwrap();
    Arc::new(kinds)
}

struct Setup {
    test: TestDatabase,
    support: SigningKey,
    receiver: Receiver,
}

/// The returns group, trusting support's key for inspections.
async fn returns_group() -> Setup {
    let test = TestDatabase::new().await;
    let key = KeyRef {
        group: name("support"),
        key_id: KeyId::parse("gateway").unwrap(),
        version: 1,
    };
    let support = SigningKey::generate(key).unwrap();
    let db = test.db.conn();
    trust::pin_key(
        db,
        PinnedKeyRow {
            group_name: "support".into(),
            key_id: "gateway".into(),
            version: 1,
            public_key: URL_SAFE_NO_PAD.encode(support.public_key()),
            valid_from: t0() - Duration::days(1),
            usable_until: None,
            pinned_by: "usr_admin".into(),
            pinned_at: t0(),
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
            allowed_at: t0(),
        },
    )
    .await
    .unwrap();
    let clock = ManualClock::starting_at(t0() + Duration::seconds(2));
    let receiver = Receiver::new(
        test.db.clone(),
        clock.clock(),
        name("returns"),
        kinds(),
        runner::Wake::default(),
    );
    Setup {
        test,
        support,
        receiver,
    }
}

fn inspection(key: &str, nonce: &str, from: &str) -> TaskEnvelope {
    let task_key = TaskKey::parse(key).unwrap();
    TaskEnvelope {
        v: 1,
        task_key: task_key.clone(),
        kind: TaskKind::parse("returns.inspection").unwrap(),
        input: json!({ "order_id": "4821" }),
        from: name(from),
        to: name("returns"),
        root_key: task_key,
        parent_key: None,
        route: vec![name(from)],
        depth: 0,
        budget: Budget {
            model_calls: 4,
            steps: 8,
            tokens: 8_000,
            money: None,
            deadline: t0() + Duration::minutes(10),
        },
        parent_remaining: None,
        created: t0(),
        nonce: nonce.to_owned(),
        signer: KeyRef {
            group: name(from),
            key_id: KeyId::parse("gateway").unwrap(),
            version: 1,
        },
        parent: None,
    }
}

fn wire(signed: &SignedEnvelope) -> Value {
    serde_json::to_value(signed).unwrap()
}

async fn events(test: &TestDatabase, stream: &str) -> Vec<storage::journal::JournalEvent> {
    let filter = JournalFilter {
        stream: Some(stream.to_owned()),
        ..JournalFilter::default()
    };
    storage::journal::list(test.db.conn(), &filter, 0, 100)
        .await
        .unwrap()
        .0
}

#[tokio::test]
async fn a_task_delivered_twice_after_a_lost_acknowledgement_is_received_and_journaled_once() {
    let setup = returns_group().await;
    let signed = sign(inspection("support:t1", "n1", "support"), &setup.support).unwrap();
    let first = setup.receiver.receive(&wire(&signed)).await.unwrap();
    assert!(!first.resent);
    assert_eq!(first.task.state, "submitted");
    let again = setup.receiver.receive(&wire(&signed)).await.unwrap();
    assert_eq!(
        (again.task.task_id.as_str(), again.resent),
        (first.task.task_id.as_str(), true)
    );

    let stored = inbox::get(setup.test.db.conn(), &first.task.task_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.sender_group.as_str(), stored.task_key.as_str()),
        ("support", "support:t1")
    );
    let received = events(&setup.test, &task_stream(&first.task.task_id)).await;
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].kind, "gateway.task_received");
    assert_eq!(received[0].actor, "group:support");
    let payload: Value = serde_json::from_str(&received[0].payload).unwrap();
    assert_eq!(payload["signer"], "support/gateway/v1");
    assert_eq!(payload["route"], json!(["support"]));
}

#[tokio::test]
async fn a_refused_task_leaves_no_task_behind_and_its_reason_in_the_journal() {
    let setup = returns_group().await;
    // Signed by support's key but claiming to come from billing: billing
    // is on no allowlist, so it is refused before any signature work.
    let mut forged = inspection("billing:t1", "n1", "support");
    forged.from = name("billing");
    forged.route = vec![name("billing")];
    let signed = sign(forged, &setup.support).unwrap();
    let refused = setup.receiver.receive(&wire(&signed)).await.unwrap_err();
    let ReceiveError::Refused(refusal) = refused else {
        panic!("expected a refusal, got {refused:?}");
    };
    assert_eq!(refusal.code(), "pair_not_allowed");
    assert_eq!(
        inbox::find(setup.test.db.conn(), "billing", "billing:t1")
            .await
            .unwrap(),
        None
    );

    let journaled = events(&setup.test, GATEWAY_STREAM).await;
    assert_eq!(journaled.len(), 1);
    let payload: Value = serde_json::from_str(&journaled[0].payload).unwrap();
    assert_eq!(payload["code"], "pair_not_allowed");
    assert_eq!(payload["claimed_from"], "billing");
    assert_eq!(
        payload["reason"],
        "billing may not send returns.inspection tasks to returns: the pair is not on the allowlist"
    );
}

#[tokio::test]
async fn a_nonce_replayed_under_a_new_task_key_is_refused_as_a_replay() {
    let setup = returns_group().await;
    let first = sign(inspection("support:t1", "n1", "support"), &setup.support).unwrap();
    setup.receiver.receive(&wire(&first)).await.unwrap();
    let replay = sign(inspection("support:t2", "n1", "support"), &setup.support).unwrap();
    let refused = setup.receiver.receive(&wire(&replay)).await.unwrap_err();
    assert!(
        matches!(&refused, ReceiveError::Refused(r) if r.code() == "replayed"),
        "{refused:?}"
    );
    assert_eq!(
        inbox::find(setup.test.db.conn(), "support", "support:t2")
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn a_task_key_reused_for_a_different_task_is_refused_and_the_first_task_stands() {
    let setup = returns_group().await;
    let first = sign(inspection("support:t1", "n1", "support"), &setup.support).unwrap();
    let accepted = setup.receiver.receive(&wire(&first)).await.unwrap();
    let mut other = inspection("support:t1", "n2", "support");
    other.input = json!({ "order_id": "9999" });
    let refused = setup
        .receiver
        .receive(&wire(&sign(other, &setup.support).unwrap()))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ReceiveError::Refused(r) if r.code() == "key_reused"),
        "{refused:?}"
    );
    let stored = inbox::find(setup.test.db.conn(), "support", "support:t1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.id, accepted.task.task_id);
    assert!(stored.envelope.contains("4821"));
}

#[tokio::test]
async fn a_task_whose_signature_no_longer_matches_its_budget_is_refused_and_journaled() {
    let setup = returns_group().await;
    let signed = sign(inspection("support:t1", "n1", "support"), &setup.support).unwrap();
    let mut tampered = wire(&signed);
    tampered["envelope"]["budget"]["model_calls"] = json!(400);
    let refused = setup.receiver.receive(&tampered).await.unwrap_err();
    assert!(
        matches!(&refused, ReceiveError::Refused(r) if r.code() == "bad_signature"),
        "{refused:?}"
    );
    assert_eq!(events(&setup.test, GATEWAY_STREAM).await.len(), 1);
}

fn person(name: &str, roles: &[domain::Role]) -> engine::Actor {
    engine::Actor {
        user_id: format!("usr_{name}"),
        name: name.to_owned(),
        roles: domain::RoleSet::new(roles.iter().copied()),
        widget_session: None,
    }
}

#[tokio::test]
async fn only_an_admin_changes_what_the_gateway_trusts_and_every_change_is_journaled_with_who() {
    use engine::gateway::{GatewayTrust, KeyToPin, TrustError};
    use storage::journal::SETTINGS_STREAM;
    let test = TestDatabase::new().await;
    let trust = GatewayTrust::new(test.db.clone(), ManualClock::starting_at(t0()).clock());
    let admin = person("ada", &[domain::Role::Admin]);
    let approver = person("bob", &[domain::Role::Approver]);
    let public_key = URL_SAFE_NO_PAD.encode([9u8; 32]);
    let key = KeyToPin {
        group: "support",
        key_id: "gateway",
        version: 1,
        public_key: &public_key,
        valid_from: None,
        usable_until: None,
    };

    assert!(matches!(
        trust.pin_key(&approver, key.clone()).await,
        Err(TrustError::NotAllowed)
    ));
    assert!(trust.pin_key(&admin, key.clone()).await.unwrap());
    assert!(
        !trust.pin_key(&admin, key.clone()).await.unwrap(),
        "the same key again changes nothing"
    );
    let other_key = URL_SAFE_NO_PAD.encode([8u8; 32]);
    let swapped = trust
        .pin_key(
            &admin,
            KeyToPin {
                public_key: &other_key,
                ..key.clone()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        swapped.to_string(),
        "support/gateway/v1 is already pinned with another public key; a key version never changes, pin a new version"
    );
    let short = trust
        .pin_key(
            &admin,
            KeyToPin {
                public_key: "AAAA",
                ..key.clone()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(short, TrustError::BadPublicKey));
    let bad_group = trust
        .pin_key(
            &admin,
            KeyToPin {
                group: "Support Team",
                ..key.clone()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(bad_group, TrustError::Name(_)));

    assert!(
        trust
            .allow_pair(&admin, "support", "returns", "returns.inspection")
            .await
            .unwrap()
    );
    assert!(
        !trust
            .allow_pair(&admin, "support", "returns", "returns.inspection")
            .await
            .unwrap()
    );
    trust
        .retire_key(
            &admin,
            "support",
            "gateway",
            1,
            t0() + Duration::minutes(10),
        )
        .await
        .unwrap();
    assert!(matches!(
        trust
            .retire_key(&admin, "support", "gateway", 2, t0())
            .await,
        Err(TrustError::NoSuchKey(_))
    ));
    assert!(
        trust
            .disallow_pair(&admin, "support", "returns", "returns.inspection")
            .await
            .unwrap()
    );

    let kinds: Vec<String> = events(&test, SETTINGS_STREAM)
        .await
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "gateway_key_pinned",
            "gateway_pair_allowed",
            "gateway_key_retired",
            "gateway_pair_withdrawn"
        ]
    );
    let (keys, pairs) = trust.list().await.unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].usable_until, Some(t0() + Duration::minutes(10)));
    assert!(pairs.is_empty());
}

fn own_keys(test: &TestDatabase, clock: &ManualClock, master: &str) -> engine::gateway::OwnKeys {
    engine::gateway::OwnKeys::new(
        test.db.clone(),
        clock.clock(),
        name("support"),
        gateway::MasterKey::parse(master).unwrap(),
        Duration::minutes(10),
    )
}

#[tokio::test]
async fn the_groups_key_is_made_once_sealed_and_every_process_signs_with_the_same_one() {
    let test = TestDatabase::new().await;
    let clock = ManualClock::starting_at(t0());
    let master = gateway::MasterKey::generate();
    let (one, two) = (
        own_keys(&test, &clock, &master),
        own_keys(&test, &clock, &master),
    );
    let (a, b) = tokio::join!(one.current(), two.current());
    assert_eq!(a.unwrap().to_string(), "support/gateway/v1");
    assert_eq!(b.unwrap().to_string(), "support/gateway/v1");
    let (a, b) = (
        one.published().await.unwrap(),
        two.published().await.unwrap(),
    );
    assert_eq!(a, b, "two processes, one key");
    let public_key = a[0].1.public_key;
    let signature = two.sign(&a[0].0, b"probe").await.unwrap();
    assert!(
        ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, &public_key)
            .verify(b"probe", &signature)
            .is_ok(),
        "what the other process signs verifies with the published key"
    );

    let rows = storage::gateway::own_keys::versions(test.db.conn(), "support", "gateway")
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let seed_text = URL_SAFE_NO_PAD.encode(public_key);
    assert_ne!(rows[0].sealed, seed_text, "what is stored is sealed");

    let journaled = events(&test, storage::journal::SETTINGS_STREAM).await;
    assert_eq!(journaled.len(), 1);
    assert_eq!(
        (journaled[0].kind.as_str(), journaled[0].actor.as_str()),
        ("gateway_own_key_added", "system:gateway")
    );
}

#[tokio::test]
async fn after_a_rotation_the_new_version_signs_and_the_old_one_is_published_only_for_the_overlap()
{
    let test = TestDatabase::new().await;
    let clock = ManualClock::starting_at(t0());
    let master = gateway::MasterKey::generate();
    let keys = own_keys(&test, &clock, &master);
    keys.current().await.unwrap();
    clock.advance(Duration::hours(1));
    let by = engine::settings::ChangedBy::console();
    let rotated = keys.rotate(&by).await.unwrap();
    assert_eq!(rotated.version, 2);
    assert_eq!(keys.current().await.unwrap().version, 2);
    let versions = |published: Vec<(KeyRef, gateway::PinnedKey)>| -> Vec<u32> {
        published.into_iter().map(|(key, _)| key.version).collect()
    };
    assert_eq!(versions(keys.published().await.unwrap()), [1, 2]);
    clock.advance(Duration::minutes(11));
    assert_eq!(versions(keys.published().await.unwrap()), [2]);
}

#[tokio::test]
async fn with_the_wrong_master_key_nothing_signs_and_no_rotation_is_written() {
    let test = TestDatabase::new().await;
    let clock = ManualClock::starting_at(t0());
    let key = own_keys(&test, &clock, &gateway::MasterKey::generate())
        .current()
        .await
        .unwrap();
    let wrong = own_keys(&test, &clock, &gateway::MasterKey::generate());
    assert!(matches!(
        wrong.sign(&key, b"anything").await,
        Err(engine::gateway::OwnKeyError::Broker(
            gateway::BrokerError::WrongMasterKey(_)
        ))
    ));
    assert!(
        wrong
            .rotate(&engine::settings::ChangedBy::console())
            .await
            .is_err()
    );
    let rows = storage::gateway::own_keys::versions(test.db.conn(), "support", "gateway")
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
}

#[tokio::test]
async fn only_the_sending_group_cancels_a_task_and_only_until_it_is_answered() {
    let setup = returns_group().await;
    let db = setup.test.db.conn();
    let support = name("support");
    let first = sign(inspection("support:t1", "n1", "support"), &setup.support).unwrap();
    let task = setup.receiver.receive(&wire(&first)).await.unwrap().task;

    // Another group: the task does not exist for it.
    let other = setup.receiver.cancel(&name("billing"), &task.task_id).await;
    assert!(matches!(other, Err(CancelError::NotFound(_))), "{other:?}");

    let canceled = setup
        .receiver
        .cancel(&support, &task.task_id)
        .await
        .unwrap();
    assert_eq!(canceled.state, "canceled");
    assert_eq!(
        canceled.message.as_deref(),
        Some("canceled by the group that sent it")
    );
    // Twice: the same answer, one journal event.
    let again = setup
        .receiver
        .cancel(&support, &task.task_id)
        .await
        .unwrap();
    assert_eq!(again.state, "canceled");
    let kinds: Vec<String> = events(&setup.test, &task_stream(&task.task_id))
        .await
        .into_iter()
        .map(|event| event.kind)
        .collect();
    assert_eq!(kinds, ["gateway.task_received", "gateway.task_canceled"]);

    // An answered task keeps its answer.
    let second = sign(inspection("support:t2", "n2", "support"), &setup.support).unwrap();
    let answered = setup.receiver.receive(&wire(&second)).await.unwrap().task;
    let done = inbox::Outcome {
        result: Some(r#"{"condition":"sealed"}"#),
        ..inbox::Outcome::default()
    };
    assert!(
        inbox::advance(db, &answered.task_id, "submitted", "completed", done, t0())
            .await
            .unwrap()
    );
    let late = setup.receiver.cancel(&support, &answered.task_id).await;
    assert!(
        matches!(&late, Err(CancelError::NotCancelable { state, .. }) if state == "completed"),
        "{late:?}"
    );
}
