//! The refund specialist's rules: one order at a time, evidence before
//! eligibility — read the order, read the policy, record and ask what the
//! records cannot say, and only then propose (or explain why not).

use super::parse::{self, Opened, Utterance};
use super::text::{
    NEED_ORDER_NUMBER, NOT_UNDERSTOOD, OPENED_QUESTION, WHICH_ORDER, also_mentioned, cite, quote,
};
use super::view::{ToolResult, View};
use super::{Step, pending_question};
use crate::assistant::carrier::CarrierCheck;
use crate::assistant::team::{COORDINATOR, REFUND_SPECIALIST};
use crate::assistant::tools::{
    CHECK_CARRIER_TRACKING, CHECK_RETURNED_PARCEL, GET_ORDER, OrderView, PREPARE_REFUND,
    ParcelInspection, PolicyPassage, PolicySearchResult, PreparedProposal, RECORD_UNKNOWN,
    RecordedQuestion, SEARCH_POLICY, investigate_orders::BRIEFING_START,
    prepare_refund::ALREADY_IN_FLIGHT,
};
use agents::OutcomeKind;
use domain::{Currency, Money};
use serde_json::json;

const UNOPENED_QUERY: &str = "return unopened items within days of delivery for a full refund";
const OPENED_QUERY: &str = "opened items returned restocking fee";
const DAMAGED_QUERY: &str = "damaged or faulty items refunded in full";

/// What the specialist can reach besides this group's records.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reach<'a> {
    /// `check_returned_parcel` is offered: the returns desk is connected.
    pub returns_desk: bool,
    /// `check_carrier_tracking` is offered: a carrier's pages can be read.
    pub carrier: bool,
    /// `investigate_orders` is offered: several orders go to subagents.
    pub investigators: bool,
    /// The customer's answer to the question asked about the order before,
    /// as an investigator's task gives it.
    pub briefed_answer: Option<&'a str>,
}

pub(super) fn next(view: &View<'_>, reach: Reach<'_>) -> Step {
    if let Some(step) = super::sign_in::next(view) {
        return step;
    }
    let said = Utterance::of(view.user_text());
    if said.status_question {
        return super::status::next(view, &said);
    }
    if reach.investigators
        && let Some(step) = super::investigation::next(view, &said)
    {
        return step;
    }
    let pending = pending_question(view);
    let elsewhere = said.opened.is_none() && (said.policy_question || said.greeting || said.thanks);
    // The order this turn is already working on, if any.
    let working_on = [GET_ORDER, RECORD_UNKNOWN, PREPARE_REFUND]
        .iter()
        .filter_map(|tool| view.latest(tool, |r| r.this_turn && r.arg("order_id").is_some()))
        .max_by_key(|r| r.index)
        .and_then(|r| r.arg("order_id"))
        .map(str::to_owned);
    let focus = match (said.order_numbers.first(), working_on, &pending) {
        (Some(number), _, _) => Some(number.clone()),
        (None, Some(order_id), _) => Some(order_id),
        (None, None, Some((order_id, _))) if !elsewhere => Some(order_id.clone()),
        _ => None,
    };
    let Some(order_id) = focus else {
        return without_order(view, &said);
    };
    let others: Vec<String> = said
        .order_numbers
        .iter()
        .filter(|number| **number != order_id)
        .cloned()
        .collect();
    match case(view, &order_id, reach) {
        Step::Say(reply) => Step::Say(format!("{reply}{}", also_mentioned(&others))),
        step => step,
    }
}

/// No order to work on: ask for one, or give the conversation back.
fn without_order(view: &View<'_>, said: &Utterance) -> Step {
    if said.wants_specialist() {
        return Step::Say(WHICH_ORDER.to_owned());
    }
    let asked_for_number = view
        .previous_reply()
        .is_some_and(|reply| reply == WHICH_ORDER || reply == NEED_ORDER_NUMBER);
    if asked_for_number && !(said.policy_question || said.greeting || said.thanks) {
        return Step::Say(NEED_ORDER_NUMBER.to_owned());
    }
    if view.handed_to_this_turn(REFUND_SPECIALIST) {
        // The coordinator sent it here; never bounce it back and forth.
        return Step::Say(NOT_UNDERSTOOD.to_owned());
    }
    Step::HandOff {
        to: COORDINATOR,
        reason: "the customer's message is not about a refund or one of their orders".to_owned(),
    }
}

