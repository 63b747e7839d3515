//! `countersign orders import FILE [--format jsonl|csv]`: a shop's orders
//! from a file, each stored whole or refused whole, with a report line per
//! order and counts at the end; the exit status is non-zero when any order
//! was refused.

use crate::config::Settings;
use crate::startup::open_database;
use clap::Subcommand;
use engine::orders::Change;
use engine::orders::import::{Format, ImportLine, ImportReport, parse};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum OrdersCommand {
    /// Import orders: JSON Lines (one `PUT /api/v1/orders/{id}` body per
    /// line, with its `external_id`) or CSV (one row per order line; see
    /// the README for the columns). Each order goes through the same checks
    /// as the API, in a transaction of its own.
    Import {
        file: PathBuf,
        /// `jsonl` or `csv` (default: from the file's extension).
        #[arg(long)]
        format: Option<Format>,
    },
}

pub async fn run(command: OrdersCommand, settings: &Settings) -> anyhow::Result<()> {
    match command {
        OrdersCommand::Import { file, format } => import(file, format, settings).await,
    }
}

async fn import(file: PathBuf, format: Option<Format>, settings: &Settings) -> anyhow::Result<()> {
    let format = format.or_else(|| Format::of_path(&file)).ok_or_else(|| {
        anyhow::anyhow!(
            "cannot tell the format of {} from its extension; give --format jsonl or --format csv",
            file.display()
        )
    })?;
    let text = std::fs::read_to_string(&file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    let orders = parse(&text, format).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let db = open_database(settings).await?;
    // Only the provider's reference check is used: it does no I/O, so the
    // address the sandbox would be reached at does not matter here.
    let payments = crate::payments::build(settings, ([127, 0, 0, 1], 0).into())?;
    let report = engine::orders::Orders::new(
        db.clone(),
        engine::Clock::system(),
        payments.provider.clone(),
    )
    .import_orders(&engine::orders::Feeder::command_line(), orders)
    .await;
    for line in &report.lines {
        println!("{}", report_line(line));
    }
    println!("{}", totals(&report));
    let refused = report.refused();
    if refused > 0 {
        anyhow::bail!(
            "{refused} of {} orders in {} were refused; nothing of those was stored",
            report.lines.len(),
            file.display()
        );
    }
    Ok(())
}

fn report_line(line: &ImportLine) -> String {
    let order = line
        .external_id
        .as_deref()
        .map_or_else(|| "(no external_id)".to_owned(), |id| format!("order {id}"));
    let outcome = match &line.outcome {
        Ok(Change::Created) => "created".to_owned(),
        Ok(Change::Updated) => "updated".to_owned(),
        Ok(Change::Unchanged) => "unchanged (already stored at this version)".to_owned(),
        Err(problem) => format!("refused: {problem}"),
    };
    format!("line {}: {order}: {outcome}", line.line)
}

fn totals(report: &ImportReport) -> String {
    format!(
        "{} orders: {} created, {} updated, {} unchanged, {} refused",
        report.lines.len(),
        report.created(),
        report.updated(),
        report.unchanged(),
        report.refused()
    )
}
