//! `countersign gateway trust | pin-card | pin-key | retire-key | peer | allow | disallow |
//! allow-unsigned | disallow-unsigned`:
//! what this agent group trusts, changed by an admin (journaled with their
//! name, like the same change in the web app would be).

use crate::config::Settings;
use crate::startup::open_database;
use clap::Subcommand;
use engine::gateway::{GatewayTrust, KeyToPin};

#[derive(Subcommand)]
pub enum GatewayCommand {
    /// Print a new random master key (for COUNTERSIGN_GATEWAY_MASTER_KEY).
    NewMasterKey,
    /// This group's own key versions that peers may pin now (made on first use).
    Keys,
    /// Add a version of this group's key; the current one keeps verifying
    /// for 24 hours while peers pin the new one.
    RotateKey {
        #[arg(long)]
        admin: String,
    },
    /// List the pinned peer keys and the allowed pairs.
    Trust,
    /// Pin a peer group's keys from its signed agent card, fetched from
    /// URL (the group's base address). The first time, give the current
    /// key's fingerprint as its admin read it to you; afterwards a key
    /// pinned before vouches for the card (rotations are learned so).
    PinCard {
        #[arg(long)]
        group: String,
        #[arg(long)]
        url: String,
        #[arg(long)]
        fingerprint: Option<String>,
        #[arg(long)]
        admin: String,
    },
    /// Pin a peer group's public key (one version of it).
    PinKey {
        #[arg(long)]
        group: String,
        #[arg(long, default_value = "gateway")]
        key_id: String,
        #[arg(long)]
        version: u32,
        /// Ed25519 public key, base64url without padding.
        #[arg(long)]
        public_key: String,
        #[arg(long)]
        admin: String,
    },
    /// Retire a pinned key: it verifies until the given time (the end of
    /// the rotation overlap), then no more.
    RetireKey {
        #[arg(long)]
        group: String,
        #[arg(long, default_value = "gateway")]
        key_id: String,
        #[arg(long)]
        version: u32,
        /// RFC 3339, e.g. 2026-12-02T12:00:00Z.
        #[arg(long)]
        until: chrono::DateTime<chrono::Utc>,
        #[arg(long)]
        admin: String,
    },
    /// Allow a group to send tasks of one kind to another.
    Allow {
        #[arg(long)]
        from: String,
        #[arg(long)]
        to: String,
        #[arg(long)]
        kind: String,
        #[arg(long)]
        admin: String,
    },
    /// Allow a pair without envelope signatures, for a peer that speaks
    /// plain A2A: what comes from it is taken unsigned and marked so.
    AllowUnsigned {
        #[arg(long)]
        from: String,
        #[arg(long)]
        to: String,
        #[arg(long)]
        kind: String,
        #[arg(long)]
        admin: String,
    },
    /// Require signatures on a pair again.
    DisallowUnsigned {
        #[arg(long)]
        from: String,
        #[arg(long)]
        to: String,
        #[arg(long)]
        kind: String,
        #[arg(long)]
        admin: String,
    },
    /// Issue a secret to a plain A2A peer (one that cannot sign task
    /// envelopes): it sends it as `Authorization: Bearer …` and is known
    /// by it as GROUP. Printed once; only a digest is kept.
    IssuePeerSecret {
        #[arg(long)]
        group: String,
        #[arg(long)]
        admin: String,
    },
    /// Revoke every secret of a plain A2A peer: refused at once.
    RevokePeerSecrets {
        #[arg(long)]
        group: String,
        #[arg(long)]
        admin: String,
    },
    /// Set where a peer group is reached (its A2A endpoint, e.g.
    /// http://127.0.0.1:8081/a2a).
    Peer {
        #[arg(long)]
        group: String,
        #[arg(long)]
        url: String,
        #[arg(long)]
        admin: String,
    },
    /// Withdraw an allowed pair.
    Disallow {
        #[arg(long)]
        from: String,
        #[arg(long)]
        to: String,
        #[arg(long)]
        kind: String,
        #[arg(long)]
        admin: String,
    },
}

