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
            ChainReport::Intact {
                events,
                streams,
                checkpoints,
            } => {
                println!(
                    "journal intact: {events} events in {streams} streams, {checkpoints} checkpoints"
                );
                Ok(())
            }
            ChainReport::Broken {
                stream,
                at_seq,
                problem,
            } => anyhow::bail!("journal BROKEN in {stream} at event {at_seq}: {problem}"),
        },
    }
}
