//! What this group trusts, changed by an admin: a peer group's public keys
//! (pinned by hand or from the peer's agent card) and the pairs allowed to
//! send which kinds. Each change is journaled in the settings stream with
//! who made it, in the transaction that makes it.

use crate::clock::Clock;
use crate::core::Actor;
use crate::settings::{ChangedBy, record};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use domain::{Role, SettingChange, SettingKind, Timestamp};
use gateway::{GroupName, KeyId, NameError, TaskKind};
use storage::gateway::peers;
use storage::gateway::trust::{self, PairRow, Pinned, PinnedKeyRow};
use storage::journal::{self, GATEWAY_STREAM, JournalFilter};
use storage::{Database, StorageError};

/// Why a trust change was not made.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("only admins change what the gateway trusts")]
    NotAllowed,
    #[error(transparent)]
    Name(#[from] NameError),
    #[error("the public key must be an Ed25519 key: 32 bytes, base64url without padding")]
    BadPublicKey,
    #[error("key version must be at least 1")]
    BadVersion,
    #[error(
        "{0} is already pinned with another public key; a key version never changes, pin a new version"
    )]
    VersionTaken(String),
    #[error("{0} is not pinned")]
    NoSuchKey(String),
    #[error("a peer's address must be an http or https URL (its A2A endpoint): {0}")]
    BadUrl(String),
    #[error("the agent card is not taken: {0}")]
    Card(String),
    #[error("the agent card could not be fetched: {0}")]
    CardUnreachable(String),
    #[error(
        "no key of {group} is pinned here to vouch for its card: confirm with its admin that \
         {kid} has the fingerprint {fingerprint} (`countersign gateway keys` on their side prints \
         it), then pin again with that fingerprint"
    )]
    FirstContact {
        group: String,
        kid: String,
        fingerprint: String,
    },
    #[error(
        "the card's current key {kid} has the fingerprint {on_card}, not {given}: do not pin it; \
         ask {group}'s admin which key they sign with"
    )]
    FingerprintMismatch {
        group: String,
        kid: String,
        on_card: String,
        given: String,
    },
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A task another group's envelope asked for and this group refused, as
/// journaled (the claims are what the envelope said, unverified).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedTask {
    pub at: Timestamp,
    /// The refusal's stable code (`cycle`, `pair_not_allowed`, …).
    pub code: String,
    pub reason: String,
    pub claimed_from: Option<String>,
    pub claimed_kind: Option<String>,
    pub claimed_task_key: Option<String>,
}

/// What an admin sees of the gateway: whom this group trusts and reaches,
/// the tasks lately received and sent, and the latest refusals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayOverview {
    pub peers: Vec<peers::Peer>,
    pub keys: Vec<PinnedKeyRow>,
    pub pairs: Vec<PairRow>,
    /// Pairs allowed without signatures (plain A2A peers).
    pub unsigned_pairs: Vec<storage::gateway::unsigned::UnsignedPair>,
    pub inbound: Vec<storage::gateway::inbox::InboxTask>,
    pub outbound: Vec<storage::gateway::outbox::OutboxTask>,
    /// Newest first.
    pub refusals: Vec<RefusedTask>,
}

/// Where a task stands in its chain and what it cost, read from its signed
/// envelope and signed answer as stored.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskChain {
    /// The groups the chain passed, ending with the task's sender.
    pub route: Vec<String>,
    pub depth: u32,
    /// What the answering group signed it spent; None before an answer.
    pub spent: Option<gateway::Spent>,
    /// Received from a plain A2A peer: no signature on it.
    pub unsigned: bool,
}

