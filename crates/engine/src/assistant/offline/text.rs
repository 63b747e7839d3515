//! The offline assistant's wording, in one place.

use crate::assistant::tools::PolicyPassage;

pub const GREETING: &str = "Hello! I'm Countersign's offline assistant: a rule-based helper, not a language model. I can answer questions about our returns, refund and shipping policies, and check one of your orders for a refund (for example: \"check order 4821 and refund it if it qualifies\").";

pub const WELCOME: &str =
    "You're welcome. If there's anything else — a policy question or another order — just tell me.";

pub const NOT_UNDERSTOOD: &str = "Sorry, I didn't understand that. I'm a rule-based offline assistant, not a language model, so I only understand a few kinds of requests: questions about our policies (for example \"what is your returns policy for unopened items?\") and refund requests for one of your orders (for example \"check order 4821 and refund it if it qualifies\").";

pub const WHICH_ORDER: &str =
    "Which order is it? Please give me the order number (for example 4821) and I'll check it.";

pub const NEED_ORDER_NUMBER: &str = "I still need the order number to check anything — it's the number on your order confirmation, for example 4821.";

/// The question recorded as an unknown: nothing in the records says it.
pub const OPENED_QUESTION: &str = "Was the item opened?";

/// `Returns and refunds policy, "3. Unopened items" [returns-policy:section-3]`.
pub fn cite(passage: &PolicyPassage) -> String {
    format!(
        "{}, \"{}\" [{}]",
        passage.document, passage.section, passage.reference
    )
}

/// The passage on one line.
pub fn quote(passage: &PolicyPassage) -> String {
    passage
        .passage
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Up to two passages, cited and quoted.
pub fn policy_answer(passages: &[PolicyPassage]) -> String {
    let mut answer = String::from("Here is what our policies say:");
    for passage in passages.iter().take(2) {
        answer.push_str(&format!("\n- {}: \"{}\"", cite(passage), quote(passage)));
    }
    answer.push_str(
        "\nIf you'd like me to check one of your orders for a refund, tell me its order number.",
    );
    answer
}

/// "You also mentioned …" for order numbers beyond the one being handled.
pub fn also_mentioned(others: &[String]) -> String {
    match others {
        [] => String::new(),
        [one] => format!(
            " You also mentioned order {one}; send me its number again once we're done with this one."
        ),
        many => format!(
            " You also mentioned orders {}; send me each number again once we're done with this one.",
            many.join(", ")
        ),
    }
}