/// The next step for `order_id`.
/// An order investigator's step: the one order its task names.
pub(super) fn investigate(view: &View<'_>, reach: Reach<'_>) -> Step {
    let task = view.user_text();
    let Some(order_id) = super::investigation::briefed_order(task) else {
        return Step::Say(format!(
            "My task names no order to investigate (it must begin \"{BRIEFING_START}<number>\"), so I did nothing."
        ));
    };
    let reach = Reach {
        briefed_answer: super::investigation::briefed_answer(task),
        ..reach
    };
    case(view, &order_id, reach)
}

fn case(view: &View<'_>, order_id: &str, reach: Reach<'_>) -> Step {
    let for_order = |r: &ToolResult<'_>| r.arg("order_id") == Some(order_id);

    // 1. The live order record.
    let lookup = view.latest(GET_ORDER, for_order);
    let stale = |lookup: &ToolResult<'_>| {
        view.latest(PREPARE_REFUND, |p| {
            for_order(p)
                && p.index > lookup.index
                && p.outcome == OutcomeKind::Refused
                && p.reason().contains("changed since")
        })
        .is_some()
    };
    let lookup = match lookup {
        Some(found) if found.outcome == OutcomeKind::Found && !stale(found) => found,
        Some(failed)
            if failed.this_turn
                && failed.outcome != OutcomeKind::Found
                && !view.signed_in_after(failed.index) =>
        {
            return Step::Say(lookup_failed(order_id, failed));
        }
        _ => {
            return Step::Call {
                tool: GET_ORDER,
                args: json!({ "order_id": order_id }),
            };
        }
    };
    let Some(order) = lookup.value::<OrderView>() else {
        return Step::Say(NOT_UNDERSTOOD.to_owned());
    };

    // 2. A proposal already made, or one that just failed.
    if let Some(done) = view.latest(PREPARE_REFUND, |p| {
        p.value::<PreparedProposal>()
            .is_some_and(|prepared| prepared.order_id == order_id)
    }) && let Some(prepared) = done.value::<PreparedProposal>()
    {
        return Step::Say(if done.this_turn {
            proposal_made(&prepared)
        } else {
            already_proposed(&prepared)
        });
    }
    if let Some(failed) = view.latest(PREPARE_REFUND, |p| {
        for_order(p) && p.this_turn && p.index > lookup.index
    }) {
        return Step::Say(prepare_failed(order_id, failed));
    }

    // 3. What the record says, and where it shows no delivery, what the
    // carrier's tracking page says (records lag behind carriers).
    let mut order = order;
    let delivered_cite = if order.days_since_delivery.is_some() {
        format!("[order:{}]", order.order_id)
    } else {
        match carrier_delivery(view, &order, reach) {
            Ok((days, cite)) => {
                order.days_since_delivery = Some(days);
                cite
            }
            Err(step) => return step,
        }
    };
    if order.refundable_minor <= 0 {
        return Step::Say(format!(
            "Order {} has already been refunded in full [order:{}]; there is nothing left to refund.",
            order.order_id, order.order_id
        ));
    }
    let days = order.days_since_delivery.unwrap_or_default();

    // 4. What the policy says about unopened items.
    let passages = passages_read(view);
    let Some(unopened) = section(&passages, "unopened") else {
        return policy_needed(view, UNOPENED_QUERY, order_id, "returns of unopened items");
    };
    let Some(window) = parse::days_limit(&unopened.passage) else {
        return Step::Say(unreadable_rule(&order, unopened));
    };
    if days > window {
        return Step::Say(format!(
            "Order {} was delivered {days} days ago [order:{}]. Our {} allows returns of unopened items within {window} days of delivery, so it no longer qualifies for a refund, and I haven't prepared one.",
            order.order_id,
            order.order_id,
            cite(unopened)
        ));
    }

    // 5. What the returns desk recorded, where one is connected: a
    // condition it signed settles the question; anything else (no parcel
    // on record, no answer) leaves it for the customer.
    if reach.returns_desk {
        let Some(checked) = view.latest(CHECK_RETURNED_PARCEL, for_order) else {
            return Step::Call {
                tool: CHECK_RETURNED_PARCEL,
                args: json!({ "order_id": order_id }),
            };
        };
        if let Some(inspection) = checked.value::<ParcelInspection>()
            && let Some(opened) = recorded_condition(&inspection.condition)
        {
            let basis = Basis::ReturnsDesk(&inspection);
            return decide(view, &order, &passages, unopened, days, opened, &basis);
        }
    }

    // 6. What the records cannot say: ask, and wait for the answer.
    let asked = view.latest(RECORD_UNKNOWN, |r| {
        r.value::<RecordedQuestion>()
            .is_some_and(|q| q.order_id.as_deref() == Some(order_id))
    });
    let answer = match asked {
        // Asked in the conversation before this investigator started, and
        // answered there: the conversation's ledger holds the answer too.
        None => reach.briefed_answer.and_then(opened_in),
        Some(asked) if asked.this_turn => {
            let asked_before = view
                .latest(RECORD_UNKNOWN, |r| for_order(r) && r.index < asked.index)
                .is_some();
            return Step::Say(if asked_before {
                format!(
                    "To check order {order_id} I need your answer to one question: was the item opened? Please answer yes or no (or tell me if it arrived damaged or faulty)."
                )
            } else {
                ask_opened(&order, unopened, window, &delivered_cite)
            });
        }
        // Only the reply to the question answers it. Anything else
        // ("sorry?", a request for a person) stays a message: the question
        // is asked again and the reply to that is the answer the approver
        // will see.
        Some(asked) => view
            .user_messages_after(asked.index)
            .next()
            .and_then(|(_, text)| opened_in(text)),
    };
    let Some((opened, words)) = answer else {
        return Step::Call {
            tool: RECORD_UNKNOWN,
            args: json!({ "question": OPENED_QUESTION, "order_id": order_id, "ask": "customer" }),
        };
    };
    decide(
        view,
        &order,
        &passages,
        unopened,
        days,
        opened,
        &Basis::Customer(words),
    )
}