impl TaskChain {
    /// Read from a stored envelope and signed answer (JSON text); what does
    /// not read is left empty (the rows were checked when written).
    #[must_use]
    pub fn of(envelope: &str, signed_answer: Option<&str>) -> Self {
        let envelope = gateway::SignedEnvelope::from_stored(envelope).ok();
        let spent = signed_answer
            .and_then(|text| serde_json::from_str::<gateway::SignedAnswer>(text).ok())
            .map(|signed| signed.answer.spent);
        TaskChain {
            route: envelope
                .as_ref()
                .map(|e| e.envelope.route.iter().map(ToString::to_string).collect())
                .unwrap_or_default(),
            depth: envelope.as_ref().map_or(0, |e| e.envelope.depth),
            unsigned: envelope.as_ref().is_some_and(super::is_unsigned),
            spent,
        }
    }

    /// The spending in words, naming only what was spent: `2 steps`,
    /// `1 model call, 300 tokens`, `nothing`; None before an answer.
    #[must_use]
    pub fn spent_in_words(&self) -> Option<String> {
        let spent = self.spent.as_ref()?;
        let count =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut parts = Vec::new();
        if spent.steps > 0 {
            parts.push(count(spent.steps.into(), "step", "steps"));
        }
        if spent.model_calls > 0 {
            parts.push(count(spent.model_calls.into(), "model call", "model calls"));
        }
        if spent.tokens > 0 {
            parts.push(count(spent.tokens, "token", "tokens"));
        }
        if let Some(money) = spent.money {
            parts.push(money.display());
        }
        Some(if parts.is_empty() {
            "nothing".to_owned()
        } else {
            parts.join(", ")
        })
    }
}

/// How many tasks and refusals the overview shows of each.
const OVERVIEW_ROWS: u64 = 20;

/// A peer key to pin.
#[derive(Debug, Clone)]
pub struct KeyToPin<'a> {
    pub group: &'a str,
    pub key_id: &'a str,
    pub version: u32,
    /// Ed25519, base64url without padding.
    pub public_key: &'a str,
    /// Envelopes created before this are refused (default: now).
    pub valid_from: Option<Timestamp>,
    /// Until when it verifies (a retired version's overlap); None: current.
    pub usable_until: Option<Timestamp>,
}

/// The admin's side of the gateway's trust.
#[derive(Clone)]
pub struct GatewayTrust {
    pub(super) db: Database,
    pub(super) clock: Clock,
}

pub(super) fn require_admin(actor: &Actor) -> Result<(), TrustError> {
    if actor.roles.contains(Role::Admin) {
        Ok(())
    } else {
        Err(TrustError::NotAllowed)
    }
}

fn kid(group: &str, key_id: &str, version: u32) -> String {
    format!("{group}/{key_id}/v{version}")
}

impl GatewayTrust {
    pub fn new(db: Database, clock: Clock) -> Self {
        Self { db, clock }
    }

