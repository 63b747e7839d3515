//! `countersign policy import | list`.

use crate::config::Settings;
use crate::startup::open_database;
use clap::Subcommand;
use engine::policies::PolicyLibrary;
use engine::settings::ChangedBy;
use std::path::PathBuf;
use storage::policies::ImportOutcome;

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Import a Markdown policy; changed content becomes a new version and
    /// earlier versions stay readable for the evidence that cites them.
    Import {
        file: PathBuf,
        /// Document slug, e.g. `returns-policy` (default: the file name).
        #[arg(long)]
        slug: Option<String>,
        /// Title (default: the first `# ` heading).
        #[arg(long)]
        title: Option<String>,
    },
    /// List documents with the version in force.
    List,
}

pub async fn run(command: PolicyCommand, settings: &Settings) -> anyhow::Result<()> {
    let db = open_database(settings).await?;
    match command {
        PolicyCommand::Import { file, slug, title } => {
            let body = std::fs::read_to_string(&file)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
            let slug = match slug {
                Some(slug) => slug,
                None => file
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .map(str::to_lowercase)
                    .ok_or_else(|| anyhow::anyhow!("give --slug"))?,
            };
            let title = match title {
                Some(title) => title,
                None => body
                    .lines()
                    .find_map(|l| l.strip_prefix("# "))
                    .map(|t| t.trim().to_owned())
                    .ok_or_else(|| anyhow::anyhow!("the file has no `# ` title; give --title"))?,
            };
            let library = PolicyLibrary::load(db).await?;
            match library
                .import(&ChangedBy::console(), &slug, &title, &body, engine::now())
                .await?
            {
                ImportOutcome::Created { version } => {
                    println!("created {slug} at version {version}")
                }
                ImportOutcome::NewVersion { version } => println!("{slug}: new version {version}"),
                ImportOutcome::Unchanged { version } => {
                    println!("{slug}: unchanged (version {version})")
                }
            }
        }
        PolicyCommand::List => {
            for (slug, version) in storage::policies::current_versions(db.conn()).await? {
                println!("{slug:<24} {:<40} {}", version.title, version.content_hash);
            }
        }
    }
    Ok(())
}
