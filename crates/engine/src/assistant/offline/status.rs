//! Status questions ("where is my refund?", "status of 4822"): answered
//! from the proposals' real state through the read-only `refund_status`
//! tool. Never a reason to start the refund flow again.

use super::Step;
use super::parse::Utterance;
use super::text::also_mentioned;
use super::view::View;
use crate::assistant::tools::{REFUND_STATUS, RefundStatusReport};
use agents::OutcomeKind;
use serde_json::json;

pub(super) fn next(view: &View<'_>, said: &Utterance) -> Step {
    let order_id = said.order_numbers.first();
    let Some(answered) = view.latest(REFUND_STATUS, |r| {
        r.this_turn && !view.signed_in_after(r.index)
    }) else {
        return Step::Call {
            tool: REFUND_STATUS,
            args: order_id.map_or_else(|| json!({}), |id| json!({ "order_id": id })),
        };
    };
    let others: Vec<String> = said.order_numbers.iter().skip(1).cloned().collect();
    let about = order_id.map_or_else(|| "your refunds".to_owned(), |id| format!("order {id}"));
    let reply = match answered.outcome {
        OutcomeKind::Found => match answered.value::<RefundStatusReport>() {
            Some(report) => report.summary,
            None => format!("I couldn't read where {about} stands just now."),
        },
        OutcomeKind::NotFound => format!(
            "I can't find an order {} on your account. Please check the number on your order confirmation.",
            order_id.map_or("", String::as_str)
        ),
        OutcomeKind::Unknown | OutcomeKind::Cancelled => format!(
            "I couldn't check {about} just now: our records didn't answer, so I can't say where it stands. Nothing has changed because of this; please ask again in a little while."
        ),
        _ => format!("I couldn't check {about}: {}.", answered.reason()),
    };
    Step::Say(format!("{reply}{}", also_mentioned(&others)))
}
