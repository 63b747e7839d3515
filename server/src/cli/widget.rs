//! `countersign widget register | sites | allow-customer | disallow-customer |
//! add-key | revoke-key | token`.
//!
//! `token` does what a host site's server does (sign a short-lived customer
//! token with the site's private key), for trying the widget and for demos.

use crate::config::Settings;
use crate::startup::open_database;
use anyhow::Context;
use clap::Subcommand;
use engine::widget::{HostTokenClaims, NewSigningKey, TOKEN_AUDIENCE};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum WidgetCommand {
    /// Register a host site allowed to embed the chat; makes its first key.
    Register {
        #[arg(long)]
        name: String,
        /// The site's origin, e.g. https://shop.example
        #[arg(long)]
        origin: String,
        /// The admin account recorded as having registered it.
        #[arg(long)]
        admin: String,
        /// Write the private key here (mode 600) instead of printing it.
        #[arg(long)]
        key_out: Option<PathBuf>,
    },
    /// List registered sites, the customers each may sign in, and their keys.
    Sites,
    /// Let a site sign in a customer (a new site signs in nobody).
    AllowCustomer {
        #[arg(long)]
        site: String,
        /// The customer's user name.
        #[arg(long)]
        customer: String,
        #[arg(long)]
        admin: String,
    },
    /// Stop a site signing in a customer; their widget sessions from it end.
    DisallowCustomer {
        #[arg(long)]
        site: String,
        #[arg(long)]
        customer: String,
        #[arg(long)]
        admin: String,
    },
    /// Add a signing key to a site (rotation).
    AddKey {
        #[arg(long)]
        site: String,
        #[arg(long)]
        admin: String,
        #[arg(long)]
        key_out: Option<PathBuf>,
    },
    /// Revoke a site's key: its tokens are refused, its sessions end.
    RevokeKey {
        #[arg(long)]
        site: String,
        #[arg(long)]
        key: String,
        #[arg(long)]
        admin: String,
    },
    /// Sign a customer token as the host site's server would.
    Token {
        #[arg(long)]
        site: String,
        #[arg(long)]
        key_id: String,
        /// The PEM file `register` or `add-key` wrote.
        #[arg(long)]
        key_file: PathBuf,
        /// The customer's user name.
        #[arg(long)]
        customer: String,
        /// Lifetime in seconds (at most 900).
        #[arg(long, default_value_t = 300)]
        ttl: i64,
    },
}

pub async fn run(command: WidgetCommand, settings: &Settings) -> anyhow::Result<()> {
    let db = open_database(settings).await?;
    let widget = engine::widget::Widget::new(db.clone(), engine::Clock::system());
    match command {
        WidgetCommand::Register {
            name,
            origin,
            admin,
            key_out,
        } => {
            let actor = actor(&db, &admin).await?;
            let key = widget.register_site(&actor, &name, &origin).await?;
            println!("site id: {}", key.site_id);
            print_key(&key, key_out.as_deref())?;
        }
        WidgetCommand::Sites => {
            let customers = widget.list_site_customers().await?;
            for site in widget.list_sites().await? {
                println!(
                    "{}  {}  {}{}",
                    site.id,
                    site.origin,
                    site.name,
                    if site.disabled { "  (disabled)" } else { "" }
                );
                let names: Vec<&str> = customers
                    .iter()
                    .filter(|c| c.site_id == site.id)
                    .map(|c| c.customer_name.as_str())
                    .collect();
                if names.is_empty() {
                    println!("    signs in no customer yet (allow-customer)");
                } else {
                    println!("    may sign in: {}", names.join(", "));
                }
                for key in site.keys {
                    println!(
                        "    key {}  created {}  {}",
                        key.id,
                        key.created_at.format("%Y-%m-%d %H:%M UTC"),
                        if key.revoked_at.is_some() {
                            "revoked"
                        } else {
                            "active"
                        }
                    );
                }
            }
        }
        WidgetCommand::AllowCustomer {
            site,
            customer,
            admin,
        } => {
            let actor = actor(&db, &admin).await?;
            widget.bind_customer(&actor, &site, &customer).await?;
            println!("{site} may sign in {customer}");
        }
        WidgetCommand::DisallowCustomer {
            site,
            customer,
            admin,
        } => {
            let actor = actor(&db, &admin).await?;
            widget.unbind_customer(&actor, &site, &customer).await?;
            println!("{site} may no longer sign in {customer}");
        }
        WidgetCommand::AddKey {
            site,
            admin,
            key_out,
        } => {
            let actor = actor(&db, &admin).await?;
            let key = widget.add_key(&actor, &site).await?;
            print_key(&key, key_out.as_deref())?;
        }
        WidgetCommand::RevokeKey { site, key, admin } => {
            let actor = actor(&db, &admin).await?;
            widget.revoke_key(&actor, &site, &key).await?;
            println!("revoked {key}");
        }
        WidgetCommand::Token {
            site,
            key_id,
            key_file,
            customer,
            ttl,
        } => {
            anyhow::ensure!(
                (1..=engine::widget::MAX_TOKEN_LIFETIME.num_seconds()).contains(&ttl),
                "--ttl must be 1 to {} seconds",
                engine::widget::MAX_TOKEN_LIFETIME.num_seconds()
            );
            let pem = std::fs::read_to_string(&key_file)
                .with_context(|| format!("reading {}", key_file.display()))?;
            let user = storage::users::find_by_name(db.conn(), &customer)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no user named {customer:?}"))?;
            let now = engine::now();
            let claims = HostTokenClaims {
                iss: site,
                sub: user.id,
                aud: TOKEN_AUDIENCE.to_owned(),
                iat: now.timestamp(),
                exp: now.timestamp() + ttl,
                jti: storage::ids::new_id("jti"),
            };
            println!(
                "{}",
                engine::widget::sign_host_token(&pem, &key_id, &claims)?
            );
        }
    }
    Ok(())
}

async fn actor(db: &storage::Database, name: &str) -> anyhow::Result<engine::Actor> {
    let user = storage::users::find_by_name(db.conn(), name)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no user named {name:?}"))?;
    Ok(engine::Actor::from(user))
}

fn print_key(key: &NewSigningKey, key_out: Option<&Path>) -> anyhow::Result<()> {
    println!("key id: {}", key.key_id);
    println!("public key (Ed25519, base64url): {}", key.public_key);
    match key_out {
        Some(path) => {
            write_private(path, &key.private_key_pem)?;
            println!(
                "private key written to {} (shown nowhere else)",
                path.display()
            );
        }
        None => println!("private key (shown once):\n{}", key.private_key_pem),
    }
    Ok(())
}

fn write_private(path: &Path, pem: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .with_context(|| format!("creating {} (it must not exist yet)", path.display()))?;
    file.write_all(pem.as_bytes())?;
    Ok(())
}
