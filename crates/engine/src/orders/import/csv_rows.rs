//! CSV import: one row per order line, the order's fields repeated on each
//! row, rows grouped by `external_id` (in the order ids first appear).
//!
//! Columns (a header row names them, in any order):
//! `external_id, source_version, customer, placed_at, currency,
//! total_minor, payment_reference, sku, description, quantity,
//! unit_price_minor` and optionally `shipping_minor, discount_minor,
//! shipped_at, delivered_at, returned_at` (UTC RFC 3339 times; one event of
//! each kind at most, which is what a flat row can say).

use super::ParsedOrder;
use crate::orders::{LineInput, OrderUpsert};
use domain::{DeliveryEvent, DeliveryKind, Timestamp};
use std::collections::HashMap;

/// The order's own columns: every row of one order must repeat them alike.
const ORDER_COLUMNS: [&str; 12] = [
    "source_version",
    "customer",
    "placed_at",
    "currency",
    "total_minor",
    "payment_reference",
    "shipping_minor",
    "discount_minor",
    "shipped_at",
    "delivered_at",
    "returned_at",
    "external_id",
];
const LINE_COLUMNS: [&str; 4] = ["sku", "description", "quantity", "unit_price_minor"];
const OPTIONAL_COLUMNS: [&str; 5] = [
    "shipping_minor",
    "discount_minor",
    "shipped_at",
    "delivered_at",
    "returned_at",
];

/// The rows of one order as they accumulate.
struct Group {
    first_line: usize,
    external_id: String,
    order_fields: Vec<String>,
    lines: Vec<LineInput>,
    /// The first problem found in any of its rows.
    problem: Option<String>,
}

/// # Errors
/// A header that lacks a required column, repeats one or names an unknown one.
pub(super) fn parse(text: &str) -> Result<Vec<ParsedOrder>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| format!("the CSV header cannot be read: {e}"))?
        .clone();
    let columns = column_positions(&header)?;
    let mut parsed = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for record in reader.records() {
        let record = match record {
            Ok(record) => record,
            Err(error) => {
                parsed.push(ParsedOrder {
                    line: error.position().map_or(0, line_of),
                    external_id: None,
                    body: Err(format!("the row cannot be read: {error}")),
                });
                continue;
            }
        };
        let line = record.position().map_or(0, line_of);
        let field = |name: &str| {
            columns
                .get(name)
                .and_then(|&at| record.get(at))
                .unwrap_or("")
                .to_owned()
        };
        let external_id = field("external_id");
        if external_id.is_empty() {
            parsed.push(ParsedOrder {
                line,
                external_id: None,
                body: Err("external_id is empty".to_owned()),
            });
            continue;
        }
        let order_fields: Vec<String> = ORDER_COLUMNS.iter().map(|name| field(name)).collect();
        let index = *group_of.entry(external_id.clone()).or_insert_with(|| {
            groups.push(Group {
                first_line: line,
                external_id: external_id.clone(),
                order_fields: order_fields.clone(),
                lines: Vec::new(),
                problem: None,
            });
            groups.len() - 1
        });
        let group = &mut groups[index];
        if group.problem.is_some() {
            continue;
        }
        if let Some(differs) = ORDER_COLUMNS
            .iter()
            .zip(order_fields.iter().zip(&group.order_fields))
            .find(|(_, (here, first))| here != first)
        {
            let (name, (here, first)) = differs;
            group.problem = Some(format!(
                "line {line}: {name} {here:?} differs from {first:?} on line {} of the same order",
                group.first_line
            ));
            continue;
        }
        match line_input(&field, line) {
            Ok(input) => group.lines.push(input),
            Err(problem) => group.problem = Some(problem),
        }
    }
    parsed.extend(groups.into_iter().map(|group| {
        let body = match group.problem {
            Some(problem) => Err(problem),
            None => order_input(&group),
        };
        ParsedOrder {
            line: group.first_line,
            external_id: Some(group.external_id),
            body,
        }
    }));
    parsed.sort_by_key(|order| order.line);
    Ok(parsed)
}

fn line_of(position: &csv::Position) -> usize {
    usize::try_from(position.line()).unwrap_or(usize::MAX)
}

fn column_positions(header: &csv::StringRecord) -> Result<HashMap<String, usize>, String> {
    let mut columns = HashMap::new();
    for (at, name) in header.iter().enumerate() {
        let name = name.trim().to_ascii_lowercase();
        if !ORDER_COLUMNS.contains(&name.as_str()) && !LINE_COLUMNS.contains(&name.as_str()) {
            return Err(format!(
                "unknown column {name:?}; the columns are {}, {}",
                ORDER_COLUMNS.join(", "),
                LINE_COLUMNS.join(", ")
            ));
        }
        if columns.insert(name.clone(), at).is_some() {
            return Err(format!("column {name:?} appears twice"));
        }
    }
    let missing: Vec<&str> = ORDER_COLUMNS
        .iter()
        .chain(LINE_COLUMNS.iter())
        .filter(|name| !OPTIONAL_COLUMNS.contains(name) && !columns.contains_key(**name))
        .copied()
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the CSV header lacks the column(s) {}",
            missing.join(", ")
        ));
    }
    Ok(columns)
}

