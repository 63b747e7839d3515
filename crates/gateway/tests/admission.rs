//! The receiver's checks against real Ed25519 signatures over chains of
//! groups: each test is an attack or a mistake a peer could make, and the
//! refusal the receiver must answer with.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{DateTime, Duration, TimeZone, Utc};
use domain::{Currency, Money};
use gateway::jws::sign;
use gateway::{
    Admission, Allowlist, Budget, GroupName, KeyId, KeyRef, PinnedKey, PinnedKeys, Refusal,
    ReplayWindow, SignedEnvelope, SigningKey, TaskEnvelope, TaskKey, TaskKind, TaskKinds,
};
use serde_json::{Value, json};
use std::collections::HashMap;

const KIND: &str = "returns.inspection";

fn name(group: &str) -> GroupName {
    GroupName::parse(group).unwrap()
}

fn kind() -> TaskKind {
    TaskKind::parse(KIND).unwrap()
}

fn key_ref(group: &str, version: u32) -> KeyRef {
    KeyRef {
        group: name(group),
        key_id: KeyId::parse("gateway").unwrap(),
        version,
    }
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 0).unwrap()
}

fn budget(model_calls: u32, euros_minor: Option<i64>) -> Budget {
    Budget {
        model_calls,
        steps: 20,
        tokens: 50_000,
        money: euros_minor.map(|m| Money::new(m, Currency::EUR)),
        deadline: t0() + Duration::hours(1),
    }
}

/// Accepts `returns.inspection` with an `order_id` string.
struct Inspections;

impl TaskKinds for Inspections {
    fn check_input(&self, kind: &TaskKind, input: &Value) -> Option<Result<(), String>> {
        (kind.as_str() == KIND).then(|| match input["order_id"].as_str() {
            Some(_) => Ok(()),
            None => Err("order_id (a string) is required".to_owned()),
        })
    }
}

/// Groups with their signing keys, the keys every receiver has pinned, and
/// an allowlist where every pair of groups may send inspections.
struct World {
    keys: HashMap<KeyRef, SigningKey>,
    pins: PinnedKeys,
    allowlist: Allowlist,
    max_depth: u32,
}

impl World {
    fn new(groups: &[&str]) -> Self {
        let mut world = World {
            keys: HashMap::new(),
            pins: PinnedKeys::default(),
            allowlist: Allowlist::default(),
            max_depth: gateway::DEFAULT_MAX_DEPTH,
        };
        for from in groups {
            world.add_key(from, 1, None);
            for to in groups {
                world.allowlist.allow(name(from), name(to), kind());
            }
        }
        world
    }

    fn add_key(&mut self, group: &str, version: u32, usable_until: Option<DateTime<Utc>>) {
        let key = SigningKey::generate(key_ref(group, version)).unwrap();
        self.pins.pin(
            key_ref(group, version),
            PinnedKey {
                public_key: key.public_key(),
                valid_from: t0() - Duration::days(30),
                usable_until,
            },
        );
        self.keys.insert(key_ref(group, version), key);
    }

    fn sign(&self, envelope: TaskEnvelope) -> SignedEnvelope {
        sign(envelope.clone(), &self.keys[&envelope.signer]).unwrap()
    }

    fn admit_at(
        &self,
        me: &str,
        signed: &Value,
        now: DateTime<Utc>,
    ) -> Result<SignedEnvelope, Refusal> {
        Admission {
            me: &name(me),
            allowlist: &self.allowlist,
            pins: &self.pins,
            kinds: &Inspections,
            replay: ReplayWindow::default(),
            max_depth: self.max_depth,
        }
        .admit(signed, now)
    }

    fn admit(&self, me: &str, signed: &SignedEnvelope) -> Result<SignedEnvelope, Refusal> {
        self.admit_at(
            me,
            &serde_json::to_value(signed).unwrap(),
            t0() + Duration::seconds(1),
        )
    }
}

fn root(from: &str, to: &str, budget: Budget) -> TaskEnvelope {
    let key = TaskKey::parse(&format!("{from}:root")).unwrap();
    TaskEnvelope {
        v: 1,
        task_key: key.clone(),
        kind: kind(),
        input: json!({ "order_id": "4821" }),
        from: name(from),
        to: name(to),
        root_key: key,
        parent_key: None,
        route: vec![name(from)],
        depth: 0,
        budget,
        parent_remaining: None,
        created: t0(),
        nonce: format!("nonce-{from}-root"),
        signer: key_ref(from, 1),
        parent: None,
    }
}

