//! `countersign orders import`: files of orders (JSON Lines or CSV) fed
//! through the same use case as the API, one transaction per order, so
//! each order is stored whole or refused whole, and a report says which
//! line was refused and why.

mod csv_rows;

use super::{Change, Feeder, OrderUpsert, Orders};
use std::path::Path;
use std::str::FromStr;

/// The file formats the import reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One upsert body per line, with its `external_id`.
    JsonLines,
    /// One row per order line, the order's fields repeated on each.
    Csv,
}

impl Format {
    /// The format a file's extension names (`.jsonl`, `.ndjson`, `.csv`).
    pub fn of_path(path: &Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "jsonl" | "ndjson" => Some(Format::JsonLines),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "jsonl" | "ndjson" => Ok(Format::JsonLines),
            "csv" => Ok(Format::Csv),
            other => Err(format!("unknown format {other:?}; use jsonl or csv")),
        }
    }
}

/// One order as read from a file, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedOrder {
    /// The (first) line of the file it came from, counting from 1.
    pub line: usize,
    pub external_id: Option<String>,
    pub body: Result<OrderUpsert, String>,
}

/// Reads every order of a file.
///
/// # Errors
/// A problem with the whole file (a CSV header without a required
/// column); problems of single orders are in their [`ParsedOrder`].
pub fn parse(text: &str, format: Format) -> Result<Vec<ParsedOrder>, String> {
    match format {
        Format::JsonLines => Ok(parse_json_lines(text)),
        Format::Csv => csv_rows::parse(text),
    }
}

fn parse_json_lines(text: &str) -> Vec<ParsedOrder> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            let line_number = index + 1;
            // The id, if the line is JSON at all, so a refusal can name it.
            let external_id = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|value| value.get("external_id")?.as_str().map(str::to_owned));
            let body = serde_json::from_str::<OrderUpsert>(line)
                .map_err(|e| format!("not a valid order: {e}"))
                .and_then(|body| match body.external_id {
                    Some(_) => Ok(body),
                    None => Err("external_id is missing".to_owned()),
                });
            ParsedOrder {
                line: line_number,
                external_id,
                body,
            }
        })
        .collect()
}

/// What happened to one order of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportLine {
    pub line: usize,
    pub external_id: Option<String>,
    /// What was stored, or why the order was refused.
    pub outcome: Result<Change, String>,
}

/// The import's outcome, order by order, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub lines: Vec<ImportLine>,
}

impl ImportReport {
    fn count(&self, wanted: Option<Change>) -> usize {
        self.lines
            .iter()
            .filter(|line| line.outcome.as_ref().ok().copied() == wanted)
            .count()
    }

    pub fn created(&self) -> usize {
        self.count(Some(Change::Created))
    }

    pub fn updated(&self) -> usize {
        self.count(Some(Change::Updated))
    }

    pub fn unchanged(&self) -> usize {
        self.count(Some(Change::Unchanged))
    }

    pub fn refused(&self) -> usize {
        self.count(None)
    }
}

impl Orders {
    /// Stores each order that could be read, each in its own transaction
    /// through [`Orders::upsert_order`], as the API would.
    pub async fn import_orders(&self, feeder: &Feeder, orders: Vec<ParsedOrder>) -> ImportReport {
        let mut report = ImportReport::default();
        for parsed in orders {
            let outcome = match (parsed.body, &parsed.external_id) {
                (Err(problem), _) => Err(problem),
                (Ok(_), None) => Err("external_id is missing".to_owned()),
                (Ok(body), Some(external_id)) => self
                    .upsert_order(feeder, external_id, body)
                    .await
                    .map(|outcome| outcome.change)
                    .map_err(|error| error.to_string()),
            };
            report.lines.push(ImportLine {
                line: parsed.line,
                external_id: parsed.external_id,
                outcome,
            });
        }
        report
    }
}
