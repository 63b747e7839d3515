//! What a conversation has actually established, rebuilt from the
//! transcript's tool results (which the runtime writes from what the tools
//! returned, never from what the model says) and kept current by the tools
//! during a turn.
//!
//! `prepare_refund` refuses unless the ledger holds the order record and the
//! policy passages it cites; open questions and the customer's own words in
//! reply go into the proposal from here.

use super::tools::{
    GET_ORDER, PREPARE_REFUND, PreparedProposal, RECORD_UNKNOWN, RecordedQuestion, SEARCH_POLICY,
};
use agents::{Message, OutcomeKind, Provenance, Role};
use domain::proposal::{Asker, OpenQuestion};
use std::collections::HashMap;

/// Replies kept per question: enough for "no" after a "sorry?", bounded so a
/// long conversation does not pile every later message onto an old question.
const MAX_ANSWERS: usize = 3;

/// An explicit unknown recorded in the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedQuestion {
    pub question: String,
    pub order_id: Option<String>,
    pub ask: Asker,
    /// What the customer wrote after it was asked, verbatim.
    pub replies: Vec<String>,
    /// Written into a proposal already.
    pub closed: bool,
}

/// Evidence read, questions asked and proposals made in one conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    evidence: Vec<Provenance>,
    questions: Vec<AskedQuestion>,
    proposals: Vec<(String, String)>,
}

impl Ledger {
    /// Replays a transcript.
    pub fn from_transcript(messages: &[Message]) -> Ledger {
        let mut ledger = Ledger::default();
        let mut tool_of: HashMap<&str, &str> = HashMap::new();
        for message in messages {
            match message.role {
                Role::User => ledger.customer_said(&message.content),
                Role::Assistant => {
                    for call in &message.tool_calls {
                        tool_of.insert(&call.id, &call.name);
                    }
                }
                Role::Tool if message.outcome == Some(OutcomeKind::Found) => {
                    let tool = message
                        .tool_call_id
                        .as_deref()
                        .and_then(|id| tool_of.get(id).copied())
                        .unwrap_or_default();
                    if let Some(result) = message.result_json() {
                        ledger.replay(tool, &result);
                    }
                }
                Role::Tool | Role::System => {}
            }
        }
        ledger
    }

    fn replay(&mut self, tool: &str, result: &serde_json::Value) {
        let value = result.get("value").cloned().unwrap_or_default();
        match tool {
            GET_ORDER | SEARCH_POLICY => {
                let provenance: Vec<Provenance> = result
                    .get("provenance")
                    .cloned()
                    .and_then(|p| serde_json::from_value(p).ok())
                    .unwrap_or_default();
                self.read(&provenance);
            }
            RECORD_UNKNOWN => {
                if let Ok(recorded) = serde_json::from_value::<RecordedQuestion>(value) {
                    self.asked(recorded.question, recorded.order_id, recorded.ask);
                }
            }
            PREPARE_REFUND => {
                if let Ok(prepared) = serde_json::from_value::<PreparedProposal>(value) {
                    self.proposed(&prepared.order_id, &prepared.proposal_id);
                }
            }
            _ => {}
        }
    }

    /// The customer wrote `text`: a reply to every question still open.
    pub fn customer_said(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        for question in &mut self.questions {
            if !question.closed
                && question.ask == Asker::Customer
                && question.replies.len() < MAX_ANSWERS
            {
                question.replies.push(text.to_owned());
            }
        }
    }

    /// A tool read these sources; a newer reading of a source replaces the older.
    pub fn read(&mut self, provenance: &[Provenance]) {
        for item in provenance {
            self.evidence.retain(|known| known.source != item.source);
            self.evidence.push(item.clone());
        }
    }

    /// An unknown was recorded; asking the same thing again starts afresh.
    pub fn asked(&mut self, question: String, order_id: Option<String>, ask: Asker) {
        self.questions
            .retain(|q| !(q.question == question && q.order_id == order_id && !q.closed));
        self.questions.push(AskedQuestion {
            question,
            order_id,
            ask,
            replies: Vec::new(),
            closed: false,
        });
    }

    /// A proposal was stored for `order_id`; its questions are settled into it.
    pub fn proposed(&mut self, order_id: &str, proposal_id: &str) {
        for question in &mut self.questions {
            if question.order_id.as_deref().is_none_or(|id| id == order_id) {
                question.closed = true;
            }
        }
        self.proposals
            .push((order_id.to_owned(), proposal_id.to_owned()));
    }

    /// The latest reading of `order:<order_id>`.
    pub fn order_evidence(&self, order_id: &str) -> Option<&Provenance> {
        let source = domain::proposal::Evidence::order_reference(order_id);
        self.evidence.iter().find(|item| item.source == source)
    }