/// The task `parent`'s receiver passes on to `to`.
fn delegate(parent: &SignedEnvelope, to: &str, budget: Budget, remaining: Budget) -> TaskEnvelope {
    let from = parent.envelope.to.clone();
    let mut route = parent.envelope.route.clone();
    route.push(from.clone());
    TaskEnvelope {
        v: 1,
        task_key: TaskKey::parse(&format!("{from}:child-of-{}", parent.envelope.task_key)).unwrap(),
        kind: kind(),
        input: json!({ "order_id": "4821" }),
        from: from.clone(),
        to: name(to),
        root_key: parent.envelope.root_key.clone(),
        parent_key: Some(parent.envelope.task_key.clone()),
        depth: parent.envelope.depth + 1,
        route,
        budget,
        parent_remaining: Some(remaining),
        created: parent.envelope.created + Duration::milliseconds(10),
        nonce: format!("nonce-{from}-{to}"),
        signer: key_ref(from.as_str(), 1),
        parent: Some(Box::new(parent.clone())),
    }
}

/// A → B → C, each passing on less than it was given.
fn chain_to_c(world: &World) -> SignedEnvelope {
    let ab = world.sign(root("support", "returns", budget(10, Some(5_000))));
    world.sign(delegate(
        &ab,
        "carriers",
        budget(4, None),
        budget(8, Some(5_000)),
    ))
}

#[test]
fn a_task_from_an_allowed_peer_signed_with_its_pinned_key_is_admitted() {
    let world = World::new(&["support", "returns"]);
    let signed = world.sign(root("support", "returns", budget(10, Some(5_000))));
    let admitted = world.admit("returns", &signed).unwrap();
    assert_eq!(admitted, signed);
}

#[test]
fn a_re_delegated_task_is_admitted_with_its_whole_chain_verified() {
    let world = World::new(&["support", "returns", "carriers"]);
    let admitted = world.admit("carriers", &chain_to_c(&world)).unwrap();
    let keys: Vec<&str> = admitted
        .chain()
        .iter()
        .map(|e| e.task_key.as_str())
        .collect();
    assert_eq!(keys, ["support:root", "returns:child-of-support:root"]);
}

#[test]
fn a_route_depth_or_budget_changed_after_signing_is_refused_as_a_bad_signature() {
    let world = World::new(&["support", "returns", "carriers"]);
    let signed = serde_json::to_value(chain_to_c(&world)).unwrap();
    let now = t0() + Duration::seconds(1);
    type Tampering = (&'static str, fn(&mut Value));
    let tamperings: [Tampering; 4] = [
        ("route", |v| v["envelope"]["route"] = json!(["returns"])),
        ("depth", |v| v["envelope"]["depth"] = json!(0)),
        ("budget", |v| {
            v["envelope"]["budget"]["model_calls"] = json!(8)
        }),
        ("the parent's budget", |v| {
            v["envelope"]["parent"]["envelope"]["budget"]["model_calls"] = json!(100)
        }),
    ];
    for (what, tamper) in tamperings {
        let mut tampered = signed.clone();
        tamper(&mut tampered);
        let refusal = world.admit_at("carriers", &tampered, now).unwrap_err();
        assert_eq!(refusal.code(), "bad_signature", "{what}: {refusal}");
    }
}

#[test]
fn a_parent_whose_own_signature_was_forged_is_refused_even_when_the_child_signs_it() {
    // A compromised `returns` raises the budget its parent was given and
    // signs its own child over the forged parent: the parent's signature,
    // made by `support`, no longer verifies.
    let world = World::new(&["support", "returns", "carriers"]);
    let mut ab = world.sign(root("support", "returns", budget(10, None)));
    ab.envelope.budget.model_calls = 1_000;
    let bc = world.sign(delegate(
        &ab,
        "carriers",
        budget(500, None),
        budget(900, None),
    ));
    let refusal = world.admit("carriers", &bc).unwrap_err();
    assert!(
        matches!(&refusal, Refusal::BadSignature { task_key, .. } if task_key.as_str() == "support:root"),
        "{refusal}"
    );
}

#[test]
fn a_task_passed_back_to_a_group_it_came_from_is_refused_as_a_cycle_from_the_signed_route() {
    let world = World::new(&["support", "returns"]);
    let ab = world.sign(root("support", "returns", budget(10, None)));
    let ba = world.sign(delegate(&ab, "support", budget(5, None), budget(9, None)));
    let refusal = world.admit("support", &ba).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "cycle: support already appears in the route support → returns"
    );
}

