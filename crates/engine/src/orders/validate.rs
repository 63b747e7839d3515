//! Checking what a shop sends, without the database: every problem named
//! with the field it is in, so a shop's developer can fix it from the
//! message alone.

use super::OrderError;
use super::input::{OrderUpsert, RecordRefund};
use chrono::{Duration, SubsecRound};
use domain::{Currency, DeliveryEvent, Money, OrderLine, Timestamp};
use serde::Serialize;

/// The most lines one order may have.
pub const MAX_LINES: usize = 500;
/// The most delivery events one order may have.
pub const MAX_EVENTS: usize = 100;
/// External ids become journal stream names (`order:<id>`, 64 at most).
pub const MAX_EXTERNAL_ID_LEN: usize = 50;
/// How far in the future a shop's clock may seem to be.
const CLOCK_SKEW_MINUTES: i64 = 5;

/// An order that passed every check that needs no database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ValidOrder {
    #[serde(skip)]
    pub external_id: String,
    #[serde(skip)]
    pub source_version: i64,
    pub customer: String,
    pub placed_at: Timestamp,
    pub lines: Vec<OrderLine>,
    pub shipping_minor: i64,
    pub discount_minor: i64,
    pub total: Money,
    pub payment_reference: String,
    /// Oldest first.
    pub events: Vec<DeliveryEvent>,
}

impl ValidOrder {
    /// The hash of the content (everything but the id and the source
    /// version): a repeat of a version must carry the same.
    pub fn content_hash(&self) -> String {
        domain::digest::sha256_json(self)
    }
}

/// A refund that passed every check that needs no order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValidRefund {
    pub refund_id: String,
    pub amount_minor: i64,
    pub currency: Currency,
    pub channel: String,
    pub reference: String,
    pub created_at: Timestamp,
}

/// An external order id: 1 to 50 letters, digits, `.`, `_` or `-`.
///
/// # Errors
/// [`OrderError::InvalidExternalId`] naming the rule.
pub fn check_external_id(raw: &str) -> Result<String, OrderError> {
    let valid = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
    if raw.is_empty() || raw.len() > MAX_EXTERNAL_ID_LEN || !raw.chars().all(valid) {
        return Err(OrderError::InvalidExternalId(format!(
            "external_id must be 1 to {MAX_EXTERNAL_ID_LEN} letters, digits, '.', '_' or '-', got {raw:?}"
        )));
    }
    Ok(raw.to_owned())
}

/// Checks an order for `external_id` against everything that needs no
/// database, as of `now`.
///
/// # Errors
/// [`OrderError::InvalidExternalId`] or [`OrderError::Invalid`] naming the
/// first problem.
pub(crate) fn order(
    external_id: &str,
    input: OrderUpsert,
    now: Timestamp,
) -> Result<ValidOrder, OrderError> {
    let external_id = check_external_id(external_id)?;
    if let Some(given) = &input.external_id
        && given != &external_id
    {
        return Err(OrderError::invalid(format!(
            "external_id {given:?} in the body differs from {external_id:?} in the path"
        )));
    }
    if input.source_version < 1 {
        return Err(OrderError::invalid(format!(
            "source_version must be at least 1, got {}",
            input.source_version
        )));
    }
    let customer = domain::UserName::parse(&input.customer)
        .map_err(|e| OrderError::invalid(format!("customer: {e}")))?;
    let currency = Currency::parse(input.currency.trim())
        .map_err(|e| OrderError::invalid(format!("currency: {e}")))?;
    let placed_at = input.placed_at.trunc_subsecs(6);
    not_in_future("placed_at", placed_at, now)?;
    let lines = lines(&input.lines)?;
    let lines_total = lines_total(&lines)?;
    non_negative("shipping_minor", input.shipping_minor)?;
    non_negative("discount_minor", input.discount_minor)?;
    let expected = lines_total
        .checked_add(input.shipping_minor)
        .and_then(|sum| sum.checked_sub(input.discount_minor))
        .ok_or_else(|| OrderError::invalid("the order's amounts overflow"))?;
    if input.total_minor != expected {
        return Err(OrderError::invalid(format!(
            "total_minor {} does not match the lines ({lines_total}) + shipping_minor ({}) - discount_minor ({}) = {expected}",
            input.total_minor, input.shipping_minor, input.discount_minor
        )));
    }
    if expected < 0 {
        return Err(OrderError::invalid(format!(
            "discount_minor {} is more than the lines and shipping ({})",
            input.discount_minor,
            lines_total.saturating_add(input.shipping_minor)
        )));
    }
    let payment_reference = input.payment_reference.trim().to_owned();
    text("payment_reference", &payment_reference, 128)?;
    let events = events(input.events, placed_at, now)?;
    Ok(ValidOrder {
        external_id,
        source_version: input.source_version,
        customer: customer.as_str().to_owned(),
        placed_at,
        lines,
        shipping_minor: input.shipping_minor,
        discount_minor: input.discount_minor,
        total: Money::new(expected, currency),
        payment_reference,
        events,
    })
}

