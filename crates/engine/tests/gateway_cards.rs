//! Pinning a peer group's keys from its signed agent card: on first contact
//! only with the fingerprint its admin confirmed; afterwards a pinned key
//! vouches for the card, so a rotation is learned from it; a card signed by
//! anyone else is not taken for the group's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{Duration, TimeZone, Utc};
use engine::ManualClock;
use engine::gateway::{GatewayTrust, TrustError};
use gateway::{EXTENSION, GroupName, KeyId, KeyRef, SigningKey};
use serde_json::{Value, json};
use storage::testing::TestDatabase;

fn t0() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 0).unwrap()
}

fn person(name: &str, roles: &[domain::Role]) -> engine::Actor {
    engine::Actor {
        user_id: format!("usr_{name}"),
        name: name.to_owned(),
        roles: domain::RoleSet::new(roles.iter().copied()),
        widget_session: None,
    }
}

fn returns_key(version: u32, seed: u8) -> SigningKey {
    let key = KeyRef {
        group: GroupName::parse("returns").unwrap(),
        key_id: KeyId::parse("gateway").unwrap(),
        version,
    };
    SigningKey::from_seed(key, &[seed; 32]).unwrap()
}

/// The returns group's card listing `keys` (all but the last retired at
/// `retired`), signed by each of `signers`.
fn card(keys: &[&SigningKey], signers: &[SigningKey], retired: chrono::DateTime<Utc>) -> Value {
    let listed: Vec<Value> = keys
        .iter()
        .enumerate()
        .map(|(n, key)| {
            json!({
                "kid": key.key_ref().to_string(),
                "alg": "EdDSA",
                "publicKey": URL_SAFE_NO_PAD.encode(key.public_key()),
                "validFrom": (t0() - Duration::days(10)).to_rfc3339(),
                "usableUntil": (n + 1 < keys.len()).then(|| (retired + Duration::hours(24)).to_rfc3339()),
            })
        })
        .collect();
    let card = json!({
        "name": "Countersign returns",
        "capabilities": { "extensions": [{ "uri": EXTENSION, "params": { "keys": listed } }] },
    });
    gateway::sign_card(&card, signers)
}

#[tokio::test]
async fn a_first_card_is_pinned_only_with_the_fingerprint_its_admin_confirmed() {
    let test = TestDatabase::new().await;
    let trust = GatewayTrust::new(test.db.clone(), ManualClock::starting_at(t0()).clock());
    let admin = person("ada", &[domain::Role::Admin]);
    let v1 = returns_key(1, 1);
    let first = card(&[&v1], &[returns_key(1, 1)], t0());
    let print = gateway::fingerprint(&v1.public_key());

    let approver = person("bob", &[domain::Role::Approver]);
    assert!(matches!(
        trust
            .pin_from_card(&approver, "returns", &first, Some(&print))
            .await,
        Err(TrustError::NotAllowed)
    ));
    let asked = trust
        .pin_from_card(&admin, "returns", &first, None)
        .await
        .unwrap_err();
    assert!(
        matches!(&asked, TrustError::FirstContact { fingerprint, .. } if *fingerprint == print),
        "{asked}"
    );
    assert!(asked.to_string().contains(&print), "{asked}");
    let wrong = trust
        .pin_from_card(&admin, "returns", &first, Some("0000:1111"))
        .await
        .unwrap_err();
    assert!(
        matches!(wrong, TrustError::FingerprintMismatch { .. }),
        "{wrong}"
    );
    assert!(
        trust.list().await.unwrap().0.is_empty(),
        "nothing pinned yet"
    );

    // Read aloud with other separators and case, it is the same print.
    let spoken = print.replace(':', " ").to_uppercase();
    let done = trust
        .pin_from_card(&admin, "returns", &first, Some(&spoken))
        .await
        .unwrap();
    assert_eq!(done.pinned, ["returns/gateway/v1"]);
    assert!(!done.vouched);
    let (keys, _) = trust.list().await.unwrap();
    assert_eq!(keys[0].public_key, URL_SAFE_NO_PAD.encode(v1.public_key()));
}

#[tokio::test]
async fn a_rotation_is_learned_from_a_card_the_pinned_key_signed_but_not_from_an_impostors() {
    let test = TestDatabase::new().await;
    let trust = GatewayTrust::new(test.db.clone(), ManualClock::starting_at(t0()).clock());
    let admin = person("ada", &[domain::Role::Admin]);
    let v1 = returns_key(1, 1);
    let print = gateway::fingerprint(&v1.public_key());
    trust
        .pin_from_card(
            &admin,
            "returns",
            &card(&[&v1], &[returns_key(1, 1)], t0()),
            Some(&print),
        )
        .await
        .unwrap();

    // An impostor serves a card with its own keys under returns' name.
    let (fake1, fake2) = (returns_key(1, 7), returns_key(2, 8));
    let impostor = card(
        &[&fake1, &fake2],
        &[returns_key(1, 7), returns_key(2, 8)],
        t0(),
    );
    let refused = trust
        .pin_from_card(&admin, "returns", &impostor, None)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, TrustError::FirstContact { .. }),
        "{refused}"
    );

    // Returns rotated: v1 retired, v2 current, the card signed by both.
    let v2 = returns_key(2, 2);
    let rotated = card(&[&v1, &v2], &[returns_key(1, 1), returns_key(2, 2)], t0());
    let done = trust
        .pin_from_card(&admin, "returns", &rotated, None)
        .await
        .unwrap();
    assert!(done.vouched);
    assert_eq!(done.pinned, ["returns/gateway/v2"]);
    assert_eq!(done.retired, ["returns/gateway/v1"]);
    let (keys, _) = trust.list().await.unwrap();
    let v1_row = keys.iter().find(|k| k.version == 1).unwrap();
    assert_eq!(v1_row.usable_until, Some(t0() + Duration::hours(24)));
    let v2_row = keys.iter().find(|k| k.version == 2).unwrap();
    assert_eq!(v2_row.public_key, URL_SAFE_NO_PAD.encode(v2.public_key()));
    assert_eq!(v2_row.usable_until, None);

    // Again: nothing new.
    let again = trust
        .pin_from_card(&admin, "returns", &rotated, None)
        .await
        .unwrap();
    assert!(again.pinned.is_empty() && again.retired.is_empty());
}

#[tokio::test]
async fn a_card_changed_after_it_was_signed_is_not_taken_whoever_vouches() {
    let test = TestDatabase::new().await;
    let trust = GatewayTrust::new(test.db.clone(), ManualClock::starting_at(t0()).clock());
    let admin = person("ada", &[domain::Role::Admin]);
    let v1 = returns_key(1, 1);
    let print = gateway::fingerprint(&v1.public_key());
    let mut changed = card(&[&v1], &[returns_key(1, 1)], t0());
    changed["name"] = json!("Countersign returns (changed on the way)");
    let error = trust
        .pin_from_card(&admin, "returns", &changed, Some(&print))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the card's signature by returns/gateway/v1 does not verify"),
        "{error}"
    );
}