#[test]
fn a_peer_that_hides_where_a_task_has_been_is_refused_as_a_broken_chain() {
    let world = World::new(&["support", "returns", "carriers"]);
    let ab = world.sign(root("support", "returns", budget(10, None)));
    let mut hidden = delegate(&ab, "carriers", budget(5, None), budget(9, None));
    hidden.route = vec![name("returns")];
    hidden.depth = 0;
    let refusal = world.admit("carriers", &world.sign(hidden)).unwrap_err();
    assert_eq!(refusal.code(), "chain_broken", "{refusal}");
}

#[test]
fn a_chain_through_four_groups_past_the_depth_limit_is_refused() {
    let mut world = World::new(&["support", "returns", "carriers", "billing"]);
    world.max_depth = 1;
    let bc = chain_to_c(&world);
    assert!(
        world.admit("carriers", &bc).is_ok(),
        "one hop deep is within the limit"
    );
    let cd = world.sign(delegate(&bc, "billing", budget(2, None), budget(3, None)));
    assert_eq!(
        world.admit("billing", &cd).unwrap_err(),
        Refusal::TooDeep { depth: 2, limit: 1 }
    );
}

#[test]
fn a_child_asking_more_than_its_parent_says_remains_is_refused_as_over_budget() {
    let world = World::new(&["support", "returns", "carriers"]);
    let ab = world.sign(root("support", "returns", budget(10, Some(5_000))));
    let greedy = world.sign(delegate(&ab, "carriers", budget(9, None), budget(8, None)));
    let refusal = world.admit("carriers", &greedy).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "task returns:child-of-support:root is over budget: model_calls asked 9 but only 8 remains"
    );
}

#[test]
fn a_sender_claiming_more_remains_than_its_parent_was_given_is_refused_as_over_budget() {
    let world = World::new(&["support", "returns", "carriers"]);
    let ab = world.sign(root("support", "returns", budget(10, Some(5_000))));
    let inflated = world.sign(delegate(
        &ab,
        "carriers",
        budget(4, Some(9_000)),
        budget(10, Some(9_000)),
    ));
    let refusal = world.admit("carriers", &inflated).unwrap_err();
    assert!(
        matches!(&refusal, Refusal::OverBudget { excess, .. } if excess.dimension == "money"),
        "{refusal}"
    );
}

#[test]
fn a_pair_or_a_kind_not_on_the_allowlist_is_refused_before_any_signature_work() {
    let mut world = World::new(&["support", "returns"]);
    world.allowlist = Allowlist::default();
    world.allowlist.allow(
        name("support"),
        name("returns"),
        TaskKind::parse("returns.label").unwrap(),
    );
    let signed = world.sign(root("support", "returns", budget(1, None)));
    let mut value = serde_json::to_value(&signed).unwrap();
    // Not even a signature: refused on the claims alone.
    value["signature"] = json!(null);
    let refusal = world.admit_at("returns", &value, t0()).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "support may not send returns.inspection tasks to returns: the pair is not on the allowlist"
    );
    let unknown_sender = world.sign(root("returns", "support", budget(1, None)));
    assert_eq!(
        world.admit("support", &unknown_sender).unwrap_err().code(),
        "pair_not_allowed"
    );
}

#[test]
fn an_envelope_replayed_after_the_window_or_dated_in_the_future_is_refused_as_stale() {
    let world = World::new(&["support", "returns"]);
    let value =
        serde_json::to_value(world.sign(root("support", "returns", budget(1, None)))).unwrap();
    let later = world
        .admit_at("returns", &value, t0() + Duration::minutes(6))
        .unwrap_err();
    assert_eq!(
        later.to_string(),
        "the envelope is outside the replay window: created 360 s ago; at most 300 s are accepted"
    );
    let earlier = world
        .admit_at("returns", &value, t0() - Duration::minutes(1))
        .unwrap_err();
    assert_eq!(earlier.code(), "stale", "{earlier}");
    assert!(
        world
            .admit_at("returns", &value, t0() + Duration::minutes(4))
            .is_ok()
    );
}