/// Whether `words` say if the item was opened, with the words.
fn opened_in(words: &str) -> Option<(Opened, &str)> {
    Utterance::of(words).opened.map(|opened| (opened, words))
}

/// What says whether the item was opened.
enum Basis<'a> {
    /// The customer's reply to the question, verbatim.
    Customer(&'a str),
    /// The returns desk's signed record of the returned parcel.
    ReturnsDesk(&'a ParcelInspection),
}

impl Basis<'_> {
    /// The clause a recommendation gives for it.
    fn clause(&self) -> String {
        match self {
            Basis::Customer(words) => format!(
                "asked whether the item was opened the customer said: \"{}\"",
                words.trim()
            ),
            Basis::ReturnsDesk(inspection) => format!(
                "the returns desk (agent group {}) recorded the returned parcel as {}{}, in an answer signed by {} ({})",
                inspection.answered_by,
                inspection.condition,
                inspection
                    .received_at
                    .as_deref()
                    .map(|at| format!(" on {}", at.get(..10).unwrap_or(at)))
                    .unwrap_or_default(),
                inspection.signed_by,
                inspection.evidence_reference
            ),
        }
    }

    /// How a reply to the customer opens.
    fn lead(&self) -> String {
        match self {
            Basis::Customer(_) => "Thanks.".to_owned(),
            Basis::ReturnsDesk(inspection) => format!(
                "Our returns desk has your parcel for order {} on record as {}.",
                inspection.order_id, inspection.condition
            ),
        }
    }
}

