//! Reading customers' messages without a language model: order numbers,
//! what they want, and the answer to "was it opened?". Deliberately small
//! and predictable: anything it does not recognise is reported as not
//! understood rather than guessed at.

/// What one message says, as far as these rules can tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Utterance {
    /// Order numbers, in the order written, without repeats.
    pub order_numbers: Vec<String>,
    /// Asks for a refund or a return (or whether something qualifies).
    pub refund_request: bool,
    /// Asks about one of their orders (check, status, where is).
    pub order_request: bool,
    /// A general question, e.g. about a policy.
    pub policy_question: bool,
    /// Asks where a refund stands ("where is my refund", "status of 4822").
    pub status_question: bool,
    /// "I want…", "can I get…", "please…": a request, not a question.
    pub first_person_request: bool,
    pub greeting: bool,
    pub thanks: bool,
    /// The answer to "was the item opened?", when it is one.
    pub opened: Option<Opened>,
}

/// The customer's answer to "was the item opened?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// Still sealed, in its packaging.
    No,
    /// Opened (tried, used, worn).
    Yes,
    /// It arrived damaged or faulty: a different policy section applies.
    Damaged,
}

const REFUND_WORDS: &[&str] = &[
    "refund",
    "money back",
    "reimburs",
    "return it",
    "return my",
    "return the",
    "return this",
    "return order",
    "return an",
    "return a",
    "to return",
    "send it back",
    "send back",
    "qualif",
    "my money",
    "cancel my order",
];

const ORDER_WORDS: &[&str] = &[
    "check order",
    "check my order",
    "status of",
    "where is my",
    "look up",
    "lookup",
];

/// Words that ask how far something has got.
const STATUS_WORDS: &[&str] = &[
    "status",
    "where is",
    "where's",
    "what happened",
    "what's happening",
    "any news",
    "any update",
    "an update",
    "update on",
    "how long until",
    "when will i get",
    "when do i get",
    "when will my",
    "has my refund",
    "did my refund",
    "is my refund",
    "haven't received",
    "have not received",
    "still waiting",
];

/// What a status question is about: a refund, or an order named by number.
const REFUND_SUBJECTS: &[&str] = &["refund", "money", "my money back", "reimburs"];

const QUESTION_STARTS: &[&str] = &[
    "what", "how", "when", "can", "could", "do", "does", "is", "are", "which", "where", "why",
    "who", "will", "would", "should", "may", "tell me",
];

const POLICY_WORDS: &[&str] = &[
    "policy",
    "policies",
    "rule",
    "rules",
    "terms",
    "conditions",
    "shipping",
    "delivery time",
    "restocking",
    "how long",
    "how many days",
    "warranty",
];

const FIRST_PERSON: &[&str] = &[
    "i want",
    "i'd like",
    "i would like",
    "i need",
    "can i get",
    "can i have",
    "could i get",
    "could i have",
    "please",
    "refund my",
    "refund it",
    "refund order",
    "give me",
    "i'd want",
];

const GREETINGS: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "good morning",
    "good afternoon",
    "good evening",
    "hallo",
];

const THANKS: &[&str] = &[
    "thanks",
    "thank you",
    "thx",
    "cheers",
    "great thanks",
    "perfect",
];

const NOT_OPENED: &[&str] = &[
    "unopened",
    "not opened",
    "never opened",
    "haven't opened",
    "have not opened",
    "hasn't been opened",
    "has not been opened",
    "wasn't opened",
    "was not opened",
    "didn't open",
    "did not open",
    "not been opened",
    "still sealed",
    "sealed",
    "original packaging",
    "still in the box",
    "still in its box",
    "still packed",
    "untouched",
    "brand new",
];

const DAMAGED: &[&str] = &[
    "damaged",
    "broken",
    "faulty",
    "defective",
    "doesn't work",
    "does not work",
    "torn",
    "arrived broken",
];

const OPENED: &[&str] = &[
    "opened",
    "i did",
    "tried it",
    "tried them",
    "tried on",
    "used it",
    "used them",
    "worn",
    "wore it",
    "wore them",
    "unpacked",
    "took it out",
];

const YES: &[&str] = &["yes", "yeah", "yep", "yup", "ja", "sure", "correct"];
const NO: &[&str] = &["no", "nope", "nah", "nein", "never"];

