//! The coordinator's rules: answer policy questions from a search, hand
//! refund and order requests to the specialist, say plainly what it did not
//! understand.

use super::parse::Utterance;
use super::text::{self, GREETING, NOT_UNDERSTOOD, WELCOME};
use super::view::View;
use super::{Step, pending_question};
use crate::assistant::team::{COORDINATOR, REFUND_SPECIALIST};
use crate::assistant::tools::{PolicySearchResult, SEARCH_POLICY};
use agents::OutcomeKind;
use serde_json::json;

/// Longest query sent to the search (the tool's own limit).
const MAX_QUERY_CHARS: usize = 500;

pub(super) fn next(view: &View<'_>) -> Step {
    let message = view.user_text();
    let said = Utterance::of(message);
    if let Some(search) = view.latest(SEARCH_POLICY, |r| r.this_turn) {
        return Step::Say(match search.outcome {
            OutcomeKind::Found => match search.value::<PolicySearchResult>() {
                Some(result) => text::policy_answer(&result.passages),
                None => NOT_UNDERSTOOD.to_owned(),
            },
            OutcomeKind::NotFound => "I searched our policies and found nothing about that. I can answer questions about returns, refunds and shipping, or check one of your orders for a refund.".to_owned(),
            OutcomeKind::Unknown => "I couldn't search our policies just now, so that question is unanswered for the moment — it does not mean there is no rule. Please ask again in a little while.".to_owned(),
            _ => format!("I couldn't search our policies: {}.", search.reason()),
        });
    }
    // Handed back by the specialist in this turn: answer here, never bounce.
    let returned = view.handed_to_this_turn(COORDINATOR);
    if !returned {
        if said.opened.is_some()
            && said.order_numbers.is_empty()
            && let Some((order_id, _)) = pending_question(view)
        {
            return Step::HandOff {
                to: REFUND_SPECIALIST,
                reason: format!(
                    "the customer is answering the open question about order {order_id}"
                ),
            };
        }
        if said.wants_specialist() {
            let reason = match said.order_numbers.first() {
                Some(number) => format!("the customer asks about order {number}"),
                None => "the customer asks for a refund".to_owned(),
            };
            return Step::HandOff {
                to: REFUND_SPECIALIST,
                reason,
            };
        }
    }
    if said.policy_question {
        let query: String = message.chars().take(MAX_QUERY_CHARS).collect();
        return Step::Call {
            tool: SEARCH_POLICY,
            args: json!({ "query": query }),
        };
    }
    if said.greeting {
        return Step::Say(GREETING.to_owned());
    }
    if said.thanks {
        return Step::Say(WELCOME.to_owned());
    }
    Step::Say(NOT_UNDERSTOOD.to_owned())
}
