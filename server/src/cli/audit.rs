//! `countersign audit verify`: re-computes the journal's hash chain.

use crate::config::Settings;
use crate::startup::open_database;
use clap::Subcommand;
use storage::journal::ChainReport;

#[derive(Subcommand)]
pub enum AuditCommand {
    /// Check that no journal event was edited, deleted or reordered.
    /// Exits non-zero when the chain is broken.
    Verify,
}

pub async fn run(command: AuditCommand, settings: &Settings) -> anyhow::Result<()> {
    let db = open_database(settings).await?;
    match command {
        AuditCommand::Verify => match storage::journal::verify_chain(db.conn()).await? {
            ChainReport::Intact { events, head } => {
                println!("journal intact: {events} events, head {head}");
                Ok(())
            }
            ChainReport::Broken { at_seq, problem } => {
                anyhow::bail!("journal BROKEN at event {at_seq}: {problem}")
            }
        },
    }
}
