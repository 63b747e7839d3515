//! How a peer group proves who it is on a request that carries no signed
//! envelope (reading a task's state): a short-lived bearer token, a JWT
//! (compact JWS, EdDSA) signed with the group's gateway key and addressed to
//! the receiving group. It is verified against the same pinned keys as
//! envelopes, so there is no second secret to manage.

use crate::jws::ToSign;
use crate::keys::{KeyPins, SigningKey};
use crate::names::{GroupName, KeyRef};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// Clock difference tolerated for a token issued in the future.
const CLOCK_SKEW_SECONDS: i64 = 30;

/// The longest a token may live.
pub const MAX_LIFETIME_SECONDS: i64 = 300;

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    alg: String,
    kid: String,
    typ: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    /// The calling group.
    iss: String,
    /// The group called.
    aud: String,
    iat: i64,
    exp: i64,
    jti: String,
}

fn encode_json<T: Serialize>(value: &T) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap_or_default())
}

/// What `key` signs to make a token for calling `to`, valid from `now`
/// for `lifetime_seconds` (at most [`MAX_LIFETIME_SECONDS`]).
#[must_use]
pub fn to_issue(key: &KeyRef, to: &GroupName, now: DateTime<Utc>, lifetime_seconds: i64) -> ToSign {
    let mut jti = [0u8; 12];
    rand::rngs::OsRng.fill_bytes(&mut jti);
    let header = encode_json(&Header {
        alg: "EdDSA".to_owned(),
        kid: key.to_string(),
        typ: "JWT".to_owned(),
    });
    let claims = encode_json(&Claims {
        iss: key.group.to_string(),
        aud: to.to_string(),
        iat: now.timestamp(),
        exp: now.timestamp() + lifetime_seconds.clamp(1, MAX_LIFETIME_SECONDS),
        jti: URL_SAFE_NO_PAD.encode(jti),
    });
    ToSign::compact_from_parts(key.clone(), header, &claims)
}

/// A token for calling `to`, signed with `key`, valid from `now` for
/// `lifetime_seconds` (at most [`MAX_LIFETIME_SECONDS`]).
#[must_use]
pub fn issue(
    key: &SigningKey,
    to: &GroupName,
    now: DateTime<Utc>,
    lifetime_seconds: i64,
) -> String {
    let to_sign = to_issue(key.key_ref(), to, now, lifetime_seconds);
    let signature = key.sign(to_sign.message());
    to_sign.compact(&signature)
}

/// The group that signed `token` for `me`, if the token verifies with a
/// pinned, usable key and is within its lifetime at `now`.
///
/// # Errors
/// A sentence saying why the token is not accepted.
pub fn verify(
    token: &str,
    me: &GroupName,
    pins: &impl KeyPins,
    now: DateTime<Utc>,
) -> Result<GroupName, String> {
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the token is not a compact JWS (three parts)".to_owned());
    };
    let decode = |part: &str| {
        URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| "the token is not base64url".to_owned())
    };
    let header: Header = serde_json::from_slice(&decode(header)?)
        .map_err(|_| "the token's header is not a JWT header".to_owned())?;
    if header.alg != "EdDSA" {
        return Err(format!(
            "algorithm {:?} is not accepted; only EdDSA",
            header.alg
        ));
    }
    let key_ref = KeyRef::from_kid(&header.kid)
        .ok_or_else(|| format!("kid {:?} names no key", header.kid))?;
    let key = pins
        .pinned(&key_ref)
        .ok_or_else(|| format!("key {key_ref} is not pinned here"))?;
    let signed = &token[..token.len() - signature.len() - 1];
    if !key.verifies(signed.as_bytes(), &decode(signature)?) {
        return Err("the token's signature does not verify".to_owned());
    }
    let claims: Claims = serde_json::from_slice(&decode(claims)?)
        .map_err(|_| "the token's claims are not iss, aud, iat, exp and jti".to_owned())?;
    let issued = DateTime::from_timestamp(claims.iat, 0).ok_or("iat is out of range")?;
    if let Some(why) = key.unusable(issued, now) {
        return Err(format!("key {key_ref} may not be used: {why}"));
    }
    if claims.iss != key_ref.group.as_str() {
        return Err(format!(
            "iss {:?} is not the key's group {}",
            claims.iss, key_ref.group
        ));
    }
    if claims.aud != me.as_str() {
        return Err(format!("the token is for {:?}, not for {me}", claims.aud));
    }
    let now_s = now.timestamp();
    if claims.exp <= now_s {
        return Err("the token has expired".to_owned());
    }
    if claims.exp - claims.iat > MAX_LIFETIME_SECONDS || claims.iat > now_s + CLOCK_SKEW_SECONDS {
        return Err(format!(
            "the token must be issued now and live at most {MAX_LIFETIME_SECONDS} s"
        ));
    }
    Ok(key_ref.group)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{PinnedKey, PinnedKeys};
    use crate::names::KeyId;
    use chrono::{Duration, TimeZone};

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 0).unwrap()
    }

    fn support() -> (SigningKey, PinnedKeys) {
        let key_ref = KeyRef {
            group: GroupName::parse("support").unwrap(),
            key_id: KeyId::parse("gateway").unwrap(),
            version: 1,
        };
        let key = SigningKey::generate(key_ref.clone()).unwrap();
        let mut pins = PinnedKeys::default();
        pins.pin(
            key_ref,
            PinnedKey {
                public_key: key.public_key(),
                valid_from: t0() - Duration::days(1),
                usable_until: None,
            },
        );
        (key, pins)
    }

    #[test]
    fn a_token_from_a_pinned_peer_names_it_until_it_expires() {
        let (key, pins) = support();
        let returns = GroupName::parse("returns").unwrap();
        let token = issue(&key, &returns, t0(), 60);
        assert_eq!(
            verify(&token, &returns, &pins, t0()).unwrap().as_str(),
            "support"
        );
        let expired = verify(&token, &returns, &pins, t0() + Duration::seconds(61)).unwrap_err();
        assert_eq!(expired, "the token has expired");
    }

    #[test]
    fn a_token_for_another_group_or_from_an_unpinned_key_or_altered_is_refused() {
        let (key, pins) = support();
        let returns = GroupName::parse("returns").unwrap();
        let billing = GroupName::parse("billing").unwrap();
        let for_billing = issue(&key, &billing, t0(), 60);
        assert!(
            verify(&for_billing, &returns, &pins, t0())
                .unwrap_err()
                .contains("not for returns")
        );
        assert!(
            verify(
                &issue(&key, &returns, t0(), 60),
                &returns,
                &PinnedKeys::default(),
                t0()
            )
            .unwrap_err()
            .contains("not pinned")
        );
        let token = issue(&key, &returns, t0(), 60);
        let mut parts: Vec<&str> = token.split('.').collect();
        let forged = encode_json(&Claims {
            iss: "support".into(),
            aud: "returns".into(),
            iat: t0().timestamp(),
            exp: t0().timestamp() + 3600,
            jti: "x".into(),
        });
        parts[1] = &forged;
        assert_eq!(
            verify(&parts.join("."), &returns, &pins, t0()).unwrap_err(),
            "the token's signature does not verify"
        );
        assert!(verify("a.b", &returns, &pins, t0()).is_err());
    }
}
