//! What a conversation has actually established, rebuilt from the
//! transcript's tool results (which the runtime writes from what the tools
//! returned, never from what the model says) and kept current by the tools
//! during a turn.
//!
//! `prepare_refund` refuses unless the ledger holds the order record and the
//! policy passages it cites; open questions and the customer's answers go
//! into the proposal from here.
//!
//! An answer is bound to its question: it is the customer's message in the
//! turn right after the question was asked, quoted with where and when it
//! was said. Later messages ("thanks!", "can I talk to a human?", another
//! order) are messages, never more answer. A reply that asked for a person
//! (the agent called `request_person` for it) answers nothing; the question
//! stays open until it is asked again. Asking the same question again makes
//! the next message its answer instead.

use super::tools::{
    CHECK_CARRIER_TRACKING, CHECK_RETURNED_PARCEL, GET_ORDER, INVESTIGATE_ORDERS, Investigation,
    PREPARE_REFUND, ParcelInspection, PreparedProposal, RECORD_UNKNOWN, REQUEST_PERSON,
    RecordedQuestion, SEARCH_POLICY,
};
use agents::{Message, OutcomeKind, Provenance, Role};
use domain::Timestamp;
use domain::proposal::{AnsweredIn, Asker, OpenQuestion};
use std::collections::HashMap;

/// A customer message, as the ledger refers to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomerMessage {
    pub text: String,
    /// Its position in the conversation's transcript.
    pub index: usize,
    /// When it was sent (none on messages stored before they were timed).
    pub at: Option<Timestamp>,
}

/// An explicit unknown recorded in the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedQuestion {
    pub question: String,
    pub order_id: Option<String>,
    pub ask: Asker,
    /// The customer's reply in the turn after it was asked, verbatim.
    pub answer: Option<CustomerMessage>,
    /// Asked, and the customer has not written since: their next message
    /// is the answer.
    pub awaiting_reply: bool,
    /// Written into a proposal already.
    pub closed: bool,
}

/// Evidence read, questions asked and proposals made in one conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    conversation_id: String,
    /// The latest customer message.
    last_customer_message: Option<CustomerMessage>,
    evidence: Vec<Provenance>,
    /// Signed answers of other groups about an order: (order id, what the
    /// answer said, where it came from).
    peer_answers: Vec<(String, String, Provenance)>,
    /// Carrier tracking pages read in the browser: (order id, provenance).
    carrier_checks: Vec<(String, Provenance)>,
    questions: Vec<AskedQuestion>,
    proposals: Vec<(String, String)>,
}

impl Ledger {
    /// An empty ledger for conversation `conversation_id`.
    pub fn new(conversation_id: impl Into<String>) -> Ledger {
        Ledger {
            conversation_id: conversation_id.into(),
            ..Ledger::default()
        }
    }

