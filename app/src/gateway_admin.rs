//! The gateway as an admin sees it on `/admin`: this agent group, the peers
//! it reaches, the keys and pairs it trusts, the task kinds it speaks, the
//! tasks lately received and sent, and the latest refusals with their
//! reasons. Admins only. The changes are `crate::gateway_trust`'s (and
//! `countersign gateway …`'s), journaled.

use crate::error::AppError;
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayTaskRow {
    pub id: String,
    /// The other group: the sender of a task received, the receiver of one
    /// sent.
    pub peer: String,
    pub task_key: String,
    pub kind: String,
    pub state: String,
    pub at: domain::Timestamp,
    /// The groups the chain passed (`support → returns`) and its depth.
    pub route: String,
    pub depth: u32,
    /// What the answer says the task spent (`2 steps`); None before one.
    pub spent: Option<String>,
    /// Why it failed, was refused or expired, when it did.
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayRefusalRow {
    pub at: domain::Timestamp,
    pub code: String,
    pub reason: String,
    pub claimed_from: Option<String>,
    pub claimed_kind: Option<String>,
    pub claimed_task_key: Option<String>,
}

/// A pair allowed to send a kind of task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedPair {
    pub from: String,
    pub to: String,
    pub kind: String,
    /// Allowed without envelope signatures (a plain A2A peer).
    pub unsigned: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayInfo {
    /// None: the gateway is off in this instance.
    pub group: Option<String>,
    /// `group  url`.
    pub peers: Vec<(String, String)>,
    /// `group/key/vN` with when it stops verifying (None: current).
    pub keys: Vec<(String, Option<domain::Timestamp>)>,
    pub pairs: Vec<AllowedPair>,
    /// The task kinds this build speaks, with what each is for.
    pub kinds: Vec<(String, String)>,
    /// This group's own key versions peers may pin: `group/key/vN`, its
    /// fingerprint, and when it stops verifying (None: current). Empty
    /// when the group cannot sign.
    pub own_keys: Vec<(String, String, Option<domain::Timestamp>)>,
    /// Why the own keys could not be read, if they could not.
    pub own_keys_error: Option<String>,
    /// Plain A2A peers' secrets: group, when issued, whether revoked.
    pub peer_secrets: Vec<(String, domain::Timestamp, bool)>,
    pub inbound: Vec<GatewayTaskRow>,
    pub outbound: Vec<GatewayTaskRow>,
    pub refusals: Vec<GatewayRefusalRow>,
}

#[server(prefix = "/fn", endpoint = "admin_gateway", input = server_fn::codec::GetUrl)]
pub async fn admin_gateway() -> Result<GatewayInfo, AppError> {
    let (ctx, me) = crate::server::require_admin()?;
    let trust = engine::gateway::GatewayTrust::new(ctx.engine.db.clone(), ctx.engine.clock.clone());
    let overview = trust.overview(&me.actor()).await.map_err(|e| match e {
        engine::gateway::TrustError::NotAllowed => {
            crate::server::fail(AppError::Forbidden(e.to_string()))
        }
        other => crate::server::internal(&other),
    })?;
    let peer_secrets = trust
        .peer_secrets()
        .await
        .map_err(|e| crate::server::internal(&e))?
        .into_iter()
        .map(|secret| {
            (
                secret.group_name,
                secret.issued_at,
                secret.revoked_at.is_some(),
            )
        })
        .collect();
    let own = match ctx.engine.gateway.as_ref().and_then(|g| g.own_keys.clone()) {
        Some(keys) => keys.published().await.map_err(|e| e.to_string()),
        None => Ok(Vec::new()),
    };
    let (own_keys, own_keys_error) = match own {
        Ok(published) => (
            published
                .into_iter()
                .map(|(key, pinned)| {
                    (
                        key.to_string(),
                        engine::gateway::key_fingerprint(&pinned.public_key),
                        pinned.usable_until,
                    )
                })
                .collect(),
            None,
        ),
        // A broker that is down (Vault sealed) does not hide the rest.
        Err(error) => (Vec::new(), Some(error)),
    };
    Ok(GatewayInfo {
        peer_secrets,
        group: ctx.engine.gateway.as_ref().map(|g| g.group.to_string()),
        peers: overview
            .peers
            .into_iter()
            .map(|peer| (peer.group_name, peer.url))
            .collect(),
        keys: overview
            .keys
            .into_iter()
            .map(|key| {
                (
                    format!("{}/{}/v{}", key.group_name, key.key_id, key.version),
                    key.usable_until,
                )
            })
            .collect(),
        pairs: overview
            .pairs
            .into_iter()
            .map(|pair| AllowedPair {
                from: pair.from_group,
                to: pair.to_group,
                kind: pair.kind,
                unsigned: false,
            })
            .chain(overview.unsigned_pairs.into_iter().map(|pair| AllowedPair {
                from: pair.from_group,
                to: pair.to_group,
                kind: pair.kind,
                unsigned: true,
            }))
            .collect(),
        kinds: ctx
            .engine
            .gateway
            .as_ref()
            .map(|g| {
                g.kinds
                    .describe()
                    .map(|(kind, description, ..)| (kind.to_string(), description.to_owned()))
                    .collect()
            })
            .unwrap_or_default(),
        own_keys,
        own_keys_error,
        inbound: overview
            .inbound
            .into_iter()
            .map(|task| {
                let chain =
                    engine::gateway::TaskChain::of(&task.envelope, task.signed_answer.as_deref());
                GatewayTaskRow {
                    id: task.id,
                    peer: task.sender_group,
                    task_key: task.task_key,
                    kind: task.kind,
                    state: task.state,
                    at: task.received_at,
                    route: chain.route.join(" → "),
                    depth: chain.depth,
                    spent: chain.spent_in_words(),
                    note: match (chain.unsigned, task.status_message) {
                        (true, Some(message)) => {
                            Some(format!("unsigned (a plain A2A peer's) · {message}"))
                        }
                        (true, None) => Some("unsigned (a plain A2A peer's)".to_owned()),
                        (false, message) => message,
                    },
                }
            })
            .collect(),
        outbound: overview
            .outbound
            .into_iter()
            .map(|task| {
                let chain =
                    engine::gateway::TaskChain::of(&task.envelope, task.signed_answer.as_deref());
                GatewayTaskRow {
                    id: task.id,
                    peer: task.to_group,
                    task_key: task.task_key,
                    kind: task.kind,
                    state: task.state,
                    at: task.created_at,
                    route: chain.route.join(" → "),
                    depth: chain.depth,
                    spent: chain.spent_in_words(),
                    note: match (&task.result, &task.signed_answer, task.error) {
                        (Some(_), None, _) => {
                            Some("answer taken unsigned (allowed without signatures)".to_owned())
                        }
                        (_, _, error) => error,
                    },
                }
            })
            .collect(),
        refusals: overview
            .refusals
            .into_iter()
            .map(|refusal| GatewayRefusalRow {
                at: refusal.at,
                code: refusal.code,
                reason: refusal.reason,
                claimed_from: refusal.claimed_from,
                claimed_kind: refusal.claimed_kind,
                claimed_task_key: refusal.claimed_task_key,
            })
            .collect(),
    })
}
