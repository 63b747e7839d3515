//! Changing what the gateway trusts from `/admin`, as `countersign gateway …`
//! does: a peer's address, its keys pinned from its signed agent card (the
//! fingerprint confirmed on first contact), a pinned key retired, a pair
//! allowed or withdrawn (with or without signatures). Admins only, with
//! the CSRF token; each change is journaled by the engine.

use crate::error::AppError;
use leptos::prelude::*;

#[cfg(feature = "ssr")]
mod backend {
    use crate::error::AppError;
    use crate::server;
    use engine::gateway::{GatewayTrust, TrustError};

    pub fn trust() -> Result<(GatewayTrust, engine::Actor), AppError> {
        let (ctx, me) = server::require_admin()?;
        Ok((
            GatewayTrust::new(ctx.engine.db.clone(), ctx.engine.clock.clone()),
            me.actor(),
        ))
    }

    pub fn error(error: TrustError) -> AppError {
        match error {
            TrustError::NotAllowed => server::fail(AppError::Forbidden(error.to_string())),
            TrustError::Storage(inner) => server::internal(&inner),
            TrustError::NoSuchKey(_) => server::fail(AppError::NotFound(error.to_string())),
            TrustError::VersionTaken(_) => server::fail(AppError::Conflict(error.to_string())),
            TrustError::CardUnreachable(_) => {
                server::fail(AppError::Unavailable(error.to_string()))
            }
            other => server::fail(AppError::Invalid(other.to_string())),
        }
    }

    /// `group/key_id/vN` split into its parts (each checked by the engine).
    pub fn kid(kid: &str) -> Result<(String, String, u32), AppError> {
        let parts: Vec<&str> = kid.trim().split('/').collect();
        match parts.as_slice() {
            [group, key_id, version] => version
                .strip_prefix('v')
                .and_then(|v| v.parse().ok())
                .map(|version| ((*group).to_owned(), (*key_id).to_owned(), version)),
            _ => None,
        }
        .ok_or_else(|| {
            server::fail(AppError::Invalid(format!(
                "{:?} is not a key version (group/key/vN)",
                kid.chars().take(80).collect::<String>()
            )))
        })
    }

    pub fn now() -> Result<domain::Timestamp, AppError> {
        Ok(server::context()?.engine.clock.now())
    }

    /// A form's checkbox: present (`on`) or absent.
    pub fn checked(value: Option<&str>) -> bool {
        value.is_some_and(|v| !v.is_empty())
    }
}

/// Sets where a peer group is reached (its A2A endpoint).
#[server(prefix = "/fn", endpoint = "admin_gateway_set_peer")]
pub async fn admin_gateway_set_peer(
    csrf_token: String,
    group: String,
    url: String,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (trust, me) = backend::trust()?;
    let (group, url) = (group.trim(), url.trim());
    let changed = trust
        .set_peer(&me, group, url)
        .await
        .map_err(backend::error)?;
    Ok(if changed {
        format!("{group} is reached at {url}")
    } else {
        format!("{group} was reached at {url} already")
    })
}

/// Pins the keys a peer's signed agent card lists. On first contact the
/// admin confirms the current key's fingerprint, read to them by the
/// peer's admin; after that, a key pinned before vouches for the card.
#[server(prefix = "/fn", endpoint = "admin_gateway_pin_card")]
pub async fn admin_gateway_pin_card(
    csrf_token: String,
    group: String,
    url: String,
    fingerprint: Option<String>,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (trust, me) = backend::trust()?;
    let group = group.trim();
    let card = engine::gateway::fetch_card(url.trim())
        .await
        .map_err(backend::error)?;
    let fingerprint = fingerprint.filter(|f| !f.trim().is_empty());
    let done = trust
        .pin_from_card(&me, group, &card, fingerprint.as_deref())
        .await
        .map_err(backend::error)?;
    let how = if done.vouched {
        "vouched for by a key pinned before"
    } else {
        "the fingerprint you confirmed"
    };
    let mut said = vec![format!("{group}'s card verified ({how})")];
    said.extend(done.pinned.iter().map(|key| format!("pinned {key}")));
    said.extend(
        done.retired
            .iter()
            .map(|key| format!("retired {key} (the card says so)")),
    );
    if done.pinned.is_empty() && done.retired.is_empty() {
        said.push("nothing new: every key the card lists is pinned already".to_owned());
    }
    Ok(said.join("; "))
}