impl Utterance {
    pub fn of(text: &str) -> Utterance {
        let lower = normalize(text);
        let order_numbers = order_numbers(text);
        let refund_request = contains_any(&lower, REFUND_WORDS);
        let order_request = contains_any(&lower, ORDER_WORDS)
            || (!order_numbers.is_empty() && has_word(&lower, "order"));
        let asks = text.trim_end().ends_with('?') || starts_with_any(&lower, QUESTION_STARTS);
        let policy_question = contains_any(&lower, POLICY_WORDS) || asks;
        // "Where is my refund", "status of 4822": how far a refund has got,
        // never a request to start one.
        let status_question = contains_any(&lower, STATUS_WORDS)
            && (contains_any(&lower, REFUND_SUBJECTS) || !order_numbers.is_empty());
        let words = lower.split_whitespace().count();
        Utterance {
            greeting: words <= 4 && starts_with_any(&lower, GREETINGS),
            thanks: words <= 6 && contains_any(&lower, THANKS),
            opened: opened_answer(&lower),
            first_person_request: contains_any(&lower, FIRST_PERSON),
            order_numbers,
            refund_request,
            order_request,
            policy_question,
            status_question,
        }
    }

    /// A request the refund specialist handles: a refund, or one of the
    /// customer's orders. A question *about* the refund policy with no
    /// order in it is a policy question instead.
    pub fn wants_specialist(&self) -> bool {
        self.status_question
            || !self.order_numbers.is_empty()
            || self.order_request
            || (self.refund_request && !self.asks_about_policy_only())
    }

    /// "What is your refund policy?": refund words, but a general question.
    fn asks_about_policy_only(&self) -> bool {
        self.policy_question && self.order_numbers.is_empty() && !self.first_person_request
    }
}

/// The answer to "was it opened?", if the message is one.
fn opened_answer(lower: &str) -> Option<Opened> {
    if contains_any(lower, NOT_OPENED) {
        return Some(Opened::No);
    }
    if contains_any(lower, DAMAGED) {
        return Some(Opened::Damaged);
    }
    if contains_any(lower, OPENED) {
        return Some(Opened::Yes);
    }
    let first = lower.split_whitespace().next().unwrap_or_default();
    if YES.contains(&first) || YES.contains(&lower) {
        return Some(Opened::Yes);
    }
    if NO.contains(&first) || lower == "not at all" {
        return Some(Opened::No);
    }
    None
}

/// Lower case, punctuation to spaces (apostrophes kept), single spaces.
fn normalize(text: &str) -> String {
    let mapped: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '\'' {
                c.to_lowercase().next().unwrap_or(c)
            } else if c == '’' {
                '\''
            } else {
                ' '
            }
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `phrase` occurs in `lower` on word boundaries (a phrase ending
/// in a partial word, like "reimburs" or "qualif", matches its beginning).
fn contains_phrase(lower: &str, phrase: &str) -> bool {
    let padded = format!(" {lower} ");
    let open_ended = matches!(phrase, "reimburs" | "qualif" | "refund");
    if open_ended {
        return padded.contains(&format!(" {phrase}"));
    }
    padded.contains(&format!(" {phrase} "))
}

fn contains_any(lower: &str, phrases: &[&str]) -> bool {
    phrases.iter().any(|phrase| contains_phrase(lower, phrase))
}

fn has_word(lower: &str, word: &str) -> bool {
    lower
        .split_whitespace()
        .any(|w| w.trim_start_matches('#') == word || w == format!("{word}s"))
}

fn starts_with_any(lower: &str, starts: &[&str]) -> bool {
    starts
        .iter()
        .any(|start| lower == *start || lower.starts_with(&format!("{start} ")))
}

/// Order numbers: runs of 3 to 12 digits standing alone (`4821`, `#4821`,
/// `order no. 4821`), not parts of amounts like `79.00`.
pub fn order_numbers(text: &str) -> Vec<String> {
    let mut numbers: Vec<String> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut index = 0;
    while index < chars.len() {
        if !chars[index].is_ascii_digit() {
            index += 1;
            continue;
        }
        let start = index;
        while index < chars.len() && chars[index].is_ascii_digit() {
            index += 1;
        }
        let before = start.checked_sub(1).map(|i| chars[i]);
        let after = chars.get(index).copied();
        let joined_before =
            before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | ',' | '_' | '-'));
        let joined_after = match after {
            Some('.' | ',') => chars.get(index + 1).is_some_and(char::is_ascii_digit),
            Some(c) => c.is_alphanumeric() || matches!(c, '_' | '-'),
            None => false,
        };
        if (3..=12).contains(&(index - start)) && !joined_before && !joined_after {
            let number: String = chars[start..index].iter().collect();
            if !numbers.contains(&number) {
                numbers.push(number);
            }
        }
    }
    numbers
}