/// Checks a refund from another channel against everything that needs no
/// order, as of `now`.
///
/// # Errors
/// [`OrderError::Invalid`] naming the first problem.
pub(crate) fn refund(input: RecordRefund, now: Timestamp) -> Result<ValidRefund, OrderError> {
    let refund_id = input.refund_id.trim().to_owned();
    let printable = |c: char| c.is_ascii_graphic();
    if refund_id.is_empty() || refund_id.len() > 64 || !refund_id.chars().all(printable) {
        return Err(OrderError::invalid(format!(
            "refund_id must be 1 to 64 printable characters without spaces, got {:?}",
            input.refund_id
        )));
    }
    if input.amount_minor <= 0 {
        return Err(OrderError::invalid(format!(
            "amount_minor must be positive, got {}",
            input.amount_minor
        )));
    }
    let currency = Currency::parse(input.currency.trim())
        .map_err(|e| OrderError::invalid(format!("currency: {e}")))?;
    let channel = input.channel.trim().to_owned();
    let channel_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    if channel.is_empty() || channel.len() > 64 || !channel.chars().all(channel_char) {
        return Err(OrderError::invalid(format!(
            "channel must be 1 to 64 lower-case letters, digits or '_' (e.g. support_desk), got {:?}",
            input.channel
        )));
    }
    if channel == "countersign" {
        return Err(OrderError::invalid(
            "channel \"countersign\" is Countersign's own; name the channel the refund was made through",
        ));
    }
    let reference = input.reference.trim().to_owned();
    text("reference", &reference, 200)?;
    let created_at = input.created_at.trunc_subsecs(6);
    not_in_future("created_at", created_at, now)?;
    Ok(ValidRefund {
        refund_id,
        amount_minor: input.amount_minor,
        currency,
        channel,
        reference,
        created_at,
    })
}

fn lines(input: &[super::input::LineInput]) -> Result<Vec<OrderLine>, OrderError> {
    if input.is_empty() || input.len() > MAX_LINES {
        return Err(OrderError::invalid(format!(
            "an order has 1 to {MAX_LINES} lines, got {}",
            input.len()
        )));
    }
    input
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let field = |name: &str| format!("lines[{i}].{name}");
            let sku = line.sku.trim().to_owned();
            text(&field("sku"), &sku, 64)?;
            let description = line.description.trim().to_owned();
            text(&field("description"), &description, 500)?;
            let quantity = i32::try_from(line.quantity)
                .ok()
                .filter(|q| (1..=100_000).contains(q))
                .ok_or_else(|| {
                    OrderError::invalid(format!(
                        "{} must be 1 to 100000, got {}",
                        field("quantity"),
                        line.quantity
                    ))
                })?;
            non_negative(&field("unit_price_minor"), line.unit_price_minor)?;
            Ok(OrderLine {
                sku,
                description,
                quantity,
                unit_price_minor: line.unit_price_minor,
            })
        })
        .collect()
}

fn lines_total(lines: &[OrderLine]) -> Result<i64, OrderError> {
    lines
        .iter()
        .try_fold(0i64, |sum, line| {
            line.unit_price_minor
                .checked_mul(i64::from(line.quantity))
                .and_then(|amount| sum.checked_add(amount))
        })
        .ok_or_else(|| OrderError::invalid("the lines' amounts overflow"))
}

fn events(
    mut events: Vec<DeliveryEvent>,
    placed_at: Timestamp,
    now: Timestamp,
) -> Result<Vec<DeliveryEvent>, OrderError> {
    if events.len() > MAX_EVENTS {
        return Err(OrderError::invalid(format!(
            "an order has at most {MAX_EVENTS} events, got {}",
            events.len()
        )));
    }
    for (i, event) in events.iter_mut().enumerate() {
        event.at = event.at.trunc_subsecs(6);
        let field = format!("events[{i}].at");
        if event.at < placed_at {
            return Err(OrderError::invalid(format!(
                "{field} ({}) is before placed_at ({placed_at})",
                event.at
            )));
        }
        not_in_future(&field, event.at, now)?;
    }
    // Stable: events at the same instant keep the order the shop gave.
    events.sort_by_key(|event| event.at);
    Ok(events)
}

fn not_in_future(field: &str, at: Timestamp, now: Timestamp) -> Result<(), OrderError> {
    if at > now + Duration::minutes(CLOCK_SKEW_MINUTES) {
        return Err(OrderError::invalid(format!(
            "{field} ({at}) is in the future"
        )));
    }
    Ok(())
}

fn non_negative(field: &str, amount: i64) -> Result<(), OrderError> {
    if amount < 0 {
        return Err(OrderError::invalid(format!(
            "{field} must not be negative, got {amount}"
        )));
    }
    Ok(())
}