    /// Replays the transcript of conversation `conversation_id`.
    pub fn from_transcript(conversation_id: &str, messages: &[Message]) -> Ledger {
        let mut ledger = Ledger::new(conversation_id);
        let mut tool_of: HashMap<&str, &str> = HashMap::new();
        for (index, message) in messages.iter().enumerate() {
            match message.role {
                Role::User => ledger.customer_said(CustomerMessage {
                    text: message.content.clone(),
                    index,
                    at: message.at,
                }),
                Role::Assistant if written_by_the_team(message) => ledger.person_joined(),
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
            REQUEST_PERSON => self.asked_for_person(),
            INVESTIGATE_ORDERS => {
                if let Ok(investigation) = serde_json::from_value::<Investigation>(value) {
                    self.investigated(&investigation);
                }
            }
            CHECK_RETURNED_PARCEL => {
                let provenance: Option<Provenance> = result
                    .get("provenance")
                    .and_then(|p| p.get(0))
                    .cloned()
                    .and_then(|p| serde_json::from_value(p).ok());
                if let (Ok(inspection), Some(provenance)) = (
                    serde_json::from_value::<ParcelInspection>(value),
                    provenance,
                ) {
                    self.peer_answered(&inspection.order_id, &inspection.condition, provenance);
                }
            }
            CHECK_CARRIER_TRACKING => {
                let provenance: Option<Provenance> = result
                    .get("provenance")
                    .and_then(|p| p.get(0))
                    .cloned()
                    .and_then(|p| serde_json::from_value(p).ok());
                if let (Some(order_id), Some(provenance)) =
                    (value.get("order_id").and_then(|v| v.as_str()), provenance)
                {
                    self.carrier_checked(order_id, provenance);
                }
            }
            _ => {}
        }
    }

    /// What subagents found about several orders, taken in as if this
    /// conversation had read, asked and proposed it itself: each order's
    /// evidence, its question (the customer's next message answers it), its
    /// proposal and the returns desk's signed answer.
    pub fn investigated(&mut self, investigation: &Investigation) {
        for order in &investigation.orders {
            self.read(&order.evidence);
            if let Some(parcel) = &order.parcel {
                self.peer_answered(
                    &parcel.inspection.order_id,
                    &parcel.inspection.condition,
                    parcel.provenance.clone(),
                );
            }
            if let Some(question) = &order.question {
                self.asked(
                    question.question.clone(),
                    question.order_id.clone(),
                    question.ask,
                );
            }
            if let Some(proposal) = &order.proposal {
                self.proposed(&proposal.order_id, &proposal.proposal_id);
            }
        }
    }

    /// The latest customer message, if the conversation has one.
    pub fn last_customer_message(&self) -> Option<&CustomerMessage> {
        self.last_customer_message.as_ref()
    }

    /// The customer's answer to the latest question about `order_id`, if
    /// they gave one and no proposal settled it yet.
    pub fn answer_for(&self, order_id: &str) -> Option<(&str, &CustomerMessage)> {
        self.questions
            .iter()
            .rev()
            .find(|q| !q.closed && q.order_id.as_deref() == Some(order_id))
            .and_then(|q| q.answer.as_ref().map(|a| (q.question.as_str(), a)))
    }

    /// The customer sent `message`: the answer to each question asked in
    /// the turn before, and to no other.
    pub fn customer_said(&mut self, message: CustomerMessage) {
        self.last_customer_message = Some(message.clone());
        for question in &mut self.questions {
            if !std::mem::take(&mut question.awaiting_reply) {
                continue;
            }
            if !question.closed
                && question.ask == Asker::Customer
                && !message.text.trim().is_empty()
            {
                question.answer = Some(CustomerMessage {
                    text: message.text.trim().to_owned(),
                    ..message.clone()
                });
            }
        }
    }

    /// A person joined or spoke for the team: what the customer writes next
    /// is addressed to them, not an answer to a question an agent asked
    /// before. The question stays open until an agent asks it again.
    pub fn person_joined(&mut self) {
        for question in &mut self.questions {
            question.awaiting_reply = false;
        }
    }

    /// The latest customer message asked for a person: it is no answer,
    /// whatever question it followed.
    pub fn asked_for_person(&mut self) {
        let Some(index) = self.last_customer_message.as_ref().map(|m| m.index) else {
            return;
        };
        for question in &mut self.questions {
            if question.answer.as_ref().is_some_and(|a| a.index == index) {
                question.answer = None;
            }
        }
    }

    /// Another group answered about `order_id` (`said`, e.g. the parcel's
    /// condition), signed; the newest answer about an order counts.
    pub fn peer_answered(&mut self, order_id: &str, said: &str, provenance: Provenance) {
        self.peer_answers.retain(|(order, _, _)| order != order_id);
        self.peer_answers
            .push((order_id.to_owned(), said.to_owned(), provenance));
    }

    /// The signed answer another group gave about `order_id`, with what it
    /// said, if one was read in this conversation.
    pub fn peer_evidence(&self, order_id: &str) -> Option<(&str, &Provenance)> {
        self.peer_answers
            .iter()
            .find(|(order, _, _)| order == order_id)
            .map(|(_, said, provenance)| (said.as_str(), provenance))
    }

    /// The carrier's tracking page for `order_id` was read in the browser;
    /// the newest reading counts.
    pub fn carrier_checked(&mut self, order_id: &str, provenance: Provenance) {
        self.carrier_checks.retain(|(order, _)| order != order_id);
        self.carrier_checks.push((order_id.to_owned(), provenance));
    }

    /// The newest reading of `order_id`'s tracking page in this
    /// conversation, if any.
    pub fn carrier_evidence(&self, order_id: &str) -> Option<&Provenance> {
        self.carrier_checks
            .iter()
            .find(|(order, _)| order == order_id)
            .map(|(_, provenance)| provenance)
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
            awaiting_reply: ask == Asker::Customer,
            ask,
            answer: None,
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

    /// The questions a proposal for `order_id` must carry, each with the
    /// customer's answer and the message it was given in.
    pub fn open_questions_for(&self, order_id: &str) -> Vec<OpenQuestion> {
        self.questions
            .iter()
            .filter(|q| !q.closed && q.order_id.as_deref().is_none_or(|id| id == order_id))
            .map(|q| OpenQuestion {
                question: q.question.clone(),
                ask: q.ask,
                answer: q.answer.as_ref().map(|a| a.text.clone()),
                answered_in: q.answer.as_ref().map(|a| AnsweredIn {
                    conversation_id: self.conversation_id.clone(),
                    message_index: u64::try_from(a.index).unwrap_or(u64::MAX),
                    at: a.at,
                }),
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
                    && q.answer.is_none()
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

/// A handover note or a person's message: the team, not an agent, wrote it.
fn written_by_the_team(message: &Message) -> bool {
    message.agent.as_deref().is_some_and(|agent| {
        agent == super::handover::HANDOVER_NOTE || agent.starts_with(super::handover::PERSON_PREFIX)
    })
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
        let ledger = Ledger::from_transcript("cnv_1", &messages);
        assert!(ledger.order_evidence("4821").is_some());
        let without_result = Ledger::from_transcript("cnv_1", &messages[..3]);
        assert!(without_result.order_evidence("4821").is_none());
    }

    fn said(ledger: &mut Ledger, index: usize, text: &str) {
        ledger.customer_said(CustomerMessage {
            text: text.into(),
            index,
            at: None,
        });
    }

    #[test]
    fn the_customers_reply_answers_the_open_question_until_a_proposal_settles_it() {
        let mut ledger = Ledger::new("cnv_1");
        said(&mut ledger, 0, "check order 4821");
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
        said(&mut ledger, 7, "no, still sealed");
        assert_eq!(ledger.unanswered_customer_question("4821"), None);
        let questions = ledger.open_questions_for("4821");
        assert_eq!(questions.len(), 1);
        assert_eq!(questions[0].answer.as_deref(), Some("no, still sealed"));
        let answered_in = questions[0].answered_in.as_ref().unwrap();
        assert_eq!(
            (
                answered_in.conversation_id.as_str(),
                answered_in.message_index
            ),
            ("cnv_1", 7)
        );
        assert!(ledger.open_questions_for("4823").is_empty());
        ledger.proposed("4821", "prp_1");
        said(&mut ledger, 9, "thanks");
        assert!(ledger.open_questions_for("4821").is_empty());
        assert_eq!(ledger.proposal_for("4821"), Some("prp_1"));
    }

    #[test]
    fn messages_after_the_answer_are_never_added_to_it() {
        let mut ledger = Ledger::new("cnv_1");
        ledger.asked("Was the item opened?".into(), None, Asker::Customer);
        for (index, text) in [
            (3, "no, still sealed"),
            (5, "thanks!"),
            (7, "can I talk to a human?"),
            (9, "check order 4822"),
        ] {
            said(&mut ledger, index, text);
        }
        let questions = ledger.open_questions_for("4822");
        assert_eq!(questions[0].answer.as_deref(), Some("no, still sealed"));
        assert_eq!(questions[0].answered_in.as_ref().unwrap().message_index, 3);
    }

    #[test]
    fn a_question_asked_again_is_answered_by_the_reply_to_the_new_asking() {
        let mut ledger = Ledger::new("cnv_1");
        ledger.asked("Was the item opened?".into(), None, Asker::Customer);
        said(&mut ledger, 3, "sorry?");
        ledger.asked("Was the item opened?".into(), None, Asker::Customer);
        said(&mut ledger, 5, "no");
        let questions = ledger.open_questions_for("4821");
        assert_eq!(questions.len(), 1);
        assert_eq!(questions[0].answer.as_deref(), Some("no"));
        assert_eq!(questions[0].answered_in.as_ref().unwrap().message_index, 5);
    }

    #[test]
    fn asking_for_a_person_right_after_the_question_answers_nothing() {
        let mut ledger = Ledger::new("cnv_1");
        ledger.asked(
            "Was the item opened?".into(),
            Some("4821".into()),
            Asker::Customer,
        );
        said(&mut ledger, 3, "can I talk to a human?");
        ledger.asked_for_person();
        said(&mut ledger, 5, "no, still sealed");
        assert_eq!(ledger.open_questions_for("4821")[0].answer, None);
        assert_eq!(
            ledger.unanswered_customer_question("4821"),
            Some("Was the item opened?"),
            "no refund is proposed over it until it is asked again"
        );
    }

    #[test]
    fn a_message_to_a_person_who_took_the_chat_over_after_the_question_is_not_its_answer() {
        let recorded = ToolOutcome::found(
            json!({"question": "Was the item opened?", "order_id": "4821",
                   "ask": "customer", "instruction": "ask the customer"}),
            vec![],
        );
        let mut messages = vec![
            Message::user("check order 4821"),
            Message::assistant(
                "refund_specialist",
                "",
                vec![ToolCall::new("c1", RECORD_UNKNOWN, json!({}))],
            ),
            Message::tool_result(
                "refund_specialist",
                "c1",
                recorded.kind(),
                &recorded.to_model_json(),
            ),
            Message::assistant("refund_specialist", "Was the item opened?", vec![]),
        ];
        let asked = Ledger::from_transcript("cnv_1", &messages);
        assert_eq!(
            asked.unanswered_customer_question("4821"),
            Some("Was the item opened?"),
            "the transcript records the question"
        );
        messages.extend([
            Message::assistant(
                crate::assistant::handover::HANDOVER_NOTE,
                "Ada joined the conversation.",
                vec![],
            ),
            Message::user("hello, is anyone there? it is sealed, by the way"),
            Message::assistant("person:Ada", "Hi, I am here.", vec![]),
        ]);
        let ledger = Ledger::from_transcript("cnv_1", &messages);
        assert_eq!(ledger.open_questions_for("4821")[0].answer, None);
        assert_eq!(
            ledger.unanswered_customer_question("4821"),
            Some("Was the item opened?"),
            "no refund is proposed over it until an agent asks again"
        );
    }

    #[test]
    fn a_question_for_the_approver_takes_no_customer_message_as_its_answer() {
        let mut ledger = Ledger::new("cnv_1");
        ledger.asked("Was a return label sent?".into(), None, Asker::Approver);
        said(&mut ledger, 3, "no");
        assert_eq!(ledger.open_questions_for("4821")[0].answer, None);
    }
}
