//! `countersign user add | list | disable`.

use crate::config::Settings;
use crate::startup::open_database;
use clap::Subcommand;
use domain::{Role, RoleSet};
use engine::accounts::{Accounts, CreateUser};
use engine::settings::ChangedBy;
use std::io::BufRead;

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user. The password is read from standard input (one line)
    /// with --password-stdin, otherwise a random one is generated and printed.
    Add {
        name: String,
        /// Role to grant; repeat for several (customer, approver, manager, admin, agent, shop).
        #[arg(long = "role", required = true)]
        roles: Vec<Role>,
        #[arg(long)]
        display_name: Option<String>,
        #[arg(long)]
        password_stdin: bool,
    },
    /// List users with their roles and state.
    List,
    /// Disable a user and end all of their sessions.
    Disable { name: String },
}

pub async fn run(command: UserCommand, settings: &Settings) -> anyhow::Result<()> {
    let db = open_database(settings).await?;
    let accounts = Accounts::with_system_clock(db.clone());
    match command {
        UserCommand::Add {
            name,
            roles,
            display_name,
            password_stdin,
        } => {
            let (password, generated) = if password_stdin {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                (line.trim_end_matches(['\n', '\r']).to_owned(), false)
            } else {
                (generated_password(), true)
            };
            let user = accounts
                .create_user(
                    &ChangedBy::console(),
                    CreateUser {
                        name: &name,
                        display_name: display_name.as_deref(),
                        password: &password,
                        roles: RoleSet::new(roles),
                    },
                )
                .await?;
            println!(
                "created user {} ({}) with roles {}",
                user.name, user.id, user.roles
            );
            if generated {
                println!("password: {password}");
            }
        }
        UserCommand::List => {
            for user in storage::users::list(db.conn()).await? {
                println!(
                    "{:<20} {:<30} {:<28} {}",
                    user.name,
                    user.display_name,
                    user.roles.to_string(),
                    if user.disabled { "disabled" } else { "active" }
                );
            }
        }
        UserCommand::Disable { name } => {
            accounts.disable_user(&ChangedBy::console(), &name).await?;
            println!("disabled {name}; their sessions have ended");
        }
    }
    Ok(())
}

fn generated_password() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 12];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}
