//! The command line: `countersign serve | migrate | user … | token … | orders … | widget … | work … | gateway … | seed-demo`.

mod audit;
mod gateway;
mod orders;
mod policy;
mod sandbox;
mod token;
mod user;
mod widget;
mod work;

use crate::config::Settings;
use crate::startup::{Application, open_database, shutdown_signal};
use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "countersign",
    version,
    about = "Agents propose; people approve; code executes once."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the web server (migrates first).
    Serve {
        /// Address to listen on; overrides COUNTERSIGN_LISTEN.
        #[arg(long)]
        listen: Option<SocketAddr>,
    },
    /// Apply pending database migrations and exit.
    Migrate,
    /// Manage users.
    #[command(subcommand)]
    User(user::UserCommand),
    /// Manage API bearer tokens.
    #[command(subcommand)]
    Token(token::TokenCommand),
    /// Import a shop's orders from a file.
    #[command(subcommand)]
    Orders(orders::OrdersCommand),
    /// Manage policy documents.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Check the audit journal.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Manage the sites that embed the chat widget, and sign test tokens.
    #[command(subcommand)]
    Widget(widget::WidgetCommand),
    /// Background work for operators: dead letters and retries.
    #[command(subcommand)]
    Work(work::WorkCommand),
    /// What this agent group trusts: peers' keys and allowed task pairs.
    #[command(subcommand)]
    Gateway(gateway::GatewayCommand),
    /// Run the sandbox payment provider on its own.
    Sandbox {
        #[arg(long, default_value = "127.0.0.1:3900")]
        listen: SocketAddr,
        /// The key clients must present; overrides COUNTERSIGN_SANDBOX_SECRET_KEY.
        /// Without either, one is generated and printed at start.
        #[arg(long)]
        secret_key: Option<String>,
    },
    /// Load the demo users, orders and policies into an empty database.
    SeedDemo,
}

/// Entry point of the binary.
///
/// # Errors
/// Whatever the command failed with; printed by `main`.
pub fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let mut settings = Settings::load()?;
    crate::telemetry::init(settings.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Serve { listen } => {
                if let Some(listen) = listen {
                    settings.listen = listen;
                }
                serve(settings).await
            }
            Command::Migrate => {
                open_database(&settings).await?;
                println!("migrations applied to {}", settings.redacted_database_url());
                Ok(())
            }
            Command::User(command) => user::run(command, &settings).await,
            Command::Token(command) => token::run(command, &settings).await,
            Command::Orders(command) => orders::run(command, &settings).await,
            Command::Policy(command) => policy::run(command, &settings).await,
            Command::Audit(command) => audit::run(command, &settings).await,
            Command::Widget(command) => widget::run(command, &settings).await,
            Command::Work(command) => work::run(command, &settings).await,
            Command::Gateway(command) => gateway::run(command, &settings).await,
            Command::Sandbox { listen, secret_key } => {
                sandbox::run(listen, secret_key, &settings).await
            }
            Command::SeedDemo => {
                let mut settings = settings;
                settings.seed_demo = Some(true);
                let db = open_database(&settings).await?;
                crate::demo::seed_and_announce(&settings, &db).await
            }
        }
    })
}

async fn serve(settings: Settings) -> anyhow::Result<()> {
    tracing::info!(database = %settings.redacted_database_url(), "starting");
    let db = open_database(&settings).await?;
    crate::demo::seed_and_announce(&settings, &db).await?;
    let settings = Arc::new(settings);
    let app = Application::build(settings.clone(), db).await?;
    tracing::info!(address = %app.local_addr()?, "listening");
    app.run_until(shutdown_signal()).await?;
    Ok(())
}
