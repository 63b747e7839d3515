//! A group whose key lives in Vault's transit engine (the documented HTTP
//! API, played by a mock server that holds real Ed25519 keys): its tasks,
//! its peer tokens and its agent card are signed by Vault, a peer verifies
//! them with the public keys Vault publishes, a rotation is Vault's, and a
//! Vault that is down or lies makes nothing leave.

use crate::groups::{
    answered, group, inspection, journal_kinds, pin, reach, sender, trust_each_other,
};
use crate::support::TestApp;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use gateway::{GroupName, KeyId, KeyRef, SigningKey};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use storage::gateway::outbox;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate, matchers::any};

const TOKEN: &str = "hvs.test-token";
const KEY: &str = "countersign-support";

/// Vault's transit engine for one key, as its API documentation describes
/// it: keys made, read, rotated; signatures `vault:vN:<base64>`.
#[derive(Default)]
struct Transit {
    versions: Mutex<Vec<(SigningKey, DateTime<Utc>)>>,
    /// Answer 503 to everything (sealed, or down).
    down: AtomicBool,
    /// Sign with a key it does not publish.
    lies: AtomicBool,
    /// The `key_version` of every sign request.
    signed_versions: Mutex<Vec<u64>>,
}

fn reply(status: u16, body: Value) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(body)
}

fn version_key(version: usize) -> SigningKey {
    let key = KeyRef {
        group: GroupName::parse("support").unwrap(),
        key_id: KeyId::parse(KEY).unwrap(),
        version: u32::try_from(version).unwrap(),
    };
    SigningKey::generate(key).unwrap()
}

impl Transit {
    fn add_version(&self) {
        let mut versions = self.versions.lock().unwrap();
        let next = versions.len() + 1;
        versions.push((version_key(next), Utc::now()));
    }

    fn key_data(&self) -> Value {
        let versions = self.versions.lock().unwrap();
        let keys: serde_json::Map<String, Value> = versions
            .iter()
            .enumerate()
            .map(|(i, (key, created))| {
                (
                    (i + 1).to_string(),
                    json!({
                        "public_key": STANDARD.encode(key.public_key()),
                        "creation_time": created.to_rfc3339(),
                        "name": "ed25519",
                    }),
                )
            })
            .collect();
        json!({
            "type": "ed25519",
            "name": KEY,
            "latest_version": versions.len(),
            "min_decryption_version": 1,
            "exportable": false,
            "keys": keys,
        })
    }

    fn sign(&self, body: &Value) -> ResponseTemplate {
        let input = STANDARD.decode(body["input"].as_str().unwrap()).unwrap();
        let versions = self.versions.lock().unwrap();
        let version = body["key_version"]
            .as_u64()
            .filter(|v| *v > 0)
            .unwrap_or(versions.len() as u64);
        self.signed_versions.lock().unwrap().push(version);
        let Some((key, _)) = versions.get(usize::try_from(version).unwrap() - 1) else {
            return reply(400, json!({ "errors": ["invalid key version"] }));
        };
        let signature = if self.lies.load(Ordering::SeqCst) {
            version_key(99).sign(&input)
        } else {
            key.sign(&input)
        };
        reply(
            200,
            json!({ "data": {
                "signature": format!("vault:v{version}:{}", STANDARD.encode(signature)),
                "key_version": version,
            }}),
        )
    }

    fn verify(&self, body: &Value) -> ResponseTemplate {
        let input = STANDARD.decode(body["input"].as_str().unwrap()).unwrap();
        let text = body["signature"].as_str().unwrap();
        let (version, encoded) = text
            .strip_prefix("vault:v")
            .and_then(|rest| rest.split_once(':'))
            .unwrap();
        let signature = STANDARD.decode(encoded).unwrap();
        let versions = self.versions.lock().unwrap();
        let (key, _) = &versions[version.parse::<usize>().unwrap() - 1];
        let valid =
            ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, key.public_key())
                .verify(&input, &signature)
                .is_ok();
        reply(200, json!({ "data": { "valid": valid } }))
    }
}

impl Respond for &'static Transit {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if self.down.load(Ordering::SeqCst) {
            return reply(503, json!({ "errors": ["Vault is sealed"] }));
        }
        let token = request.headers.get("x-vault-token");
        if token.and_then(|t| t.to_str().ok()) != Some(TOKEN) {
            return reply(403, json!({ "errors": ["permission denied"] }));
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let path = request.url.path().to_owned();
        let key_path = format!("/v1/transit/keys/{KEY}");
        let method = request.method.as_str();
        match (method, path.as_str()) {
            ("GET", p) if p == key_path => {
                if self.versions.lock().unwrap().is_empty() {
                    reply(404, json!({ "errors": [] }))
                } else {
                    reply(200, json!({ "data": self.key_data() }))
                }
            }
            ("POST", p) if p == key_path => {
                assert_eq!(body["type"], "ed25519", "{body}");
                if self.versions.lock().unwrap().is_empty() {
                    self.add_version();
                }
                ResponseTemplate::new(204)
            }
            ("POST", p) if p == format!("{key_path}/rotate") => {
                self.add_version();
                reply(200, json!({ "data": self.key_data() }))
            }
            ("POST", p) if p == format!("/v1/transit/sign/{KEY}") => self.sign(&body),
            ("POST", p) if p == format!("/v1/transit/verify/{KEY}") => self.verify(&body),
            _ => reply(
                404,
                json!({ "errors": [format!("no handler for {method} {path}")] }),
            ),
        }
    }
}