/// Stops trusting a pinned peer key: `when` is `now`, or `overlap` (it
/// verifies 24 hours more, for tasks signed before the peer rotated).
#[server(prefix = "/fn", endpoint = "admin_gateway_retire_key")]
pub async fn admin_gateway_retire_key(
    csrf_token: String,
    kid: String,
    when: String,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (trust, me) = backend::trust()?;
    let (group, key_id, version) = backend::kid(&kid)?;
    let now = backend::now()?;
    let until = match when.as_str() {
        "now" => now,
        "overlap" => now + chrono::Duration::hours(24),
        other => {
            return Err(crate::server::fail(AppError::Invalid(format!(
                "when must be now or overlap, got {:?}",
                other.chars().take(40).collect::<String>()
            ))));
        }
    };
    trust
        .retire_key(&me, &group, &key_id, version, until)
        .await
        .map_err(backend::error)?;
    Ok(format!(
        "{} verifies until {}",
        kid.trim(),
        until.format("%Y-%m-%d %H:%M UTC")
    ))
}

/// Allows `from` to send `kind` tasks to `to`; with `unsigned`, without
/// envelope signatures (a plain A2A peer; what comes of it is unsigned).
#[server(prefix = "/fn", endpoint = "admin_gateway_allow_pair")]
pub async fn admin_gateway_allow_pair(
    csrf_token: String,
    from: String,
    to: String,
    kind: String,
    unsigned: Option<String>,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (trust, me) = backend::trust()?;
    let (from, to, kind) = (from.trim(), to.trim(), kind.trim());
    let pair = format!("{from} → {to}: {kind}");
    if backend::checked(unsigned.as_deref()) {
        let changed = trust
            .allow_unsigned(&me, from, to, kind)
            .await
            .map_err(backend::error)?;
        return Ok(if changed {
            format!("{pair} is allowed without signatures; what comes of it is marked unsigned")
        } else {
            format!("{pair} was allowed without signatures already")
        });
    }
    let changed = trust
        .allow_pair(&me, from, to, kind)
        .await
        .map_err(backend::error)?;
    Ok(if changed {
        format!("{pair} is allowed")
    } else {
        format!("{pair} was allowed already")
    })
}

/// Withdraws an allowed pair (the signed one, or the one without
/// signatures with `unsigned`): its tasks are refused from now on.
#[server(prefix = "/fn", endpoint = "admin_gateway_withdraw_pair")]
pub async fn admin_gateway_withdraw_pair(
    csrf_token: String,
    from: String,
    to: String,
    kind: String,
    unsigned: Option<String>,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (trust, me) = backend::trust()?;
    let (from, to, kind) = (from.trim(), to.trim(), kind.trim());
    let pair = format!("{from} → {to}: {kind}");
    let changed = if backend::checked(unsigned.as_deref()) {
        trust.withdraw_unsigned(&me, from, to, kind).await
    } else {
        trust.disallow_pair(&me, from, to, kind).await
    }
    .map_err(backend::error)?;
    Ok(if changed {
        format!("{pair} is withdrawn: its tasks are refused from now on")
    } else {
        format!("{pair} was not allowed")
    })
}

/// Issues a secret to a plain A2A peer (one that cannot sign task
/// envelopes): shown once, kept only as a digest.
#[server(prefix = "/fn", endpoint = "admin_gateway_issue_peer_secret")]
pub async fn admin_gateway_issue_peer_secret(
    csrf_token: String,
    group: String,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (trust, me) = backend::trust()?;
    trust
        .issue_peer_secret(&me, group.trim())
        .await
        .map_err(backend::error)
}

/// Revokes every secret of a plain A2A peer: its requests are refused now.
#[server(prefix = "/fn", endpoint = "admin_gateway_revoke_peer_secrets")]
pub async fn admin_gateway_revoke_peer_secrets(
    csrf_token: String,
    group: String,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (trust, me) = backend::trust()?;
    let group = group.trim();
    Ok(
        match trust
            .revoke_peer_secrets(&me, group)
            .await
            .map_err(backend::error)?
        {
            0 => format!("{group} had no live secret"),
            n => format!("revoked {n} secret(s) of {group}: its requests are refused now"),
        },
    )
}

/// Rotates this group's key: a new version signs from now on; the one
/// before still verifies for the broker's overlap while peers learn the new
/// one from the agent card.
#[server(prefix = "/fn", endpoint = "admin_gateway_rotate_key")]
pub async fn admin_gateway_rotate_key(csrf_token: String) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (ctx, me) = crate::server::require_admin()?;
    let keys = ctx
        .engine
        .gateway
        .as_ref()
        .and_then(|g| g.own_keys.clone())
        .ok_or_else(|| {
            crate::server::fail(AppError::Invalid(
                "this group has no signing key to rotate (no master key, no Vault)".to_owned(),
            ))
        })?;
    let key = keys
        .rotate(&engine::settings::ChangedBy::person(&me.actor()))
        .await
        .map_err(|e| crate::server::fail(AppError::Unavailable(e.to_string())))?;
    Ok(keys.rotated_in_words(&key))
}
