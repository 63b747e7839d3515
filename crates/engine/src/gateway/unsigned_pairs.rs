//! Pairs an admin allows without envelope signatures, for a peer that
//! speaks plain A2A (an `a2a-sdk` agent knows nothing of Countersign's
//! signed tasks): load → decide (admin, names) → save with its journal
//! event, as every trust change is. What such a peer answers is taken
//! unsigned and marked so; nothing about it is verified.

use super::admin::{GatewayTrust, TrustError, require_admin};
use crate::core::Actor;
use crate::settings::{ChangedBy, record};
use domain::{SettingChange, SettingKind};
use gateway::{GroupName, TaskKind};
use storage::gateway::unsigned::{self, UnsignedPair};

impl GatewayTrust {
    /// Allows `from` and `to` to work on `kind` without signatures. Returns
    /// false when they could already.
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, or a bad name.
    pub async fn allow_unsigned(
        &self,
        actor: &Actor,
        from: &str,
        to: &str,
        kind: &str,
    ) -> Result<bool, TrustError> {
        self.change_unsigned(actor, from, to, kind, true).await
    }

    /// Requires signatures on the pair again. Returns false when it did.
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, or a bad name.
    pub async fn withdraw_unsigned(
        &self,
        actor: &Actor,
        from: &str,
        to: &str,
        kind: &str,
    ) -> Result<bool, TrustError> {
        self.change_unsigned(actor, from, to, kind, false).await
    }

    /// The pairs allowed without signatures.
    ///
    /// # Errors
    /// Database failures.
    pub async fn unsigned_pairs(&self) -> Result<Vec<UnsignedPair>, TrustError> {
        Ok(unsigned::list(self.db.conn()).await?)
    }

    async fn change_unsigned(
        &self,
        actor: &Actor,
        from: &str,
        to: &str,
        kind: &str,
        allow: bool,
    ) -> Result<bool, TrustError> {
        require_admin(actor)?;
        let (from, to, kind) = (
            GroupName::parse(from)?,
            GroupName::parse(to)?,
            TaskKind::parse(kind)?,
        );
        let now = self.clock.now();
        let tx = self.db.begin_write().await?;
        let (from_s, to_s, kind_s) = (from.as_str(), to.as_str(), kind.as_str());
        let changed = if allow {
            unsigned::allow(&*tx, from_s, to_s, kind_s, &actor.user_id, now).await?
        } else {
            unsigned::withdraw(&*tx, from_s, to_s, kind_s).await?
        };
        if !changed {
            tx.rollback().await?;
            return Ok(false);
        }
        let pair = Some(format!("{from} → {to}: {kind}, without signatures"));
        let (setting, change) = if allow {
            (
                SettingKind::GatewayUnsignedAllowed,
                SettingChange {
                    subject: "gateway_unsigned_pair".to_owned(),
                    before: None,
                    after: pair,
                },
            )
        } else {
            (
                SettingKind::GatewayUnsignedWithdrawn,
                SettingChange {
                    subject: "gateway_unsigned_pair".to_owned(),
                    before: pair,
                    after: None,
                },
            )
        };
        record(&*tx, &ChangedBy::person(actor), setting, change, now).await?;
        tx.commit().await?;
        Ok(true)
    }
}