/// The returns desk's condition as the answer to "was it opened?"; None
/// for `unknown` (no parcel on record) or anything unexpected.
fn recorded_condition(condition: &str) -> Option<Opened> {
    match condition {
        "sealed" => Some(Opened::No),
        "opened" => Some(Opened::Yes),
        "damaged" => Some(Opened::Damaged),
        _ => None,
    }
}

/// The step once it is known whether the item was opened.
/// The order record shows no delivery: the carrier's tracking page, read
/// in the browser, says whether (and when) it was delivered. Days since
/// delivery and how to cite it, or the step to take first or the answer.
fn carrier_delivery(
    view: &View<'_>,
    order: &OrderView,
    reach: Reach<'_>,
) -> Result<(i64, String), Step> {
    let order_id = order.order_id.as_str();
    let not_delivered = |said: &str| {
        Step::Say(format!(
            "Order {order_id} has status \"{}\" and hasn't been delivered yet {said}. Our returns policy counts from delivery, so there is nothing to return yet, and I haven't prepared a refund.",
            order.status
        ))
    };
    if !reach.carrier {
        return Err(not_delivered(&format!("[order:{order_id}]")));
    }
    // A reading of this turn, or a delivery read before (a delivery does
    // not change); anything else (in transit, unreadable, cut by a Stop)
    // is read again.
    let Some(checked) = view.latest(CHECK_CARRIER_TRACKING, |r| {
        r.arg("order_id") == Some(order_id)
            && (r.this_turn
                || r.value::<CarrierCheck>()
                    .is_some_and(|check| check.status == "delivered"))
    }) else {
        return Err(Step::Call {
            tool: CHECK_CARRIER_TRACKING,
            args: json!({ "order_id": order_id }),
        });
    };
    let Some(check) = checked.value::<CarrierCheck>() else {
        return Err(Step::Say(format!(
            "Our records show order {order_id} as \"{}\" [order:{order_id}], and I couldn't read the carrier's tracking page ({}), so I don't know whether it has been delivered. Our returns policy counts from delivery, so I haven't prepared a refund; please try again in a little while.",
            order.status,
            checked.reason()
        )));
    };
    let cite = format!("[browser-check:{}]", check.id);
    let delivered_on = check
        .delivered_on
        .as_deref()
        .and_then(|date| chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").ok());
    match delivered_on {
        Some(date) if check.status == "delivered" => {
            let days = (check.captured_at.date_naive() - date).num_days().max(0);
            Ok((
                days,
                format!(
                    "according to {}'s tracking page {cite} (our order record hasn't caught up yet)",
                    check.carrier
                ),
            ))
        }
        _ => Err(not_delivered(&format!(
            "— {}'s tracking page says \"{}\" {cite}",
            check.carrier,
            check.status.replace('_', " ")
        ))),
    }
}

fn decide(
    view: &View<'_>,
    order: &OrderView,
    passages: &[PolicyPassage],
    unopened: &PolicyPassage,
    days: i64,
    opened: Opened,
    basis: &Basis<'_>,
) -> Step {
    let order_id = order.order_id.as_str();
    match opened {
        Opened::No => propose(order, unopened, days, basis, "unopened"),
        Opened::Damaged => {
            let Some(damaged) = section(passages, "damaged") else {
                return policy_needed(view, DAMAGED_QUERY, order_id, "damaged or faulty items");
            };
            match parse::days_limit(&damaged.passage) {
                Some(limit) if days <= limit => propose(order, damaged, days, basis, "damaged"),
                Some(limit) => Step::Say(format!(
                    "Order {} was delivered {days} days ago; our {} covers damage reported within {limit} days of delivery, so I can't propose a refund for it.",
                    order.order_id,
                    cite(damaged)
                )),
                None => Step::Say(unreadable_rule(order, damaged)),
            }
        }
        Opened::Yes => {
            let Some(rule) = section(passages, "opened") else {
                return policy_needed(view, OPENED_QUERY, order_id, "opened items");
            };
            Step::Say(opened_rule(order, rule, days, &basis.lead()))
        }
    }
}

/// Every policy passage found in the conversation, the latest reading of each.
fn passages_read(view: &View<'_>) -> Vec<PolicyPassage> {
    let mut passages: Vec<PolicyPassage> = Vec::new();
    for result in view.all(SEARCH_POLICY) {
        if let Some(found) = result.value::<PolicySearchResult>() {
            for passage in found.passages {
                passages.retain(|known| known.reference != passage.reference);
                passages.push(passage);
            }
        }
    }
    passages
}

/// The passage whose heading has `word` as a word ("opened" is not "unopened").
fn section<'p>(passages: &'p [PolicyPassage], word: &str) -> Option<&'p PolicyPassage> {
    passages.iter().rev().find(|passage| {
        passage
            .section
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .any(|token| token == word)
    })
}

