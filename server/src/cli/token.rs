//! `countersign token create | revoke | list`.

use crate::config::Settings;
use crate::startup::open_database;
use clap::Subcommand;
use engine::accounts::Accounts;

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Create a bearer token for a user; the secret is printed once.
    Create {
        #[arg(long)]
        user: String,
        #[arg(long, default_value = "cli")]
        label: String,
    },
    /// Revoke a token by id.
    Revoke { id: String },
    /// List a user's tokens (never their secrets).
    List {
        #[arg(long)]
        user: String,
    },
}

pub async fn run(command: TokenCommand, settings: &Settings) -> anyhow::Result<()> {
    let db = open_database(settings).await?;
    let accounts = Accounts::with_system_clock(db.clone());
    match command {
        TokenCommand::Create { user, label } => {
            let token = accounts.create_token(&user, &label).await?;
            println!("token id: {}", token.id);
            println!("secret (shown once): {}", token.secret);
        }
        TokenCommand::Revoke { id } => {
            if accounts.revoke_token(&id).await? {
                println!("revoked {id}");
            } else {
                anyhow::bail!("no active token {id}");
            }
        }
        TokenCommand::List { user } => {
            let record = storage::users::find_by_name(db.conn(), &user)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no user named {user:?}"))?;
            for token in storage::tokens::list_for_user(db.conn(), &record.id).await? {
                println!(
                    "{}  {:<20} created {}  {}",
                    token.id,
                    token.label,
                    token.created_at.format("%Y-%m-%d %H:%M UTC"),
                    if token.revoked_at.is_some() {
                        "revoked"
                    } else {
                        "active"
                    }
                );
            }
        }
    }
    Ok(())
}
