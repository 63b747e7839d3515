//! "Can I talk to a human?": whichever agent holds the conversation asks
//! for a person with `request_person` and then tells the customer.

use super::Step;
use super::view::View;
use crate::assistant::handover::REQUESTED_REPLY;
use crate::assistant::tools::REQUEST_PERSON;
use agents::OutcomeKind;
use serde_json::json;

/// Who the customer may ask for.
const PEOPLE: [&str; 12] = [
    "human",
    "person",
    "people",
    "someone",
    "somebody",
    "agent",
    "staff",
    "representative",
    "operator",
    "manager",
    "real person",
    "member of your team",
];

/// How they ask.
const ASKING: [&str; 10] = [
    "talk to",
    "speak to",
    "speak with",
    "talk with",
    "chat with",
    "connect me",
    "transfer me",
    "get me",
    "want a",
    "need a",
];

/// The rules' step when the customer asks for a person, or has just been
/// handed to one; `None` otherwise.
pub(super) fn next(view: &View<'_>) -> Option<Step> {
    if let Some(asked) = view.latest(REQUEST_PERSON, |r| r.this_turn) {
        return Some(Step::Say(match asked.outcome {
            OutcomeKind::Found => REQUESTED_REPLY.to_owned(),
            _ => format!(
                "I couldn't reach our team just now ({}). Please ask again in a moment.",
                asked.reason()
            ),
        }));
    }
    wants_person(view.user_text()).then(|| Step::Call {
        tool: REQUEST_PERSON,
        args: json!({}),
    })
}

/// "can I talk to a human?", "I want to speak to a person", "agent please".
pub fn wants_person(text: &str) -> bool {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let normalized = words.join(" ");
    let names_person = PEOPLE.iter().any(|who| {
        normalized == *who
            || normalized.starts_with(&format!("{who} "))
            || normalized.ends_with(&format!(" {who}"))
            || normalized.contains(&format!(" {who} "))
    });
    if !names_person {
        return false;
    }
    let asks = ASKING.iter().any(|how| normalized.contains(how));
    // "human please", "agent!": a bare request for someone.
    let bare = words.len() <= 3
        && words
            .iter()
            .any(|w| ["human", "agent", "person", "please"].contains(w));
    asks || bare
}

#[cfg(test)]
mod tests {
    use super::wants_person;

    #[test]
    fn plain_requests_for_a_person_are_recognised() {
        for text in [
            "can I talk to a human?",
            "Can I talk to a human",
            "I want to speak to a person",
            "I want to speak to an agent please",
            "could I speak with someone from your team?",
            "connect me to a real person",
            "human please",
            "agent!",
        ] {
            assert!(wants_person(text), "{text}");
        }
    }

    #[test]
    fn refund_and_policy_messages_are_not_requests_for_a_person() {
        for text in [
            "check order 4821 and refund it if it qualifies",
            "what is your returns policy for unopened items?",
            "no, still sealed",
            "thanks!",
            "the agent said my refund was prepared",
            "is a person allowed to return opened items?",
        ] {
            assert!(!wants_person(text), "{text}");
        }
    }
}
