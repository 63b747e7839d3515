//! Server functions over the customer chat: resume or open the caller's
//! conversation, read one as the page shows it, send a message (one agent
//! turn), stop the turn in flight. The same engine use cases serve the JSON
//! API (`/api/v1/conversations`).

use crate::error::AppError;
use domain::Money;
use domain::proposal::ProposalState;
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

/// Longest message accepted, in characters (the engine's limit).
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// A conversation as the chat page shows it: plain text and references only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatView {
    pub id: String,
    /// None while a visitor who has not signed in holds it.
    pub customer_id: Option<String>,
    /// The viewer opened it and may write to it (staff may only read).
    pub can_write: bool,
    /// A turn is running now (possibly from another tab).
    pub running: bool,
    /// Orders are still being checked in the background (by investigators
    /// a newer message left running); Stop ends them.
    pub background: bool,
    /// The running turn waits for the visitor to sign in: the page offers
    /// the sign-in (in another tab) and Stop.
    pub waiting_for_sign_in: bool,
    /// A carrier's tracking page is being read for it (the browser step
    /// takes up to two and a half minutes).
    pub reading_carrier_page: bool,
    /// The customer's message that turn is answering.
    pub message_being_answered: Option<String>,
    /// Display name of the agent that will read the next message.
    pub active_agent: String,
    /// The model driving the agents.
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// Every proposal this conversation prepared, oldest first.
    pub proposals: Vec<ChatProposal>,
    /// Whether the agents answer, a person is awaited, or a person holds it.
    pub handover: crate::handover::ChatHandover,
    /// Messages sent while a turn ran that are not in the transcript: those
    /// waiting for the next turn, and those Stop cancelled.
    pub queue: Vec<QueuedLine>,
}

/// A message waiting for the next turn, or cancelled before one took it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedLine {
    pub id: String,
    pub text: String,
    /// `now`, `this_turn` or `later`.
    pub priority: String,
    pub cancelled: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MessageKind {
    Customer,
    Agent,
    /// A handoff between agents or a Stop, told in a line.
    Note,
    /// A member of the team who took the conversation over.
    Person,
}

/// One line of the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub kind: MessageKind,
    /// "You", "Customer" or the agent's display name.
    pub speaker: String,
    /// The agent's id (`refund_specialist`) for agent messages.
    pub agent: Option<String>,
    pub text: String,
    /// What the agent's reply rests on.
    pub evidence: Vec<EvidenceChip>,
    /// Proposals prepared in the turn this reply ends.
    pub proposal_ids: Vec<String>,
    /// Its position in the conversation's transcript: the page anchors it
    /// as `m-<index>`, which is how a proposal links to the answer it quotes.
    pub index: usize,
}

/// A source an agent read: `order:4821`, `returns-policy:section-3`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceChip {
    pub reference: String,
    pub title: String,
    pub section: Option<String>,
    /// The version read (a policy's content hash, an order's version).
    pub version: String,
    pub quote: Option<String>,
}

/// A proposal made in the conversation, with its current state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatProposal {
    pub id: String,
    pub order_id: String,
    pub amount: Money,
    pub state: ProposalState,
}

/// "refund_specialist" → "Refund specialist".
pub fn agent_display_name(agent: &str) -> String {
    let spaced = agent.replace(['_', '-'], " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Assistant".to_owned(),
    }
}

/// Checks a message the way the engine will, with a precise reason.
///
/// # Errors
/// [`AppError::Invalid`] naming what is wrong.
pub fn check_message(text: &str) -> Result<(), AppError> {
    let chars = text.trim().chars().count();
    if chars == 0 {
        return Err(AppError::Invalid("write a message first".to_owned()));
    }
    if chars > MAX_MESSAGE_CHARS {
        return Err(AppError::Invalid(format!(
            "the message is {chars} characters long; the limit is {MAX_MESSAGE_CHARS}"
        )));
    }
    Ok(())
}

#[cfg(feature = "ssr")]
mod backend {
    use super::*;
    use crate::server::{self, Identity};
    use engine::assistant::tools::{
        GET_ORDER, INVESTIGATE_ORDERS, Investigation, PREPARE_REFUND, PreparedProposal,
        SEARCH_POLICY,
    };
    use engine::assistant::{ChatError, Conversation, Message, Provenance, Role};
    use std::collections::HashMap;