/// Search for the rule, or say what the search left open.
fn policy_needed(view: &View<'_>, query: &str, order_id: &str, topic: &str) -> Step {
    let Some(search) = view.latest(SEARCH_POLICY, |r| {
        r.this_turn && r.arg("query") == Some(query)
    }) else {
        return Step::Call {
            tool: SEARCH_POLICY,
            args: json!({ "query": query }),
        };
    };
    Step::Say(match search.outcome {
        OutcomeKind::Unknown => format!(
            "I couldn't search our policies just now, so whether order {order_id} qualifies is unanswered for the moment (that doesn't mean there is no rule). I haven't prepared anything; please try again in a little while."
        ),
        _ => format!(
            "I found no policy passage about {topic}, so I can't tell whether order {order_id} qualifies, and I haven't prepared a refund. A member of our staff can look at it."
        ),
    })
}

fn lookup_failed(order_id: &str, failed: &ToolResult<'_>) -> String {
    match failed.outcome {
        OutcomeKind::NotFound => format!(
            "I can't find an order {order_id} on your account. Please check the number on your order confirmation."
        ),
        OutcomeKind::Unknown | OutcomeKind::Cancelled => format!(
            "I couldn't check order {order_id} just now: our order records didn't answer, so I don't know whether that order exists or what state it is in. Nothing has been proposed; please try again in a little while."
        ),
        OutcomeKind::InvalidArguments => format!(
            "\"{order_id}\" doesn't look like an order number I can check. Please give me the number from your order confirmation, for example 4821."
        ),
        _ => format!("I couldn't check order {order_id}: {}.", failed.reason()),
    }
}

fn describe(order: &OrderView) -> String {
    let items = match order.lines.as_slice() {
        [] => String::new(),
        [only] => format!("{}; ", only.description),
        [first, rest @ ..] => format!("{} and {} more; ", first.description, rest.len()),
    };
    let refunded = if order.refunded_minor > 0 {
        format!(", of which {} is still refundable", order.refundable)
    } else {
        String::new()
    };
    format!(
        "order {} ({items}{}{refunded})",
        order.order_id, order.total
    )
}

fn ask_opened(
    order: &OrderView,
    rule: &PolicyPassage,
    window: i64,
    delivered_cite: &str,
) -> String {
    let days = order.days_since_delivery.unwrap_or_default();
    format!(
        "I checked {}: it was delivered {days} days ago {delivered_cite}. Our {} says: \"{}\" So it is within the {window} days. Nothing in our records says whether the parcel was opened, so I have to ask: was the item opened? (yes / no)",
        describe(order),
        cite(rule),
        quote(rule)
    )
}

fn propose(
    order: &OrderView,
    rule: &PolicyPassage,
    days: i64,
    basis: &Basis<'_>,
    condition: &str,
) -> Step {
    let recommendation = format!(
        "Refund {} for order {} to the original payment method. The order was delivered {days} days ago; {} ({}) covers {condition} items in that time, and {}.",
        order.refundable,
        order.order_id,
        rule.reference,
        rule.section,
        basis.clause()
    );
    Step::Call {
        tool: PREPARE_REFUND,
        args: json!({
            "order_id": order.order_id,
            "policy_references": [rule.reference],
            "recommendation": recommendation,
        }),
    }
}