    /// The reading of a policy passage, e.g. `returns-policy:section-3`.
    pub fn policy_evidence(&self, reference: &str) -> Option<&Provenance> {
        self.evidence
            .iter()
            .find(|item| item.source == reference && !item.source.starts_with("order:"))
    }

    /// Every policy passage read so far.
    pub fn policy_references(&self) -> Vec<&str> {
        self.evidence
            .iter()
            .filter(|item| !item.source.starts_with("order:"))
            .map(|item| item.source.as_str())
            .collect()
    }

    /// The questions a proposal for `order_id` must carry, with the
    /// customer's replies as their answer.
    pub fn open_questions_for(&self, order_id: &str) -> Vec<OpenQuestion> {
        self.questions
            .iter()
            .filter(|q| !q.closed && q.order_id.as_deref().is_none_or(|id| id == order_id))
            .map(|q| OpenQuestion {
                question: q.question.clone(),
                ask: q.ask,
                answer: (!q.replies.is_empty()).then(|| q.replies.join(" / ")),
            })
            .collect()
    }

    /// A question to the customer about `order_id` (or about no order in
    /// particular) that they have not replied to yet. A refund must not be
    /// proposed over it: the reply may change what is owed.
    pub fn unanswered_customer_question(&self, order_id: &str) -> Option<&str> {
        self.questions
            .iter()
            .find(|q| {
                !q.closed
                    && q.ask == Asker::Customer
                    && q.replies.is_empty()
                    && q.order_id.as_deref().is_none_or(|id| id == order_id)
            })
            .map(|q| q.question.as_str())
    }

    /// The proposal this conversation already made for `order_id`.
    pub fn proposal_for(&self, order_id: &str) -> Option<&str> {
        self.proposals
            .iter()
            .rev()
            .find(|(order, _)| order == order_id)
            .map(|(_, proposal)| proposal.as_str())
    }

    /// Every proposal this conversation made, oldest first: (order, proposal).
    pub fn proposals(&self) -> &[(String, String)] {
        &self.proposals
    }

    /// Every source read, the latest reading of each.
    pub fn evidence(&self) -> &[Provenance] {
        &self.evidence
    }

    pub fn questions(&self) -> &[AskedQuestion] {
        &self.questions
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use agents::{ToolCall, ToolOutcome};
    use serde_json::json;

    fn order_provenance() -> Provenance {
        Provenance {
            source: "order:4821".into(),
            title: "Order 4821".into(),
            section: None,
            version: "1".into(),
            quote: None,
        }
    }

    #[test]
    fn evidence_comes_only_from_found_tool_results() {
        let found = ToolOutcome::found(json!({}), vec![order_provenance()]);
        let messages = vec![
            Message::user("check order 4821"),
            // The model claiming evidence in its text proves nothing.
            Message::assistant("refund_specialist", "I read order:4821", vec![]),
            Message::assistant(
                "refund_specialist",
                "",
                vec![ToolCall::new("c1", GET_ORDER, json!({"order_id": "4821"}))],
            ),
            Message::tool_result(
                "refund_specialist",
                "c1",
                found.kind(),
                &found.to_model_json(),
            ),
        ];
        let ledger = Ledger::from_transcript(&messages);
        assert!(ledger.order_evidence("4821").is_some());
        let without_result = Ledger::from_transcript(&messages[..3]);
        assert!(without_result.order_evidence("4821").is_none());
    }

    #[test]
    fn the_customers_reply_answers_the_open_question_until_a_proposal_settles_it() {
        let mut ledger = Ledger::default();
        ledger.customer_said("check order 4821");
        ledger.asked(
            "Was the item opened?".into(),
            Some("4821".into()),
            Asker::Customer,
        );
        assert_eq!(
            ledger.unanswered_customer_question("4821"),
            Some("Was the item opened?")
        );
        assert_eq!(ledger.unanswered_customer_question("4823"), None);
        ledger.customer_said("no, still sealed");
        assert_eq!(ledger.unanswered_customer_question("4821"), None);
        let questions = ledger.open_questions_for("4821");
        assert_eq!(questions.len(), 1);
        assert_eq!(questions[0].answer.as_deref(), Some("no, still sealed"));
        assert!(ledger.open_questions_for("4823").is_empty());
        ledger.proposed("4821", "prp_1");
        ledger.customer_said("thanks");
        assert!(ledger.open_questions_for("4821").is_empty());
        assert_eq!(ledger.proposal_for("4821"), Some("prp_1"));
    }
}