#[test]
fn a_key_rotated_mid_chain_verifies_inside_the_overlap_window_and_not_after() {
    let mut world = World::new(&["support", "returns", "carriers"]);
    // support's v1 was retired at t0 + 30 s with a 2-minute overlap; v2 is current.
    let overlap_ends = t0() + Duration::seconds(150);
    world.add_key("support", 1, Some(overlap_ends));
    world.add_key("support", 2, None);
    let ab = world.sign(root("support", "returns", budget(10, None)));
    let bc = serde_json::to_value(world.sign(delegate(
        &ab,
        "carriers",
        budget(4, None),
        budget(8, None),
    )))
    .unwrap();
    assert!(
        world
            .admit_at("carriers", &bc, overlap_ends - Duration::seconds(1))
            .is_ok()
    );
    let refusal = world
        .admit_at("carriers", &bc, overlap_ends + Duration::seconds(1))
        .unwrap_err();
    assert_eq!(refusal.code(), "key_not_usable", "{refusal}");
    assert!(
        refusal.to_string().contains("support/gateway/v1"),
        "{refusal}"
    );
}

#[test]
fn an_envelope_signed_with_a_key_nobody_pinned_or_with_another_groups_key_is_refused() {
    let mut world = World::new(&["support", "returns"]);
    let mut unpinned = root("support", "returns", budget(1, None));
    unpinned.signer = key_ref("support", 7);
    world.keys.insert(
        key_ref("support", 7),
        SigningKey::generate(key_ref("support", 7)).unwrap(),
    );
    let refusal = world.admit("returns", &world.sign(unpinned)).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "key support/gateway/v7 is not pinned here"
    );

    // `returns` signs a task that claims to come from `support`.
    let mut impostor = root("support", "returns", budget(1, None));
    impostor.signer = key_ref("returns", 1);
    let refusal = world.admit("returns", &world.sign(impostor)).unwrap_err();
    assert_eq!(refusal.code(), "signer_mismatch", "{refusal}");
}

#[test]
fn a_task_for_another_group_is_refused_by_the_group_that_received_it() {
    let world = World::new(&["support", "returns", "carriers"]);
    let signed = world.sign(root("support", "carriers", budget(1, None)));
    assert_eq!(
        world.admit("returns", &signed).unwrap_err(),
        Refusal::WrongReceiver {
            to: name("carriers"),
            me: name("returns")
        }
    );
}

#[test]
fn an_unknown_kind_or_an_input_its_schema_rejects_is_refused_with_the_reason() {
    let mut world = World::new(&["support", "returns"]);
    let label = TaskKind::parse("returns.label").unwrap();
    world
        .allowlist
        .allow(name("support"), name("returns"), label.clone());
    let mut unknown = root("support", "returns", budget(1, None));
    unknown.kind = label.clone();
    assert_eq!(
        world.admit("returns", &world.sign(unknown)).unwrap_err(),
        Refusal::UnknownKind(label)
    );

    let mut invalid = root("support", "returns", budget(1, None));
    invalid.input = json!({ "order": 4821 });
    assert_eq!(
        world
            .admit("returns", &world.sign(invalid))
            .unwrap_err()
            .to_string(),
        "the input of returns.inspection is invalid: order_id (a string) is required"
    );
}

#[test]
fn a_hostile_chain_nested_beyond_any_limit_is_refused_before_any_signature_is_checked() {
    let world = World::new(&["support", "returns"]);
    let mut value =
        serde_json::to_value(world.sign(root("support", "returns", budget(1, None)))).unwrap();
    for _ in 0..gateway::chain::MAX_NESTING {
        value = json!({
            "envelope": { "from": "support", "kind": KIND, "parent": value },
            "signature": null
        });
    }
    let refusal = world.admit_at("returns", &value, t0()).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "the envelope is malformed: the chain nests 33 envelopes; at most 32 are read"
    );
}

#[test]
fn a_task_claiming_a_parent_it_does_not_embed_is_refused_as_a_broken_chain() {
    let world = World::new(&["support", "returns"]);
    let mut orphan = root("support", "returns", budget(1, None));
    orphan.parent_key = Some(TaskKey::parse("elsewhere:1").unwrap());
    assert_eq!(
        world
            .admit("returns", &world.sign(orphan))
            .unwrap_err()
            .code(),
        "chain_broken"
    );
}