fn proposal_made(prepared: &PreparedProposal) -> String {
    let answers: Vec<String> = prepared
        .open_questions
        .iter()
        .map(|q| match &q.answer {
            Some(answer) => format!("\"{}\" — your answer \"{answer}\"", q.question),
            None => format!("\"{}\" (still open)", q.question),
        })
        .collect();
    let attached = if answers.is_empty() {
        String::new()
    } else {
        format!(" Attached for the approver: {}.", answers.join("; "))
    };
    format!(
        "Thank you. I have prepared refund proposal {} for order {}: {} back to the original payment method, citing {}.{attached} It is now waiting for approval by a member of our staff — nothing has been refunded yet.",
        prepared.proposal_id,
        prepared.order_id,
        prepared.amount,
        prepared.evidence.join(" and ")
    )
}

fn already_proposed(prepared: &PreparedProposal) -> String {
    format!(
        "I already prepared refund proposal {} for order {} ({}) in this conversation; it was sent for approval by a member of our staff. Nothing more is needed from you for now.",
        prepared.proposal_id, prepared.order_id, prepared.amount
    )
}

fn prepare_failed(order_id: &str, failed: &ToolResult<'_>) -> String {
    match failed.outcome {
        // One in flight already: its status is the answer, word for word.
        OutcomeKind::Refused if failed.reason().starts_with(ALREADY_IN_FLIGHT) => {
            let reason = failed.reason();
            let mut letters = reason.chars();
            let first = letters.next().map(|c| c.to_uppercase().to_string());
            format!("{}{}.", first.unwrap_or_default(), letters.as_str())
        }
        OutcomeKind::NotFound => format!("I can't find an order {order_id} on your account."),
        OutcomeKind::Unknown | OutcomeKind::Cancelled => format!(
            "Storing the refund proposal for order {order_id} failed, so I can't confirm that one exists. Nothing has been refunded; please try again in a little while."
        ),
        _ => format!(
            "I couldn't prepare a refund proposal for order {order_id}: {}. Nothing has been refunded.",
            failed.reason()
        ),
    }
}

fn opened_rule(order: &OrderView, rule: &PolicyPassage, days: i64, lead: &str) -> String {
    let stated = format!(
        "For opened items our {} says: \"{}\"",
        cite(rule),
        quote(rule)
    );
    let faulty = "If the item is faulty, tell me and I'll check that instead.";
    match (
        parse::days_limit(&rule.passage),
        parse::percent(&rule.passage),
    ) {
        (Some(window), Some(fee)) if days <= window => format!(
            "{lead} {stated} Order {} was delivered {days} days ago, so it can still be returned as an opened item: {} less the {fee} % restocking fee would be {}. I haven't prepared a refund: I only propose full refunds of unopened items, so the return of an opened item is for our staff to handle once it's back. {faulty}",
            order.order_id,
            order.refundable,
            after_fee(order, fee)
        ),
        (Some(window), _) => format!(
            "{lead} {stated} Order {} was delivered {days} days ago, past the {window} days for opened items, so it doesn't qualify for a return, and I haven't prepared a refund. {faulty}",
            order.order_id
        ),
        _ => format!(
            "{lead} {stated} I can't tell from that text how it applies to order {}, so I haven't prepared a refund; a member of our staff can look at it.",
            order.order_id
        ),
    }
}

/// The refundable amount less `fee` percent, rounded half up, displayed.
fn after_fee(order: &OrderView, fee: i64) -> String {
    let net = (i128::from(order.refundable_minor) * i128::from(100 - fee.clamp(0, 100)) + 50) / 100;
    let net = i64::try_from(net).unwrap_or_default();
    match Currency::parse(&order.currency) {
        Ok(currency) => Money::new(net, currency).display(),
        Err(_) => format!("{net} minor units of {}", order.currency),
    }
}

fn unreadable_rule(order: &OrderView, rule: &PolicyPassage) -> String {
    format!(
        "Our {} says: \"{}\" I can't read a time limit from it that I could check order {} against, so I haven't prepared a refund; a member of our staff can look at it.",
        cite(rule),
        quote(rule),
        order.order_id
    )
}
