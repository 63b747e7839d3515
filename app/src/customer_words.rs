//! The customer's words for what staff pages say in theirs: a refund's
//! status and when the money arrives, and agent replies without the
//! citation tags (`[order:4821]`) the sources below them already name.

use domain::Timestamp;
use domain::proposal::ProposalState;

/// How long refunds take to reach the customer once paid, as the returns
/// policy promises ("within 5 business days after approval").
const ARRIVES_WITHIN: &str = "usually within 5 business days";

/// A refund's status for its customer: a headline, what happens next and
/// when, and the tone class the stylesheet colours it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomerStatus {
    pub headline: String,
    pub next: String,
    pub tone: &'static str,
}

fn date(at: Timestamp) -> String {
    at.format("%-d %B %Y").to_string()
}

/// Where the customer's refund stands, in their words.
pub fn customer_status(state: &ProposalState) -> CustomerStatus {
    let status = |headline: &str, next: String, tone| CustomerStatus {
        headline: headline.to_owned(),
        next,
        tone,
    };
    match state {
        ProposalState::AwaitingApproval { expires_at, .. } => status(
            "Waiting for our team",
            format!(
                "A member of our team checks every refund before it is paid. We will decide by {}.",
                date(*expires_at)
            ),
            "outcome waiting",
        ),
        ProposalState::Approved { .. }
        | ProposalState::Executing { .. }
        | ProposalState::Succeeded { .. }
        | ProposalState::OutcomeUnknown { .. } => status(
            "Approved: being paid",
            format!(
                "The money goes back to the payment method you used, {ARRIVES_WITHIN}."
            ),
            "outcome progress",
        ),
        ProposalState::Verified { verified_at, .. } => status(
            "Refunded",
            format!(
                "We paid it on {}. It reaches the payment method you used {ARRIVES_WITHIN}.",
                date(*verified_at)
            ),
            "outcome good",
        ),
        ProposalState::NeedsAttention { .. } => status(
            "Being checked by our team",
            "Something needs a closer look before the refund can go ahead. You do not need to do anything; we will tell you here.".to_owned(),
            "outcome attention",
        ),
        ProposalState::Failed { .. } => status(
            "Not refunded",
            "We could not pay this refund. Nothing was taken from you; ask us in the chat and we will sort it out.".to_owned(),
            "outcome bad",
        ),
        ProposalState::Invalidated { reason } => status(
            "Not refunded",
            format!("We stopped before paying it: {reason}"),
            "outcome bad",
        ),
        ProposalState::Rejected { reason, .. } => status(
            "Not approved",
            format!("Our team's reason: {reason}"),
            "outcome bad",
        ),
        ProposalState::Expired { .. } => status(
            "Not decided in time",
            "Ask again in the chat if you would still like a refund.".to_owned(),
            "outcome neutral",
        ),
        ProposalState::Superseded { .. } => status(
            "Replaced by a newer request",
            "See the newer refund in your list.".to_owned(),
            "outcome neutral",
        ),
    }
}

/// `text` without citation tags such as `[order:4821]` or
/// `[returns-policy:section-3]` (and the space before each): the sources
/// are listed under the message in words.
pub fn plain_citations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('[') {
        let (before, from) = rest.split_at(start);
        match citation_len(from) {
            Some(len) => {
                out.push_str(before.trim_end_matches(' '));
                rest = &from[len..];
            }
            None => {
                out.push_str(before);
                out.push('[');
                rest = &from[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The length of the citation tag `from` starts with, if it is one:
/// `[kind:reference]` with a lower-case kind and no spaces.
fn citation_len(from: &str) -> Option<usize> {
    let end = from.find(']')?;
    let inner = &from[1..end];
    let (kind, reference) = inner.split_once(':')?;
    let kind_ok = !kind.is_empty()
        && kind
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    let reference_ok = !reference.is_empty() && !reference.contains(char::is_whitespace);
    (kind_ok && reference_ok).then_some(end + 1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_reads_without_its_citation_tags() {
        assert_eq!(
            plain_citations(
                "I checked order 4821: it was delivered 12 days ago [order:4821]. Our returns policy [returns-policy:section-3] allows 30 days."
            ),
            "I checked order 4821: it was delivered 12 days ago. Our returns policy allows 30 days."
        );
    }

    #[test]
    fn brackets_that_are_not_citations_stay() {
        assert_eq!(
            plain_citations("Reply [yes / no] or see [Note: this]."),
            "Reply [yes / no] or see [Note: this]."
        );
        assert_eq!(plain_citations("[unclosed"), "[unclosed");
    }

    #[test]
    fn a_verified_refund_says_when_the_money_arrives() {
        use chrono::TimeZone;
        let at = chrono::Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
        let verified = ProposalState::Verified {
            receipt: domain::proposal::Receipt {
                provider: "sandbox".into(),
                provider_refund_id: "re_1".into(),
                amount: domain::Money::new(7900, domain::Currency::EUR),
                status: "succeeded".into(),
                recorded_at: at,
            },
            verified_at: at,
        };
        let words = customer_status(&verified);
        assert_eq!(words.headline, "Refunded");
        assert!(words.next.contains("1 December 2026"), "{}", words.next);
        assert!(words.next.contains("5 business days"), "{}", words.next);
    }
}