    /// Pins a peer's key version. Pinning the same key again changes
    /// nothing and returns false.
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, a bad name or key, or the version
    /// already pinned with another key.
    pub async fn pin_key(&self, actor: &Actor, key: KeyToPin<'_>) -> Result<bool, TrustError> {
        require_admin(actor)?;
        let (group, key_id) = (GroupName::parse(key.group)?, KeyId::parse(key.key_id)?);
        let version = i32::try_from(key.version)
            .ok()
            .filter(|v| *v >= 1)
            .ok_or(TrustError::BadVersion)?;
        let bytes = URL_SAFE_NO_PAD
            .decode(key.public_key.trim())
            .map_err(|_| TrustError::BadPublicKey)?;
        if bytes.len() != 32 {
            return Err(TrustError::BadPublicKey);
        }
        let now = self.clock.now();
        let kid = kid(group.as_str(), key_id.as_str(), key.version);
        let tx = self.db.begin_write().await?;
        let pinned = trust::pin_key(
            &*tx,
            PinnedKeyRow {
                group_name: group.to_string(),
                key_id: key_id.to_string(),
                version,
                public_key: URL_SAFE_NO_PAD.encode(&bytes),
                valid_from: key.valid_from.unwrap_or(now),
                usable_until: key.usable_until,
                pinned_by: actor.user_id.clone(),
                pinned_at: now,
            },
        )
        .await?;
        match pinned {
            Pinned::New => {}
            Pinned::AlreadyPinned => {
                tx.rollback().await?;
                return Ok(false);
            }
            Pinned::Conflict { .. } => {
                tx.rollback().await?;
                return Err(TrustError::VersionTaken(kid));
            }
        }
        let change = SettingChange {
            subject: format!("gateway_key:{kid}"),
            before: None,
            after: Some(format!("Ed25519 {}", URL_SAFE_NO_PAD.encode(&bytes))),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::GatewayKeyPinned,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Sets until when a pinned key verifies: its retirement plus the
    /// rotation overlap.
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, or no such key.
    pub async fn retire_key(
        &self,
        actor: &Actor,
        group: &str,
        key_id: &str,
        version: u32,
        usable_until: Timestamp,
    ) -> Result<(), TrustError> {
        require_admin(actor)?;
        let kid = kid(group, key_id, version);
        let version = i32::try_from(version).map_err(|_| TrustError::BadVersion)?;
        let now = self.clock.now();
        let tx = self.db.begin_write().await?;
        if !trust::retire_key(&*tx, group, key_id, version, usable_until).await? {
            tx.rollback().await?;
            return Err(TrustError::NoSuchKey(kid));
        }
        let change = SettingChange {
            subject: format!("gateway_key:{kid}"),
            before: Some("current".to_owned()),
            after: Some(format!("verifies until {}", usable_until.to_rfc3339())),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::GatewayKeyRetired,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Allows `from` to send `kind` tasks to `to`. Returns false when it
    /// was allowed already (nothing changes).
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, or a bad name.
    pub async fn allow_pair(
        &self,
        actor: &Actor,
        from: &str,
        to: &str,
        kind: &str,
    ) -> Result<bool, TrustError> {
        self.change_pair(actor, from, to, kind, true).await
    }

    /// Withdraws an allowed pair. Returns false when it was not allowed.
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, or a bad name.
    pub async fn disallow_pair(
        &self,
        actor: &Actor,
        from: &str,
        to: &str,
        kind: &str,
    ) -> Result<bool, TrustError> {
        self.change_pair(actor, from, to, kind, false).await
    }

    async fn change_pair(
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
        let changed = if allow {
            trust::allow_pair(
                &*tx,
                PairRow {
                    from_group: from.to_string(),
                    to_group: to.to_string(),
                    kind: kind.to_string(),
                    allowed_by: actor.user_id.clone(),
                    allowed_at: now,
                },
            )
            .await?
        } else {
            trust::disallow_pair(&*tx, from.as_str(), to.as_str(), kind.as_str()).await?
        };
        if !changed {
            tx.rollback().await?;
            return Ok(false);
        }
        let pair = format!("{from} → {to}: {kind}");
        let (kind, change) = if allow {
            (
                SettingKind::GatewayPairAllowed,
                SettingChange {
                    subject: "gateway_pair".to_owned(),
                    before: None,
                    after: Some(pair),
                },
            )
        } else {
            (
                SettingKind::GatewayPairWithdrawn,
                SettingChange {
                    subject: "gateway_pair".to_owned(),
                    before: Some(pair),
                    after: None,
                },
            )
        };
        record(&*tx, &ChangedBy::person(actor), kind, change, now).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Sets where `group` is reached: its A2A JSON-RPC endpoint. Returns
    /// false when it was set to that already.
    ///
    /// # Errors
    /// [`TrustError`]: not an admin, a bad name or URL.
    pub async fn set_peer(
        &self,
        actor: &Actor,
        group: &str,
        url: &str,
    ) -> Result<bool, TrustError> {
        require_admin(actor)?;
        let group = GroupName::parse(group)?;
        let parsed = url::Url::parse(url).map_err(|e| TrustError::BadUrl(e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(TrustError::BadUrl(url.chars().take(200).collect()));
        }
        let now = self.clock.now();
        let tx = self.db.begin_write().await?;
        let before = peers::get(&*tx, group.as_str()).await?.map(|peer| peer.url);
        if before.as_deref() == Some(parsed.as_str()) {
            tx.rollback().await?;
            return Ok(false);
        }
        peers::set(
            &*tx,
            peers::Peer {
                group_name: group.to_string(),
                url: parsed.to_string(),
                updated_by: actor.user_id.clone(),
                updated_at: now,
            },
        )
        .await?;
        let change = SettingChange {
            subject: format!("gateway_peer:{group}"),
            before,
            after: Some(parsed.to_string()),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::GatewayPeerSet,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Every peer's address.
    ///
    /// # Errors
    /// Database failures.
    pub async fn peers(&self) -> Result<Vec<peers::Peer>, StorageError> {
        peers::list(self.db.conn()).await
    }

    /// The gateway as an admin sees it.
    ///
    /// # Errors
    /// [`TrustError::NotAllowed`] for anyone but an admin; database failures.
    pub async fn overview(&self, actor: &Actor) -> Result<GatewayOverview, TrustError> {
        require_admin(actor)?;
        let db = self.db.conn();
        let filter = JournalFilter {
            stream: Some(GATEWAY_STREAM.to_owned()),
            kind: Some("gateway.task_refused".to_owned()),
            ..JournalFilter::default()
        };
        let (_, total) = journal::list(db, &filter, 0, 1).await?;
        let last_page = total.saturating_sub(1) / OVERVIEW_ROWS;
        let (events, _) = journal::list(db, &filter, last_page, OVERVIEW_ROWS).await?;
        let refusals = events
            .into_iter()
            .rev()
            .map(|event| {
                let payload: serde_json::Value =
                    serde_json::from_str(&event.payload).unwrap_or_default();
                let text = |name: &str| payload[name].as_str().map(str::to_owned);
                RefusedTask {
                    at: event.at,
                    code: text("code").unwrap_or_default(),
                    reason: text("reason").unwrap_or_default(),
                    claimed_from: text("claimed_from"),
                    claimed_kind: text("claimed_kind"),
                    claimed_task_key: text("claimed_task_key"),
                }
            })
            .collect();
        Ok(GatewayOverview {
            peers: peers::list(db).await?,
            keys: trust::pinned_keys(db).await?,
            unsigned_pairs: storage::gateway::unsigned::list(db).await?,
            pairs: trust::pairs(db).await?,
            inbound: storage::gateway::inbox::recent(db, OVERVIEW_ROWS).await?,
            outbound: storage::gateway::outbox::recent(db, OVERVIEW_ROWS).await?,
            refusals,
        })
    }

    /// Every pinned key and allowed pair.
    ///
    /// # Errors
    /// Database failures.
    pub async fn list(&self) -> Result<(Vec<PinnedKeyRow>, Vec<PairRow>), StorageError> {
        let db = self.db.conn();
        Ok((trust::pinned_keys(db).await?, trust::pairs(db).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::TaskChain;

    #[test]
    fn what_a_task_spent_reads_as_words_naming_only_what_was_spent() {
        let with = |spent: Option<gateway::Spent>| TaskChain {
            spent,
            ..TaskChain::default()
        };
        assert_eq!(with(None).spent_in_words(), None);
        assert_eq!(
            with(Some(gateway::Spent::default()))
                .spent_in_words()
                .as_deref(),
            Some("nothing")
        );
        assert_eq!(
            with(Some(gateway::Spent::one_step()))
                .spent_in_words()
                .as_deref(),
            Some("1 step")
        );
        let more = gateway::Spent {
            steps: 2,
            model_calls: 1,
            tokens: 300,
            money: None,
        };
        assert_eq!(
            with(Some(more)).spent_in_words().as_deref(),
            Some("2 steps, 1 model call, 300 tokens")
        );
    }
}