fn line_input(field: &impl Fn(&str) -> String, line: usize) -> Result<LineInput, String> {
    Ok(LineInput {
        sku: field("sku"),
        description: field("description"),
        quantity: integer(&field("quantity"), "quantity", line)?,
        unit_price_minor: integer(&field("unit_price_minor"), "unit_price_minor", line)?,
    })
}

/// The order the group's first row describes, with every row's line.
fn order_input(group: &Group) -> Result<OrderUpsert, String> {
    let line = group.first_line;
    let value = |name: &str| {
        ORDER_COLUMNS
            .iter()
            .position(|column| *column == name)
            .and_then(|at| group.order_fields.get(at))
            .map_or("", String::as_str)
    };
    let optional_integer = |name: &str| match value(name) {
        "" => Ok(0),
        raw => integer(raw, name, line),
    };
    let mut events = Vec::new();
    for (column, kind) in [
        ("shipped_at", DeliveryKind::Shipped),
        ("delivered_at", DeliveryKind::Delivered),
        ("returned_at", DeliveryKind::Returned),
    ] {
        if !value(column).is_empty() {
            events.push(DeliveryEvent {
                kind,
                at: time(value(column), column, line)?,
            });
        }
    }
    Ok(OrderUpsert {
        external_id: Some(group.external_id.clone()),
        source_version: integer(value("source_version"), "source_version", line)?,
        customer: value("customer").to_owned(),
        placed_at: time(value("placed_at"), "placed_at", line)?,
        currency: value("currency").to_owned(),
        lines: group.lines.clone(),
        shipping_minor: optional_integer("shipping_minor")?,
        discount_minor: optional_integer("discount_minor")?,
        total_minor: integer(value("total_minor"), "total_minor", line)?,
        payment_reference: value("payment_reference").to_owned(),
        events,
    })
}

fn integer(raw: &str, column: &str, line: usize) -> Result<i64, String> {
    raw.parse()
        .map_err(|_| format!("line {line}: {column} must be a whole number, got {raw:?}"))
}

fn time(raw: &str, column: &str, line: usize) -> Result<Timestamp, String> {
    chrono::DateTime::parse_from_rfc3339(raw)
        .map(|at| at.with_timezone(&chrono::Utc))
        .map_err(|_| {
            format!(
                "line {line}: {column} must be an RFC 3339 time such as 2026-11-18T10:00:00Z, got {raw:?}"
            )
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const HEADER: &str = "external_id,source_version,customer,placed_at,currency,total_minor,shipping_minor,payment_reference,delivered_at,sku,description,quantity,unit_price_minor";

    #[test]
    fn rows_of_one_order_become_one_order_with_every_line() {
        let text = format!(
            "{HEADER}\n\
             9001,1,customer,2026-11-18T10:00:00Z,EUR,4490,0,pi_1,2026-11-20T10:00:00Z,MUG,Mug,2,1250\n\
             9002,1,customer2,2026-11-18T10:00:00Z,EUR,1000,0,pi_2,,CAP,Cap,1,1000\n\
             9001,1,customer,2026-11-18T10:00:00Z,EUR,4490,0,pi_1,2026-11-20T10:00:00Z,SOCK,Socks,1,1990\n"
        );
        let orders = parse(&text).unwrap();
        assert_eq!(orders.len(), 2);
        assert_eq!(orders[0].line, 2);
        let first = orders[0].body.as_ref().unwrap();
        assert_eq!(first.lines.len(), 2);
        assert_eq!(first.events.len(), 1);
        assert_eq!(orders[1].external_id.as_deref(), Some("9002"));
        assert!(orders[1].body.as_ref().unwrap().events.is_empty());
    }

    #[test]
    fn a_row_that_disagrees_with_its_order_refuses_the_whole_order_naming_the_line() {
        let text = format!(
            "{HEADER}\n\
             9001,1,customer,2026-11-18T10:00:00Z,EUR,4490,0,pi_1,,MUG,Mug,2,1250\n\
             9001,1,customer,2026-11-18T10:00:00Z,EUR,5000,0,pi_1,,SOCK,Socks,1,1990\n\
             9003,1,customer,2026-11-18T10:00:00Z,EUR,100,0,pi_3,,PEN,Pen,one,100\n"
        );
        let orders = parse(&text).unwrap();
        let problem = orders[0].body.as_ref().unwrap_err();
        assert!(problem.starts_with("line 3: total_minor"), "{problem}");
        let problem = orders[1].body.as_ref().unwrap_err();
        assert!(problem.contains("line 4: quantity"), "{problem}");
    }

    #[test]
    fn a_header_without_a_required_column_refuses_the_file() {
        let problem = parse("external_id,sku\n1,MUG\n").unwrap_err();
        assert!(problem.contains("source_version"), "{problem}");
        assert!(parse(&format!("{HEADER},colour\n")).is_err());
    }
}
