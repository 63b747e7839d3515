//! `countersign work list | retry | resolve | cancel`: the operations
//! view's dead letters and retries for operators without a browser, through
//! the same engine use cases as `/ops` (journaled with the `--admin`
//! account, which must be a manager or an admin).

use crate::config::Settings;
use crate::startup::open_database;
use app::ops::backend::{CHANNEL, page};
use app::ops::{WorkAction, WorkRow};
use clap::Subcommand;
use engine::Engine;
use engine::policies::PolicyLibrary;

#[derive(Subcommand)]
pub enum WorkCommand {
    /// Items dead-lettered, retrying or running, and any open alert.
    List {
        /// The manager or admin account asking.
        #[arg(long)]
        admin: String,
    },
    /// Run a dead-lettered item again from its first attempt.
    Retry {
        id: String,
        #[arg(long)]
        admin: String,
    },
    /// Mark a dead-lettered item as settled by hand.
    Resolve {
        id: String,
        #[arg(long)]
        admin: String,
    },
    /// Drop a check or notification that has not started (or is dead).
    Cancel {
        id: String,
        #[arg(long)]
        admin: String,
    },
}

pub async fn run(command: WorkCommand, settings: &Settings) -> anyhow::Result<()> {
    let db = open_database(settings).await?;
    // The engine as the server builds it; this process runs no lanes (a
    // retried item is taken by the server's runner on its next look).
    let payments = crate::payments::build(settings, settings.listen)?;
    let engine = Engine::new(
        db.clone(),
        payments.provider.clone(),
        PolicyLibrary::load(db.clone()).await?,
        settings.engine_settings(),
    );
    let (admin, action, id) = match command {
        WorkCommand::List { admin } => {
            let actor = actor(&db, &admin).await?;
            let view = page(engine.work.ops_view(&actor).await.map_err(refused)?);
            if view.attention.is_empty() {
                println!("nothing is running, retrying or dead-lettered");
            }
            for row in &view.attention {
                println!("{}", line(row));
            }
            for alert in &view.alerts {
                println!("alert {}  {}  {}", alert.id, alert.kind, alert.message);
            }
            return Ok(());
        }
        WorkCommand::Retry { id, admin } => (admin, WorkAction::Retry, id),
        WorkCommand::Resolve { id, admin } => (admin, WorkAction::Resolve, id),
        WorkCommand::Cancel { id, admin } => (admin, WorkAction::Cancel, id),
    };
    let actor = actor(&db, &admin).await?;
    let after = engine
        .work
        .act_on_work(&actor, id.trim(), action.into())
        .await
        .map_err(refused)?;
    // Open `/ops` pages on PostgreSQL hear of it from the hints' channel
    // (sent here and awaited: this process ends next). A SQLite server is
    // another process with no channel to it: its pages catch up on their
    // next hint or reconnect.
    if db.postgres_pool().is_some() {
        use storage::ConnectionTrait;
        db.conn()
            .execute_unprepared(&format!("NOTIFY {CHANNEL}, '{{}}'"))
            .await?;
    }
    println!("{}", line(&app::ops::backend::work_row(after)));
    Ok(())
}

fn refused(error: engine::work::ops::OpsError) -> anyhow::Error {
    anyhow::anyhow!("refused: {error}")
}

fn line(row: &WorkRow) -> String {
    format!(
        "{}  {:<8}  {:<16}  {:<40}  attempt {}/{}  {}",
        row.id,
        row.state,
        row.kind,
        row.subject.as_deref().unwrap_or("-"),
        row.attempts,
        row.max_attempts,
        row.last_error.as_deref().unwrap_or("")
    )
}

async fn actor(db: &storage::Database, name: &str) -> anyhow::Result<engine::Actor> {
    let user = storage::users::find_by_name(db.conn(), name)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no user named {name:?}"))?;
    Ok(engine::Actor::from(user))
}