    pub fn chat_error(error: ChatError) -> AppError {
        let message = error.to_string();
        let mapped = match error {
            ChatError::InvalidMessage(_) => AppError::Invalid(message),
            ChatError::NotFound(_) => AppError::NotFound(message),
            ChatError::ReadOnly(_) => AppError::Forbidden(message),
            ChatError::TurnInProgress(_)
            | ChatError::NoTurnRunning(_)
            | ChatError::ClaimLost(_) => AppError::Conflict(message),
            ChatError::ModelFailed { agent, kind, .. } => {
                // The provider's own message may name internal hosts: log it, show the kind.
                tracing::warn!(%agent, %kind, error = %message, "chat turn: the model failed");
                AppError::Transport(format!(
                    "the model could not answer ({kind}); your message was kept and nothing else was done — try again"
                ))
            }
            ChatError::Corrupt(_) | ChatError::Interrupted => return server::internal(&message),
            ChatError::Storage(inner) => return server::internal(&inner),
        };
        server::fail(mapped)
    }

    pub fn open_error(error: engine::assistant::OpenConversationError) -> AppError {
        use engine::assistant::OpenConversationError as E;
        match error {
            E::Storage(inner) => server::internal(&inner),
            E::NotAllowed => server::fail(AppError::Forbidden(error.to_string())),
            other => server::fail(AppError::Invalid(other.to_string())),
        }
    }

    /// The page's view of a conversation.
    pub async fn view(
        ctx: &server::ServerContext,
        me: &Identity,
        conversation: Conversation,
    ) -> Result<ChatView, AppError> {
        let mut proposals = Vec::with_capacity(conversation.proposals.len());
        for (_, proposal_id) in &conversation.proposals {
            let stored = storage::proposals::get(ctx.db.conn(), proposal_id)
                .await
                .map_err(|e| server::internal(&e))?;
            if let Some(stored) = stored {
                proposals.push(ChatProposal {
                    id: stored.proposal.id,
                    order_id: stored.proposal.order_id,
                    amount: stored.proposal.amount,
                    state: stored.state,
                });
            }
        }
        // A visitor reads only the conversation they opened, until it is bound.
        let own = conversation.owner_id == me.user_id
            || (me.is_guest() && conversation.customer_id.is_none());
        let handover = crate::handover::backend::chat_handover(ctx, me, &conversation.id).await?;
        let entries = ctx
            .engine
            .chat
            .queue(&me.actor(), &conversation.id)
            .await
            .map_err(chat_error)?;
        // What Stop cancelled shows until a later message is answered.
        let answered_after = entries
            .iter()
            .rposition(|entry| !matches!(entry.state.as_str(), "waiting" | "cancelled"));
        let queue = entries
            .into_iter()
            .enumerate()
            .filter(|(at, entry)| {
                entry.state == "waiting"
                    || (entry.state == "cancelled" && answered_after.is_none_or(|last| *at > last))
            })
            .map(|(_, entry)| entry)
            .map(|entry| QueuedLine {
                cancelled: entry.state == "cancelled",
                priority: entry.priority,
                id: entry.id,
                text: entry.text,
            })
            .collect();
        Ok(ChatView {
            messages: transcript(conversation.state.messages(), own),
            can_write: own,
            running: conversation.running,
            background: conversation.background,
            waiting_for_sign_in: conversation.waiting_for_sign_in,
            reading_carrier_page: conversation.reading_carrier_page,
            message_being_answered: conversation.message_being_answered,
            active_agent: agent_display_name(&conversation.active_agent),
            model: ctx.engine.assistant.model_name().to_owned(),
            customer_id: conversation.customer_id,
            id: conversation.id,
            proposals,
            handover,
            queue,
        })
    }

    /// What one turn read and prepared, attached to the turn's last reply.
    #[derive(Default)]
    struct Turn {
        read: Vec<EvidenceChip>,
        cited: Option<Vec<EvidenceChip>>,
        proposals: Vec<String>,
        last_reply: Option<usize>,
    }

    impl Turn {
        fn close(self, messages: &mut [ChatMessage]) {
            if let Some(reply) = self.last_reply.and_then(|i| messages.get_mut(i)) {
                reply.evidence = self.cited.unwrap_or(self.read);
                reply.proposal_ids = self.proposals;
            }
        }
    }

    fn chip(item: Provenance) -> EvidenceChip {
        EvidenceChip {
            reference: item.source,
            title: item.title,
            section: item.section,
            version: item.version,
            quote: item.quote,
        }
    }

