//! Secrets for plain A2A peers: a peer that cannot sign Countersign's task
//! envelopes (an `a2a-sdk` agent) proves which group it is with a bearer
//! secret an admin issued to it, shown once, kept here only as a digest.
//! What such a peer sends is still bound by a pair allowed without
//! signatures, and is marked unsigned wherever it shows.

use super::admin::{GatewayTrust, TrustError, require_admin};
use crate::core::Actor;
use crate::settings::{ChangedBy, record};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use domain::{SettingChange, SettingKind};
use gateway::GroupName;
use rand::RngCore;
use storage::StorageError;
use storage::gateway::peer_secrets::{self, PeerSecret};
use storage::ids::new_id;

/// What every peer secret starts with: a bearer token that is not a signed
/// peer token (`header.claims.signature`) says so at a glance.
pub const PEER_SECRET_PREFIX: &str = "cspk_";

/// The digest a secret is kept and looked up by.
#[must_use]
pub fn secret_digest(secret: &str) -> String {
    domain::digest::sha256_hex(secret.as_bytes())
}

/// The group whose live secret `secret` is, if any.
///
/// # Errors
/// Database failures.
pub(super) async fn group_of(
    db: &impl storage::ConnectionTrait,
    secret: &str,
) -> Result<Option<GroupName>, StorageError> {
    Ok(peer_secrets::group_of(db, &secret_digest(secret))
        .await?
        .and_then(|group| GroupName::parse(&group).ok()))
}

impl GatewayTrust {
    /// Issues a new secret to plain peer `group`: returned once, never
    /// stored (earlier secrets stay valid until revoked, so a peer can be
    /// moved to a new one without a gap).
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, a bad name, or the database.
    pub async fn issue_peer_secret(
        &self,
        actor: &Actor,
        group: &str,
    ) -> Result<String, TrustError> {
        require_admin(actor)?;
        let group = GroupName::parse(group)?;
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        let secret = format!("{PEER_SECRET_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes));
        let now = self.clock.now();
        let id = new_id("gps");
        let tx = self.db.begin_write().await?;
        peer_secrets::insert(
            &*tx,
            PeerSecret {
                id: id.clone(),
                group_name: group.to_string(),
                secret_digest: secret_digest(&secret),
                issued_by: actor.user_id.clone(),
                issued_at: now,
                revoked_at: None,
            },
        )
        .await?;
        let change = SettingChange {
            subject: format!("gateway_peer_secret:{group}"),
            before: None,
            after: Some(format!("secret {id} issued")),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::GatewayPeerSecretIssued,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(secret)
    }

    /// Revokes every secret of plain peer `group`: its requests are refused
    /// at once. Returns how many were live.
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, a bad name, or the database.
    pub async fn revoke_peer_secrets(&self, actor: &Actor, group: &str) -> Result<u64, TrustError> {
        require_admin(actor)?;
        let group = GroupName::parse(group)?;
        let now = self.clock.now();
        let tx = self.db.begin_write().await?;
        let revoked = peer_secrets::revoke_all(&*tx, group.as_str(), now).await?;
        if revoked == 0 {
            tx.rollback().await?;
            return Ok(0);
        }
        let change = SettingChange {
            subject: format!("gateway_peer_secret:{group}"),
            before: Some(format!("{revoked} live")),
            after: Some("revoked".to_owned()),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::GatewayPeerSecretsRevoked,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(revoked)
    }

    /// Every secret issued (digests only), newest first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn peer_secrets(&self) -> Result<Vec<PeerSecret>, TrustError> {
        Ok(peer_secrets::list(self.db.conn()).await?)
    }
}
