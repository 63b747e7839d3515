//! What a proposal rests on: cited evidence, explicit unknowns, and who asked.
//!
//! Evidence comes before eligibility: every citation names its source, the
//! version it was read at and the words relied on, so an approver (or a
//! manager, later) can check it against the record.

use crate::Timestamp;
use crate::order::OrderSnapshot;
use serde::{Deserialize, Serialize};

/// Where a piece of evidence comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    /// The live order record.
    Order,
    /// A passage of a policy document.
    Policy,
    /// A signed answer from another agent group (e.g. the returns desk's
    /// inspection of a parcel), verified with that group's pinned key.
    PeerAnswer,
    /// A page read in a real browser (a carrier's tracking page), kept
    /// with a screenshot whose SHA-256 is the citation's version.
    BrowserCapture,
    /// Anything else (a conversation excerpt, a carrier record, …).
    Other,
}

/// One citation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub kind: EvidenceKind,
    /// A stable reference: `order:4821`, `returns-policy:section-3`.
    pub reference: String,
    pub title: String,
    pub section: Option<String>,
    /// The order's version, or the policy's content hash, at reading time.
    /// A citation without a version could silently point at changed text.
    pub version: String,
    /// The words (or record fields) relied on.
    pub quote: String,
}

impl Evidence {
    /// The reference a peer answer citation carries: `peer-task:<id>`, the
    /// task in this group's outbox that the answer came back to.
    pub fn peer_task_reference(outbox_id: &str) -> String {
        format!("peer-task:{outbox_id}")
    }

    /// The reference a browser check citation carries: `browser-check:<id>`.
    pub fn browser_check_reference(check_id: &str) -> String {
        format!("browser-check:{check_id}")
    }

    /// The reference an order citation must carry: `order:<id>`.
    pub fn order_reference(order_id: &str) -> String {
        format!("order:{order_id}")
    }

    /// Cites the order record at its current version.
    pub fn order(order: &OrderSnapshot, quote: impl Into<String>) -> Evidence {
        Evidence {
            kind: EvidenceKind::Order,
            reference: Evidence::order_reference(&order.id),
            title: format!("Order {}", order.id),
            section: None,
            version: order.version.to_string(),
            quote: quote.into(),
        }
    }

    /// Cites a policy passage at a content hash.
    pub fn policy(
        reference: impl Into<String>,
        title: impl Into<String>,
        section: Option<String>,
        version: impl Into<String>,
        quote: impl Into<String>,
    ) -> Evidence {
        Evidence {
            kind: EvidenceKind::Policy,
            reference: reference.into(),
            title: title.into(),
            section,
            version: version.into(),
            quote: quote.into(),
        }
    }

    /// The first required field left blank, if any.
    pub(crate) fn missing_field(&self) -> Option<&'static str> {
        [
            ("reference", &self.reference),
            ("title", &self.title),
            ("version", &self.version),
            ("quote", &self.quote),
        ]
        .into_iter()
        .find(|(_, value)| value.trim().is_empty())
        .map(|(name, _)| name)
    }
}

/// Who can answer an open question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Asker {
    Customer,
    Approver,
}

/// Something the records cannot say, kept as an explicit unknown rather
/// than guessed ("Was the parcel opened?").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenQuestion {
    pub question: String,
    pub ask: Asker,
    /// The answer, quoted word for word.
    pub answer: Option<String>,
    /// The message that gave the answer, when it was given in a
    /// conversation (none on answers an outside agent submitted, and on
    /// proposals stored before answers were bound to their message).
    #[serde(default)]
    pub answered_in: Option<AnsweredIn>,
}

/// The customer message that answered an open question: the reply in the
/// turn right after the agent asked it, never a later message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnsweredIn {
    pub conversation_id: String,
    /// The message's position in the conversation's transcript (0-based);
    /// the conversation page anchors it as `m-<index>`.
    pub message_index: u64,
    /// When the customer sent it (none: sent before messages were timed).
    pub at: Option<Timestamp>,
}

impl AnsweredIn {
    /// The fragment that names the message on the conversation page.
    pub fn anchor(&self) -> String {
        format!("m-{}", self.message_index)
    }
}

impl OpenQuestion {
    pub fn new(question: impl Into<String>, ask: Asker) -> Self {
        OpenQuestion {
            question: question.into(),
            ask,
            answer: None,
            answered_in: None,
        }
    }

    /// Still unanswered: the approver must weigh it.
    pub fn is_open(&self) -> bool {
        self.answer.as_deref().is_none_or(|a| a.trim().is_empty())
    }
}

/// Who produced the proposal and for whom; the approval rules read it to
/// stop people approving their own refunds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// `refund_specialist`, or `external:<system>` for outside agents.
    pub agent: String,
    pub conversation_id: Option<String>,
    /// The customer the refund is for, when an agent acts for one.
    pub on_behalf_of: Option<String>,
    /// User id of whoever asked: the customer in chat, or the staff member /
    /// service account that submitted the proposal.
    pub requested_by: String,
    /// The signed-in account whose credential submitted the proposal (none
    /// on proposals stored before submitters were recorded).
    #[serde(default)]
    pub submitted_by: Option<Submitter>,
}

/// The account that submitted a proposal, named as it was at submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submitter {
    pub user_id: String,
    /// The account's user name (`agent`, `cora`).
    pub name: String,
}

impl Provenance {
    /// Whether this user asked for the refund or would receive it.
    pub fn involves(&self, user_id: &str) -> bool {
        self.requested_by == user_id || self.on_behalf_of.as_deref() == Some(user_id)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::proposal::fixtures;

    #[test]
    fn an_order_citation_names_the_order_and_its_version() {
        let order = fixtures::order();
        let evidence = Evidence::order(&order, "delivered 12 days ago");
        assert_eq!(evidence.reference, "order:4821");
        assert_eq!(evidence.version, order.version.to_string());
        assert_eq!(evidence.kind, EvidenceKind::Order);
        assert_eq!(evidence.missing_field(), None);
    }

    #[test]
    fn a_citation_without_a_version_is_incomplete() {
        let mut evidence = fixtures::policy_evidence();
        evidence.version = " ".into();
        assert_eq!(evidence.missing_field(), Some("version"));
    }

    #[test]
    fn a_blank_answer_leaves_the_question_open() {
        let mut question = OpenQuestion::new("Was the parcel opened?", Asker::Customer);
        assert!(question.is_open());
        question.answer = Some("  ".into());
        assert!(question.is_open());
        question.answer = Some("No, still sealed".into());
        assert!(!question.is_open());
    }

    #[test]
    fn an_answer_stored_before_answers_were_bound_to_their_message_still_reads() {
        let stored = r#"{"question":"Was the parcel opened?","ask":"customer","answer":"no"}"#;
        let question: OpenQuestion = serde_json::from_str(stored).unwrap();
        assert_eq!(question.answer.as_deref(), Some("no"));
        assert_eq!(question.answered_in, None);
    }

    #[test]
    fn provenance_involves_the_requester_and_the_customer() {
        let provenance = Provenance {
            agent: "refund_specialist".into(),
            conversation_id: None,
            on_behalf_of: Some("usr_customer".into()),
            requested_by: "usr_staff".into(),
            submitted_by: None,
        };
        assert!(provenance.involves("usr_customer"));
        assert!(provenance.involves("usr_staff"));
        assert!(!provenance.involves("usr_approver"));
    }
}