/// A fake Vault and the support group whose key lives in it, reaching
/// Vault with `token`.
async fn support_in_vault_with(token: &str) -> (&'static Transit, MockServer, TestApp) {
    let transit: &'static Transit = Box::leak(Box::default());
    let vault = MockServer::start().await;
    Mock::given(any()).respond_with(transit).mount(&vault).await;
    let address = vault.uri();
    let support = TestApp::spawn_with(|s| {
        s.gateway_group = Some("support".into());
        s.gateway_key_broker = server::config::KeyBrokerKind::Vault;
        s.gateway_vault_address = Some(address);
        s.gateway_vault_token = Some(token.to_owned().into());
    })
    .await;
    (transit, vault, support)
}

async fn support_in_vault() -> (&'static Transit, MockServer, TestApp) {
    support_in_vault_with(TOKEN).await
}

/// The returns group trusts support's Vault-held key and answers it.
async fn returns_for(support: &TestApp) -> TestApp {
    let returns = group("returns", None).await;
    engine::demo::seed_returned_parcels(returns.db(), Utc::now())
        .await
        .unwrap();
    trust_each_other(&returns, support, true).await;
    reach(support, &returns.url("/a2a")).await;
    returns
}

#[tokio::test]
async fn a_task_signed_by_vault_transit_is_verified_by_the_peer_and_answered_and_a_rotation_in_vault_signs_the_next()
 {
    let (transit, _vault, support) = support_in_vault().await;
    let returns = returns_for(&support).await;
    // Vault had no key: Countersign made it there, as ed25519, on first use.
    assert_eq!(transit.versions.lock().unwrap().len(), 1);

    let sender = sender(&support);
    let sent = sender.send(inspection("4821")).await.unwrap();
    assert_eq!(sent.signer, "support/countersign-support/v1");
    let task = answered(&sender, &sent).await;
    // The returns group verified the envelope (and support the answer,
    // fetched with a peer token Vault signed): the task completed.
    assert_eq!(task.state, "completed", "{task:?}");
    assert_eq!(task.result.unwrap()["condition"], "sealed");

    // A rotation is Vault's: the next task is signed by v2, which the
    // returns group verifies once it pins it (from the card, or by hand).
    let keys = crate::groups::own_keys(&support);
    let rotated = keys
        .rotate(&engine::settings::ChangedBy::console())
        .await
        .unwrap();
    assert_eq!(rotated.to_string(), "support/countersign-support/v2");
    assert_eq!(transit.versions.lock().unwrap().len(), 2);
    let published = keys.published().await.unwrap();
    assert_eq!(
        published.iter().map(|(k, _)| k.version).collect::<Vec<_>>(),
        [1, 2]
    );
    assert!(published[0].1.usable_until.is_some(), "v1 is retired");
    pin(&returns, &published[1].0, &published[1].1).await;
    let second = answered(&sender, &sender.send(inspection("4821")).await.unwrap()).await;
    assert_eq!(second.signer, "support/countersign-support/v2");
    assert_eq!(second.state, "completed", "{second:?}");
    assert!(
        transit
            .signed_versions
            .lock()
            .unwrap()
            .iter()
            .all(|v| *v > 0),
        "every signature asked for a named version"
    );

    // The key's versions are journaled as the embedded broker's are.
    let settings = journal_kinds(&support, storage::journal::SETTINGS_STREAM).await;
    assert_eq!(
        settings
            .iter()
            .filter(|k| k.as_str() == "gateway_own_key_added")
            .count(),
        2,
        "{settings:?}"
    );
    assert!(
        keys.check()
            .await
            .unwrap()
            .contains("Vault verifies it too")
    );
}

#[tokio::test]
async fn the_agent_card_of_a_group_keyed_in_vault_is_signed_by_vault_and_pins_by_its_fingerprint() {
    let (_transit, _vault, support) = support_in_vault().await;
    let card: Value = reqwest::get(support.url("/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let keys = crate::groups::own_keys(&support);
    let published = keys.published().await.unwrap();
    let print = gateway::fingerprint(&published[0].1.public_key);
    // Every listed version signed the card as served, or it is not read.
    let read = gateway::read_card(&card, &GroupName::parse("support").unwrap()).unwrap();
    assert_eq!(read.keys.len(), 1);
    assert_eq!(read.keys[0].0.to_string(), "support/countersign-support/v1");
    assert_eq!(read.signed_by, [read.keys[0].0.clone()]);
    assert_eq!(gateway::fingerprint(&read.keys[0].1.public_key), print);
}

#[tokio::test]
async fn a_vault_that_is_down_refuses_or_lies_sends_nothing_and_says_why() {
    let (transit, _vault, support) = support_in_vault().await;
    let sender = sender(&support);
    sender.send(inspection("4821")).await.unwrap();
    let before = outbox::recent(support.db().conn(), 100)
        .await
        .unwrap()
        .len();

    transit.down.store(true, Ordering::SeqCst);
    let down = sender.send(inspection("4821")).await.unwrap_err();
    assert!(down.to_string().contains("Vault did not answer"), "{down}");

    transit.down.store(false, Ordering::SeqCst);
    transit.lies.store(true, Ordering::SeqCst);
    let lied = sender.send(inspection("4821")).await.unwrap_err();
    assert!(
        lied.to_string()
            .contains("does not verify with that version's public key"),
        "{lied}"
    );
    transit.lies.store(false, Ordering::SeqCst);

    // Nothing was written for either: no task leaves unsigned or
    // signed by a key no peer could verify.
    assert_eq!(
        outbox::recent(support.db().conn(), 100)
            .await
            .unwrap()
            .len(),
        before
    );
}

#[tokio::test]
async fn a_vault_token_without_permission_is_refused_in_vaults_own_words() {
    let (_transit, _vault, support) = support_in_vault_with("hvs.wrong").await;
    let refused = sender(&support).send(inspection("4821")).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("Vault refused (403): permission denied"),
        "{refused}"
    );
}
