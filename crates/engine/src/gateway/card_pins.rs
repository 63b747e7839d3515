//! Pinning a peer group's keys from its signed agent card (see
//! `gateway::card`): load what is pinned → decide (the card read and its
//! signatures checked; vouched for by a key already pinned, or, on first
//! contact, the current key's fingerprint confirmed by the admin) → save
//! each new version and each retirement the card states, journaled as any
//! pin is.

use super::admin::{GatewayTrust, KeyToPin, TrustError, require_admin};
use crate::core::Actor;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use connectors::HttpTimeouts;
use connectors::a2a::A2aClient;
use gateway::{GroupName, KeyPins};
use serde_json::Value;

/// What pinning from a card changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CardPins {
    /// Versions pinned now (`group/key/vN`).
    pub pinned: Vec<String>,
    /// Versions already pinned that the card says are retired, with the
    /// end of their overlap now recorded.
    pub retired: Vec<String>,
    /// Whether a key pinned before vouched for the card (false: the
    /// admin's fingerprint did).
    pub vouched: bool,
}

/// Fingerprints compare without their separators or case.
fn bare(fingerprint: &str) -> String {
    fingerprint
        .chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `group`'s agent card as served at `base_url` (its
/// `/.well-known/agent-card.json`); nothing in it is trusted by being
/// fetched.
///
/// # Errors
/// [`TrustError::CardUnreachable`]: unreachable, not 2xx, not JSON.
pub async fn fetch_card(base_url: &str) -> Result<Value, TrustError> {
    let client = A2aClient::new(HttpTimeouts::default())
        .map_err(|e| TrustError::CardUnreachable(e.to_string()))?;
    client
        .agent_card(base_url)
        .await
        .map_err(|e| TrustError::CardUnreachable(e.to_string()))
}

impl GatewayTrust {
    /// Pins the keys `group`'s agent card lists (`card`, as fetched).
    ///
    /// # Errors
    /// [`TrustError`]: not an admin; the card unreadable, unsigned or
    /// signed wrongly ([`TrustError::Card`]); on first contact no
    /// fingerprint ([`TrustError::FirstContact`], which names the one to
    /// confirm) or another one ([`TrustError::FingerprintMismatch`]); a
    /// version already pinned with another key.
    pub async fn pin_from_card(
        &self,
        actor: &Actor,
        group: &str,
        card: &Value,
        fingerprint: Option<&str>,
    ) -> Result<CardPins, TrustError> {
        require_admin(actor)?;
        let group = GroupName::parse(group)?;
        let read = gateway::read_card(card, &group).map_err(TrustError::Card)?;
        let trust = super::trust::load(self.db.conn()).await?;
        let now = self.clock.now();
        let vouched = read.signed_by.iter().any(|key| {
            let listed = read.keys.iter().find(|(listed, _)| listed == key);
            match (trust.pins.pinned(key), listed) {
                (Some(pinned), Some((_, on_card))) => {
                    pinned.public_key == on_card.public_key
                        && pinned.usable_until.is_none_or(|until| now <= until)
                }
                _ => false,
            }
        });
        if !vouched {
            let (kid, current) = read
                .current()
                .ok_or_else(|| TrustError::Card("the card names no current key".to_owned()))?;
            let on_card = gateway::fingerprint(&current.public_key);
            match fingerprint {
                Some(given) if bare(given) == bare(&on_card) => {}
                Some(given) => {
                    return Err(TrustError::FingerprintMismatch {
                        group: group.to_string(),
                        kid: kid.to_string(),
                        on_card,
                        given: given.to_owned(),
                    });
                }
                None => {
                    return Err(TrustError::FirstContact {
                        group: group.to_string(),
                        kid: kid.to_string(),
                        fingerprint: on_card,
                    });
                }
            }
        }
        let mut done = CardPins {
            vouched,
            ..CardPins::default()
        };
        for (key, on_card) in &read.keys {
            let public_key = URL_SAFE_NO_PAD.encode(on_card.public_key);
            let pin = KeyToPin {
                group: key.group.as_str(),
                key_id: key.key_id.as_str(),
                version: key.version,
                public_key: &public_key,
                valid_from: Some(on_card.valid_from),
                usable_until: on_card.usable_until,
            };
            if self.pin_key(actor, pin).await? {
                done.pinned.push(key.to_string());
                continue;
            }
            // Pinned before: learn its retirement from the card.
            let pinned_until = trust.pins.pinned(key).and_then(|p| p.usable_until);
            if let (Some(until), None) = (on_card.usable_until, pinned_until) {
                self.retire_key(
                    actor,
                    key.group.as_str(),
                    key.key_id.as_str(),
                    key.version,
                    until,
                )
                .await?;
                done.retired.push(key.to_string());
            }
        }
        Ok(done)
    }
}