pub async fn run(command: GatewayCommand, settings: &Settings) -> anyhow::Result<()> {
    let db = open_database(settings).await?;
    let trust = GatewayTrust::new(db.clone(), engine::Clock::system());
    let admin = |name: String| {
        let db = db.clone();
        async move {
            let user = storage::users::find_by_name(db.conn(), &name)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no user named {name:?}"))?;
            anyhow::Ok(engine::Actor::from(user))
        }
    };
    let own_keys = || {
        settings
            .own_keys(&db, engine::Clock::system())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "set COUNTERSIGN_GATEWAY_GROUP and a signing key: \
                     COUNTERSIGN_GATEWAY_MASTER_KEY (countersign gateway new-master-key makes \
                     one), or COUNTERSIGN_GATEWAY_KEY_BROKER=vault with its address and token"
                )
            })
    };
    match command {
        GatewayCommand::NewMasterKey => println!("{}", gateway::MasterKey::generate()),
        GatewayCommand::Keys => {
            let keys = own_keys()?;
            // Signs a probe first: a key that cannot sign is said before
            // its fingerprints are handed to anyone. On stderr: stdout is
            // one line per version, for scripts (scripts/groups.sh).
            eprintln!("{}", keys.check().await?);
            for (key, pinned) in keys.published().await? {
                let until = pinned.usable_until.map_or_else(
                    || "current".to_owned(),
                    |u| format!("verifies until {}", u.to_rfc3339()),
                );
                println!(
                    "{key}  {}  fingerprint {}  {until}",
                    base64::Engine::encode(
                        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                        pinned.public_key
                    ),
                    gateway::fingerprint(&pinned.public_key),
                );
            }
        }
        GatewayCommand::RotateKey { admin: name } => {
            let actor = admin(name).await?;
            anyhow::ensure!(
                actor.roles.contains(domain::Role::Admin),
                "only admins rotate the group's key"
            );
            let keys = own_keys()?;
            let key = keys
                .rotate(&engine::settings::ChangedBy::person(&actor))
                .await?;
            println!("{}", keys.rotated_in_words(&key));
        }
        GatewayCommand::Trust => {
            let (keys, pairs) = trust.list().await?;
            println!("pinned keys:");
            if keys.is_empty() {
                println!("    none (pin-key)");
            }
            for key in keys {
                let until = key.usable_until.map_or_else(
                    || "current".to_owned(),
                    |u| format!("verifies until {}", u.to_rfc3339()),
                );
                println!(
                    "    {}/{}/v{}  {}  {}",
                    key.group_name, key.key_id, key.version, key.public_key, until
                );
            }
            println!("peers:");
            let peers = trust.peers().await?;
            if peers.is_empty() {
                println!("    none (peer)");
            }
            for peer in peers {
                println!("    {}  {}", peer.group_name, peer.url);
            }
            println!("allowed pairs:");
            if pairs.is_empty() {
                println!("    none (allow)");
            }
            for pair in pairs {
                println!("    {} → {}: {}", pair.from_group, pair.to_group, pair.kind);
            }
            let unsigned = trust.unsigned_pairs().await?;
            if !unsigned.is_empty() {
                println!("allowed without signatures:");
            }
            for pair in unsigned {
                println!("    {} → {}: {}", pair.from_group, pair.to_group, pair.kind);
            }
        }
        GatewayCommand::PinKey {
            group,
            key_id,
            version,
            public_key,
            admin: name,
        } => {
            let actor = admin(name).await?;
            let key = KeyToPin {
                group: &group,
                key_id: &key_id,
                version,
                public_key: &public_key,
                valid_from: None,
                usable_until: None,
            };
            if trust.pin_key(&actor, key).await? {
                println!("pinned {group}/{key_id}/v{version}");
            } else {
                println!("{group}/{key_id}/v{version} was already pinned with this key");
            }
        }
        GatewayCommand::PinCard {
            group,
            url,
            fingerprint,
            admin: name,
        } => {
            let actor = admin(name).await?;
            let card = engine::gateway::fetch_card(&url).await?;
            let done = trust
                .pin_from_card(&actor, &group, &card, fingerprint.as_deref())
                .await?;
            let how = if done.vouched {
                "vouched for by a key pinned before"
            } else {
                "the fingerprint you confirmed"
            };
            println!("{group}'s card verified ({how})");
            for key in &done.pinned {
                println!("pinned {key}");
            }
            for key in &done.retired {
                println!("retired {key} (the card says so)");
            }
            if done.pinned.is_empty() && done.retired.is_empty() {
                println!("nothing new: every key the card lists is pinned already");
            }
        }
        GatewayCommand::RetireKey {
            group,
            key_id,
            version,
            until,
            admin: name,
        } => {
            let actor = admin(name).await?;
            trust
                .retire_key(&actor, &group, &key_id, version, until)
                .await?;
            println!(
                "{group}/{key_id}/v{version} verifies until {}",
                until.to_rfc3339()
            );
        }
        GatewayCommand::Allow {
            from,
            to,
            kind,
            admin: name,
        } => {
            let actor = admin(name).await?;
            if trust.allow_pair(&actor, &from, &to, &kind).await? {
                println!("{from} may send {kind} tasks to {to}");
            } else {
                println!("{from} → {to}: {kind} was already allowed");
            }
        }
        GatewayCommand::AllowUnsigned {
            from,
            to,
            kind,
            admin: name,
        } => {
            let actor = admin(name).await?;
            if trust.allow_unsigned(&actor, &from, &to, &kind).await? {
                println!(
                    "{from} → {to}: {kind} works without signatures; what comes of it is marked unsigned"
                );
            } else {
                println!("{from} → {to}: {kind} was already allowed without signatures");
            }
        }
        GatewayCommand::DisallowUnsigned {
            from,
            to,
            kind,
            admin: name,
        } => {
            let actor = admin(name).await?;
            if trust.withdraw_unsigned(&actor, &from, &to, &kind).await? {
                println!("{from} → {to}: {kind} needs signatures again");
            } else {
                println!("{from} → {to}: {kind} was not allowed without signatures");
            }
        }
        GatewayCommand::IssuePeerSecret { group, admin: name } => {
            let actor = admin(name).await?;
            let secret = trust.issue_peer_secret(&actor, &group).await?;
            // The secret alone on stdout, for scripts; what it is for on
            // stderr.
            eprintln!(
                "{group}'s secret (shown once; it sends it as Authorization: Bearer …; what it \
                 may send is still only what a pair allowed without signatures lets it):"
            );
            println!("{secret}");
        }
        GatewayCommand::RevokePeerSecrets { group, admin: name } => {
            let actor = admin(name).await?;
            match trust.revoke_peer_secrets(&actor, &group).await? {
                0 => println!("{group} had no live secret"),
                n => println!("revoked {n} secret(s) of {group}: its requests are refused now"),
            }
        }
        GatewayCommand::Peer {
            group,
            url,
            admin: name,
        } => {
            let actor = admin(name).await?;
            if trust.set_peer(&actor, &group, &url).await? {
                println!("{group} is reached at {url}");
            } else {
                println!("{group} was already reached at {url}");
            }
        }
        GatewayCommand::Disallow {
            from,
            to,
            kind,
            admin: name,
        } => {
            let actor = admin(name).await?;
            if trust.disallow_pair(&actor, &from, &to, &kind).await? {
                println!("{from} may no longer send {kind} tasks to {to}");
            } else {
                println!("{from} → {to}: {kind} was not allowed");
            }
        }
    }
    Ok(())
}