    /// The transcript as people read it: the customer's messages, the
    /// agents' replies with what they rest on, and handoffs as notes.
    /// Tool traffic itself stays in the conversation's events.
    pub fn transcript(messages: &[Message], own: bool) -> Vec<ChatMessage> {
        let mut out: Vec<ChatMessage> = Vec::new();
        let mut turn = Turn::default();
        let mut calls: HashMap<&str, (&str, &serde_json::Value)> = HashMap::new();
        let line =
            |index, kind, speaker: String, agent: Option<String>, text: String| ChatMessage {
                kind,
                speaker,
                agent,
                text,
                evidence: Vec::new(),
                proposal_ids: Vec::new(),
                index,
            };
        for (index, message) in messages.iter().enumerate() {
            match message.role {
                Role::System => {}
                Role::User => {
                    std::mem::take(&mut turn).close(&mut out);
                    let speaker = if own { "You" } else { "Customer" };
                    out.push(line(
                        index,
                        MessageKind::Customer,
                        speaker.to_owned(),
                        None,
                        message.content.clone(),
                    ));
                }
                Role::Assistant => {
                    for call in &message.tool_calls {
                        calls.insert(&call.id, (&call.name, &call.arguments));
                    }
                    if let Some((kind, speaker)) = crate::handover::backend::outside_turn(message) {
                        out.push(line(index, kind, speaker, None, message.content.clone()));
                    } else if !message.content.trim().is_empty() {
                        let agent = message.agent.clone().unwrap_or_default();
                        turn.last_reply = Some(out.len());
                        out.push(line(
                            index,
                            MessageKind::Agent,
                            agent_display_name(&agent),
                            Some(agent),
                            message.content.clone(),
                        ));
                    }
                }
                Role::Tool => {
                    let Some((tool, arguments)) = message
                        .tool_call_id
                        .as_deref()
                        .and_then(|id| calls.get(id).copied())
                    else {
                        continue;
                    };
                    match message.outcome {
                        Some(engine::assistant::OutcomeKind::HandedOff) => {
                            let from = agent_display_name(message.agent.as_deref().unwrap_or(""));
                            let to = arguments
                                .get("to")
                                .and_then(serde_json::Value::as_str)
                                .map(agent_display_name)
                                .unwrap_or_else(|| "another agent".to_owned());
                            out.push(line(
                                index,
                                MessageKind::Note,
                                String::new(),
                                None,
                                format!(
                                    "{from} handed the conversation to the {}",
                                    to.to_lowercase()
                                ),
                            ));
                        }
                        Some(engine::assistant::OutcomeKind::Found) => {
                            let Some(result) = message.result_json() else {
                                continue;
                            };
                            let provenance: Vec<Provenance> = result
                                .get("provenance")
                                .cloned()
                                .and_then(|p| serde_json::from_value(p).ok())
                                .unwrap_or_default();
                            match tool {
                                GET_ORDER | SEARCH_POLICY => {
                                    for item in provenance {
                                        turn.read.retain(|known| known.reference != item.source);
                                        turn.read.push(chip(item));
                                    }
                                }
                                PREPARE_REFUND => {
                                    let value = result.get("value").cloned().unwrap_or_default();
                                    if let Ok(prepared) =
                                        serde_json::from_value::<PreparedProposal>(value)
                                    {
                                        turn.proposals.push(prepared.proposal_id);
                                        turn.cited =
                                            Some(provenance.into_iter().map(chip).collect());
                                    }
                                }
                                INVESTIGATE_ORDERS => {
                                    let value = result.get("value").cloned().unwrap_or_default();
                                    if let Ok(investigation) =
                                        serde_json::from_value::<Investigation>(value)
                                    {
                                        for order in investigation.orders {
                                            turn.proposals
                                                .extend(order.proposal.map(|p| p.proposal_id));
                                        }
                                    }
                                    for item in provenance {
                                        turn.read.retain(|known| known.reference != item.source);
                                        turn.read.push(chip(item));
                                    }
                                }
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        turn.close(&mut out);
        out
    }
}

/// What `/chat` opens with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MyChat {
    /// The customer's most recent conversation, resumed.
    Resumed(Box<ChatView>),
    /// The customer has no conversation yet; their first message opens one.
    NotStarted,
    /// Staff read customers' conversations by id instead.
    NotACustomer,
}

/// The signed-in customer's most recent conversation. A read only: loading
/// the page never opens a conversation (a crawler, a prefetch or a reload
/// would pile up empty ones); the first message does, by POST.
#[server(prefix = "/fn", endpoint = "my_conversation", input = server_fn::codec::GetUrl)]
pub async fn my_conversation() -> Result<MyChat, AppError> {
    use crate::server;
    // A visitor who has not sent a first message has nothing to resume.
    let Some(me) = server::chat_caller(false).await? else {
        return Ok(MyChat::NotStarted);
    };
    if !me.roles.contains(domain::Role::Customer) && !me.is_guest() {
        return Ok(MyChat::NotACustomer);
    }
    let ctx = server::context()?;
    let latest = ctx
        .engine
        .chat
        .latest_conversation(&me.actor())
        .await
        .map_err(backend::chat_error)?;
    match latest {
        Some(conversation) => backend::view(&ctx, &me, conversation)
            .await
            .map(|view| MyChat::Resumed(Box::new(view))),
        None => Ok(MyChat::NotStarted),
    }
}

/// One conversation, for its owner, its customer or staff.
#[server(prefix = "/fn", endpoint = "conversation_view", input = server_fn::codec::GetUrl)]
pub async fn conversation_view(id: String) -> Result<ChatView, AppError> {
    use crate::server;
    let me = server::require_chat_caller().await?;
    let ctx = server::context()?;
    let conversation = ctx
        .engine
        .chat
        .conversation(&me.actor(), id.trim())
        .await
        .map_err(backend::chat_error)?;
    backend::view(&ctx, &me, conversation).await
}

/// Starts a new conversation for the signed-in customer.
#[server(prefix = "/fn", endpoint = "new_conversation")]
pub async fn new_conversation(csrf_token: String) -> Result<ChatView, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    // A visitor who has not signed in may start one; it becomes theirs as
    // a customer when they sign in.
    let me = server::chat_caller(true)
        .await?
        .ok_or_else(|| server::fail(AppError::Unauthenticated))?;
    let ctx = server::context()?;
    let conversation = ctx
        .engine
        .chat
        .create_conversation(&me.actor(), None)
        .await
        .map_err(backend::open_error)?;
    backend::view(&ctx, &me, conversation).await
}

/// Sends a message and waits for the agents' reply (one turn); returns the
/// conversation as it is afterwards. A message while a turn runs is stored
/// and waits for the next turn.
#[server(prefix = "/fn", endpoint = "send_message")]
pub async fn send_message(
    csrf_token: String,
    id: String,
    text: String,
    // "now" stops the running turn for this message, "this_turn" is read by
    // the running turn before its next step; anything else waits.
    #[server(default)] priority: String,
) -> Result<ChatView, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_chat_caller().await?;
    check_message(&text).map_err(server::fail)?;
    let ctx = server::context()?;
    let actor = me.actor();
    let id = id.trim();
    ctx.engine
        .chat
        .chat_turn(
            &actor,
            id,
            &text,
            engine::assistant::Priority::parse(&priority).unwrap_or_default(),
            engine::assistant::TurnControl::new(),
        )
        .await
        .map_err(backend::chat_error)?;
    let conversation = ctx
        .engine
        .chat
        .conversation(&actor, id)
        .await
        .map_err(backend::chat_error)?;
    backend::view(&ctx, &me, conversation).await
}

/// Stops the turn in flight (it ends cleanly and its transcript is saved)
/// and cancels the messages waiting for a turn.
#[server(prefix = "/fn", endpoint = "stop_turn")]
pub async fn stop_turn(csrf_token: String, id: String) -> Result<(), AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_chat_caller().await?;
    let ctx = server::context()?;
    ctx.engine
        .chat
        .stop_turn(&me.actor(), id.trim())
        .await
        .map(|_receipt| ())
        .map_err(backend::chat_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names_read_as_words() {
        assert_eq!(agent_display_name("refund_specialist"), "Refund specialist");
        assert_eq!(agent_display_name("coordinator"), "Coordinator");
        assert_eq!(agent_display_name(""), "Assistant");
    }

    #[test]
    fn messages_are_checked_with_a_reason() {
        assert!(check_message("check order 4821").is_ok());
        assert_eq!(
            check_message("   "),
            Err(AppError::Invalid("write a message first".to_owned()))
        );
        assert!(check_message(&"a".repeat(MAX_MESSAGE_CHARS)).is_ok());
        assert_eq!(
            check_message(&"a".repeat(MAX_MESSAGE_CHARS + 1)),
            Err(AppError::Invalid(
                "the message is 4001 characters long; the limit is 4000".to_owned()
            ))
        );
    }
}