/// The number of days in "within N days" in a policy passage.
pub fn days_limit(passage: &str) -> Option<i64> {
    number_before(passage, "days")
}

/// The percentage in "N percent" / "N %" in a policy passage.
pub fn percent(passage: &str) -> Option<i64> {
    number_before(passage, "percent").or_else(|| number_before(passage, "%"))
}

fn number_before(passage: &str, unit: &str) -> Option<i64> {
    let spaced = passage.replace('%', " % ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    words.windows(2).find_map(|pair| {
        let unit_matches = pair[1].trim_end_matches(['.', ',', ';', ')']) == unit;
        unit_matches.then(|| pair[0].parse::<i64>().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_numbers_are_found_but_amounts_and_days_are_not() {
        assert_eq!(
            order_numbers("check order 4821 and refund it if it qualifies"),
            ["4821"]
        );
        assert_eq!(order_numbers("#4821, and also 4823."), ["4821", "4823"]);
        assert_eq!(
            order_numbers("I paid 79.00 EUR within 30 days"),
            Vec::<String>::new()
        );
        assert_eq!(order_numbers("4821"), ["4821"]);
        assert_eq!(order_numbers("abc4821 4821x"), Vec::<String>::new());
        assert_eq!(order_numbers("order 4821?"), ["4821"]);
    }

    #[test]
    fn refund_requests_policy_questions_and_greetings_are_told_apart() {
        let flagship = Utterance::of("check order 4821 and refund it if it qualifies");
        assert!(flagship.wants_specialist());
        assert!(Utterance::of("I want a refund").wants_specialist());
        assert!(Utterance::of("I want to return an opened item").wants_specialist());
        assert!(!Utterance::of("how long do I have to return something?").wants_specialist());
        let policy = Utterance::of("what is your returns policy for unopened items?");
        assert!(policy.policy_question && !policy.wants_specialist());
        assert!(!Utterance::of("What is your refund policy?").wants_specialist());
        assert!(Utterance::of("hello").greeting);
        assert!(Utterance::of("thanks!").thanks);
        let nonsense = Utterance::of("purple elephants dance");
        assert!(!nonsense.wants_specialist() && !nonsense.policy_question && !nonsense.greeting);
    }

    #[test]
    fn questions_about_where_a_refund_stands_are_not_requests_for_one() {
        for asked in [
            "What is the status of my refund for 4822?",
            "where is my refund",
            "Where's my money?",
            "status of 4822",
            "what happened to my refund for order 4821",
            "any news on my refund?",
        ] {
            let said = Utterance::of(asked);
            assert!(said.status_question, "{asked}");
            assert!(said.wants_specialist(), "{asked}");
        }
        for not_asked in [
            "check order 4821 and refund it if it qualifies",
            "I want a refund",
            "what is your returns policy for unopened items?",
            "where is my parcel",
        ] {
            assert!(!Utterance::of(not_asked).status_question, "{not_asked}");
        }
    }

    #[test]
    fn answers_to_was_it_opened_are_read() {
        assert_eq!(Utterance::of("no, still sealed").opened, Some(Opened::No));
        assert_eq!(Utterance::of("No").opened, Some(Opened::No));
        assert_eq!(
            Utterance::of("It's unopened, in the original packaging").opened,
            Some(Opened::No)
        );
        assert_eq!(
            Utterance::of("I haven't opened it").opened,
            Some(Opened::No)
        );
        assert_eq!(Utterance::of("yes, I opened it").opened, Some(Opened::Yes));
        assert_eq!(Utterance::of("yes").opened, Some(Opened::Yes));
        assert_eq!(
            Utterance::of("I tried it on once").opened,
            Some(Opened::Yes)
        );
        assert_eq!(
            Utterance::of("it arrived damaged").opened,
            Some(Opened::Damaged)
        );
        assert_eq!(Utterance::of("what colour is the sky").opened, None);
    }

    #[test]
    fn policy_numbers_are_read_from_the_passage() {
        let section_3 = "Unopened items in their original packaging may be returned within 30 days of\ndelivery for a full refund of the item price.";
        assert_eq!(days_limit(section_3), Some(30));
        let section_4 = "Opened items that are not faulty may be returned within 14 days of delivery.\nThey are refunded less a restocking fee of 15 percent.";
        assert_eq!(days_limit(section_4), Some(14));
        assert_eq!(percent(section_4), Some(15));
        assert_eq!(percent("no numbers"), None);
    }
}