fn text(field: &str, value: &str, max_chars: usize) -> Result<(), OrderError> {
    if value.is_empty() || value.chars().count() > max_chars {
        return Err(OrderError::invalid(format!(
            "{field} must be 1 to {max_chars} characters"
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(OrderError::invalid(format!(
            "{field} must not contain control characters"
        )));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::orders::input::LineInput;
    use chrono::TimeZone;
    use domain::DeliveryKind;

    fn now() -> Timestamp {
        chrono::Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap()
    }

    fn upsert() -> OrderUpsert {
        OrderUpsert {
            external_id: None,
            source_version: 1,
            customer: "customer".into(),
            placed_at: now() - Duration::days(10),
            currency: "eur".into(),
            lines: vec![
                LineInput {
                    sku: "MUG".into(),
                    description: "Mug".into(),
                    quantity: 2,
                    unit_price_minor: 1250,
                },
                LineInput {
                    sku: "SOCK".into(),
                    description: "Socks".into(),
                    quantity: 1,
                    unit_price_minor: 1900,
                },
            ],
            shipping_minor: 490,
            discount_minor: 500,
            total_minor: 4390,
            payment_reference: "pi_123".into(),
            events: vec![],
        }
    }

    fn problem(input: OrderUpsert) -> String {
        order("4821", input, now()).unwrap_err().to_string()
    }

    #[test]
    fn a_total_that_is_not_lines_plus_shipping_minus_discount_is_refused_with_the_sum() {
        assert_eq!(
            order("4821", upsert(), now()).unwrap().total,
            Money::new(4390, Currency::EUR)
        );
        let message = problem(OrderUpsert {
            total_minor: 4400,
            ..upsert()
        });
        assert!(message.contains("total_minor 4400"), "{message}");
        assert!(message.contains("= 4390"), "{message}");
    }

    #[test]
    fn each_bad_field_is_named_in_the_refusal() {
        let mut bad_quantity = upsert();
        bad_quantity.lines[1].quantity = 0;
        assert!(problem(bad_quantity).contains("lines[1].quantity"));
        assert!(
            problem(OrderUpsert {
                currency: "EURO".into(),
                ..upsert()
            })
            .starts_with("currency:")
        );
        assert!(
            problem(OrderUpsert {
                source_version: 0,
                ..upsert()
            })
            .contains("source_version")
        );
        assert!(
            problem(OrderUpsert {
                lines: vec![],
                ..upsert()
            })
            .contains("1 to 500 lines")
        );
        assert!(
            problem(OrderUpsert {
                external_id: Some("4822".into()),
                ..upsert()
            })
            .contains("differs")
        );
        assert!(order("48 21", upsert(), now()).is_err());
        assert!(order(&"9".repeat(51), upsert(), now()).is_err());
    }

    #[test]
    fn events_are_kept_in_time_order_and_cannot_precede_the_order_or_lie_ahead() {
        let shipped = DeliveryEvent {
            kind: DeliveryKind::Shipped,
            at: now() - Duration::days(9),
        };
        let delivered = DeliveryEvent {
            kind: DeliveryKind::Delivered,
            at: now() - Duration::days(7),
        };
        let valid = order(
            "4821",
            OrderUpsert {
                events: vec![delivered, shipped],
                ..upsert()
            },
            now(),
        )
        .unwrap();
        assert_eq!(valid.events, vec![shipped, delivered]);
        let before = DeliveryEvent {
            kind: DeliveryKind::Shipped,
            at: now() - Duration::days(11),
        };
        assert!(
            problem(OrderUpsert {
                events: vec![before],
                ..upsert()
            })
            .contains("before placed_at")
        );
        let ahead = DeliveryEvent {
            kind: DeliveryKind::Delivered,
            at: now() + Duration::days(1),
        };
        assert!(
            problem(OrderUpsert {
                events: vec![ahead],
                ..upsert()
            })
            .contains("in the future")
        );
    }

    #[test]
    fn the_content_hash_ignores_the_source_version_but_not_the_content() {
        let first = order("4821", upsert(), now()).unwrap();
        let bumped = order(
            "4821",
            OrderUpsert {
                source_version: 2,
                ..upsert()
            },
            now(),
        )
        .unwrap();
        assert_eq!(first.content_hash(), bumped.content_hash());
        let mut changed = upsert();
        changed.lines[0].description = "Enamel mug".into();
        let changed = order("4821", changed, now()).unwrap();
        assert_ne!(first.content_hash(), changed.content_hash());
    }

    #[test]
    fn refunds_in_countersigns_own_channel_or_without_an_amount_are_refused() {
        let refund = || RecordRefund {
            refund_id: "re_1".into(),
            amount_minor: 1000,
            currency: "EUR".into(),
            channel: "support_desk".into(),
            reference: "ticket 1".into(),
            created_at: now(),
        };
        assert!(super::refund(refund(), now()).is_ok());
        let own = RecordRefund {
            channel: "countersign".into(),
            ..refund()
        };
        assert!(super::refund(own, now()).is_err());
        let zero = RecordRefund {
            amount_minor: 0,
            ..refund()
        };
        assert!(
            super::refund(zero, now())
                .unwrap_err()
                .to_string()
                .contains("amount_minor")
        );
    }
}