#[test]
fn a_task_signed_by_the_brokers_current_key_verifies_at_a_peer_that_pinned_what_it_published() {
    let master = gateway::MasterKey::parse(&gateway::MasterKey::generate()).unwrap();
    let mut ring = gateway::KeyRing::create(
        name("support"),
        KeyId::parse("gateway").unwrap(),
        Duration::minutes(2),
        &master,
        t0() - Duration::days(1),
    )
    .unwrap();
    let mut world = World::new(&["support", "returns"]);
    let publish = |world: &mut World, ring: &gateway::KeyRing, now| {
        world.pins = PinnedKeys::default();
        for (key, pinned) in ring.published(now) {
            world.pins.pin(key, pinned);
        }
    };
    publish(&mut world, &ring, t0());
    let signer = ring.signer(&master).unwrap();
    let before = sign(root("support", "returns", budget(1, None)), &signer).unwrap();
    assert!(world.admit("returns", &before).is_ok());

    ring.rotate(&master, t0()).unwrap();
    let mut after = root("support", "returns", budget(1, None));
    after.signer = key_ref("support", 2);
    let after = sign(after, &ring.signer(&master).unwrap()).unwrap();
    publish(&mut world, &ring, t0());
    assert!(world.admit("returns", &after).is_ok());
    assert!(
        world.admit("returns", &before).is_ok(),
        "v1 inside its overlap"
    );

    publish(&mut world, &ring, t0() + Duration::minutes(3));
    assert_eq!(
        world.admit("returns", &before).unwrap_err(),
        Refusal::UnknownKey(key_ref("support", 1)),
        "v1 no longer published once its overlap ended"
    );
}

fn new_task(
    world: &World,
    key: &str,
    from: &str,
    to: &str,
    model_calls: u32,
) -> gateway::build::NewTask {
    gateway::build::NewTask {
        task_key: TaskKey::parse(key).unwrap(),
        kind: kind(),
        input: json!({ "order_id": "4821" }),
        to: name(to),
        budget: budget(model_calls, None),
        signer: world.keys[&key_ref(from, 1)].key_ref().clone(),
        created: t0(),
    }
}

#[test]
fn envelopes_built_for_a_root_and_a_delegation_are_admitted_at_each_hop() {
    use gateway::build::{delegate, root};
    let world = World::new(&["support", "returns", "carriers"]);
    let ab = world.sign(root(new_task(&world, "s:1", "support", "returns", 10)).unwrap());
    assert!(world.admit("returns", &ab).is_ok());
    let bc = delegate(
        &ab,
        budget(6, None),
        new_task(&world, "r:1", "returns", "carriers", 5),
        5,
    )
    .unwrap();
    assert_eq!(bc.route, [name("support"), name("returns")]);
    assert_eq!((bc.depth, bc.root_key.as_str()), (1, "s:1"));
    assert_ne!(bc.nonce, ab.envelope.nonce);
    assert!(world.admit("carriers", &world.sign(bc)).is_ok());
}

#[test]
fn a_sender_refuses_to_build_what_every_receiver_would_refuse() {
    use gateway::build::{delegate, root};
    let world = World::new(&["support", "returns", "carriers"]);
    assert_eq!(
        root(new_task(&world, "s:1", "support", "support", 1))
            .unwrap_err()
            .code(),
        "cycle"
    );
    let ab = world.sign(root(new_task(&world, "s:1", "support", "returns", 10)).unwrap());
    let back = delegate(
        &ab,
        budget(6, None),
        new_task(&world, "r:1", "returns", "support", 5),
        5,
    );
    assert_eq!(back.unwrap_err().code(), "cycle");
    let greedy = delegate(
        &ab,
        budget(6, None),
        new_task(&world, "r:1", "returns", "carriers", 7),
        5,
    );
    assert_eq!(greedy.unwrap_err().code(), "over_budget");
    let inflated = delegate(
        &ab,
        budget(11, None),
        new_task(&world, "r:1", "returns", "carriers", 5),
        5,
    );
    assert_eq!(inflated.unwrap_err().code(), "over_budget");
    let deep = delegate(
        &ab,
        budget(6, None),
        new_task(&world, "r:1", "returns", "carriers", 5),
        0,
    );
    assert_eq!(deep.unwrap_err(), Refusal::TooDeep { depth: 1, limit: 0 });
    let not_mine = delegate(
        &ab,
        budget(6, None),
        new_task(&world, "c:1", "carriers", "support", 5),
        5,
    );
    assert_eq!(not_mine.unwrap_err().code(), "chain_broken");
}
