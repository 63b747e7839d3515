//! `/api/v1/conversations`: the customer chat for machines and the widget.
//! Open a conversation, send a message (the reply, the speaking agent, the
//! evidence and any proposal come back; while a turn runs, the message is
//! queued with its priority), stop everything in flight, read the
//! transcript, the queue and the agent events.

use super::Caller;
use super::extract::{ApiJson, ApiPath};
use super::openapi::ErrorBody;
use crate::startup::AppState;
use crate::web::api_error::ApiError;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use engine::assistant::{
    ChatError, Conversation, ConversationEvent, Delivery, MAX_MESSAGE_CHARS, Message,
    OpenConversationError, Priority, Provenance, QueueEntry, QueuedMessage, Role, StopReceipt,
    TurnControl, TurnEnd, TurnResult,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateConversationBody {
    /// The customer (user id) the conversation is about. Customers omit it
    /// (or give their own id); staff and agent accounts must give it.
    #[serde(default)]
    pub customer_id: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    /// 1 to 4000 characters.
    pub text: String,
    /// How the message meets a turn that is already running (it is stored
    /// first either way). `later` (the default): it waits for the turn to
    /// end and goes into the next turn with whatever else waited.
    /// `this_turn`: the running turn's model reads it before its next call
    /// (after the results of the tools it called); if the turn ends without
    /// another call, it goes into the next turn. `now`: the running turn is
    /// stopped at its next await (cut tool calls get a recorded "cancelled"
    /// result) and the next turn starts with it.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "later")]
    pub priority: Option<String>,
}

/// A message stored while a turn runs (202).
#[derive(Debug, Serialize, ToSchema)]
pub struct QueuedView {
    pub conversation_id: String,
    pub message_id: String,
    /// `now`, `this_turn` or `later`.
    pub priority: String,
    /// A `now` message asked the running turn to stop.
    pub preempting: bool,
    /// Always `waiting`: its outcome appears in the conversation's `queue`.
    pub state: String,
}

/// A message of the conversation's queue.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueueEntryView {
    pub id: String,
    /// `now`, `this_turn` or `later`.
    pub priority: String,
    pub text: String,
    /// `waiting`; `running` (a turn took it in); or its one outcome:
    /// `answered` (its turn's only message), `steered` (read by the running
    /// turn's model before its next call), `collected` (taken into a turn
    /// with others that waited), `for_person` (kept for the person of the
    /// team a turn asked for; no agent answered it), `cancelled` (by Stop,
    /// before any turn ran it).
    pub state: String,
    /// The turn it went into.
    pub turn: Option<u64>,
    pub received_at: DateTime<Utc>,
    pub settled_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConversationView {
    pub id: String,
    pub owner_id: String,
    /// The customer it is about; null while a visitor who has not signed in
    /// holds it (signing in binds it to them).
    pub customer_id: Option<String>,
    /// The agent that will read the next message.
    pub active_agent: String,
    /// A turn is running now.
    pub running: bool,
    /// Subagents a preempted turn started still run in the background; their
    /// findings join `messages` when they end, and Stop ends them.
    pub background: bool,
    /// The running turn waits for the visitor to sign in (up to 10 minutes;
    /// Stop ends the wait).
    pub waiting_for_sign_in: bool,
    /// A carrier's tracking page is being read for it, in the one browser
    /// (a read waits its turn there; the whole check takes at most two and
    /// a half minutes).
    pub reading_carrier_page: bool,
    /// The message the running turn is answering; it joins `messages` when
    /// the turn's reply is saved.
    pub message_being_answered: Option<String>,
    pub turns: u64,
    /// The model driving the agents (`countersign-offline-rules` by default).
    pub model: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub messages: Vec<MessageView>,
    /// Messages waiting for or taken into the running turn, and the most
    /// recent settled ones with their outcome, oldest first.
    pub queue: Vec<QueueEntryView>,
    /// Proposals this conversation prepared.
    pub proposals: Vec<LinkedProposalView>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MessageView {
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// The agent that wrote (assistant) or received (tool) it.
    pub agent: Option<String>,
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallView>,
    /// For tool results: the call answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool results: `found`, `not_found`, `unknown`, `invalid_arguments`,
    /// `refused`, `handed_off` or `cancelled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ToolCallView {
    pub id: String,
    pub name: String,
    #[schema(value_type = Object)]
    pub arguments: serde_json::Value,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LinkedProposalView {
    pub order_id: String,
    pub proposal_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EvidenceItemView {
    /// `order:4821`, `returns-policy:section-3`.
    pub source: String,
    pub title: String,
    pub section: Option<String>,
    /// The version read (order version, policy content hash).
    pub version: String,
    pub quote: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TurnView {
    pub conversation_id: String,
    pub turn: u64,
    /// The agent that spoke.
    pub agent: String,
    pub reply: String,
    /// `answered`, `stopped`, `step_limit`, or `for_person` (a person was
    /// asked for or holds the conversation: the message went to them, the
    /// agents stayed silent and `reply` is empty).
    pub outcome: String,
    /// What the reply rests on.
    pub evidence: Vec<EvidenceItemView>,
    /// A proposal prepared in this turn (awaiting approval; nothing is
    /// executed); the last one when its subagents prepared several.
    pub proposal_id: Option<String>,
    /// Every proposal prepared in this turn, by the agent or its subagents
    /// (one per order when several orders were investigated at once).
    pub proposal_ids: Vec<String>,
    /// Unknowns recorded in this turn, asked of the customer.
    pub questions: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StopView {
    pub conversation_id: String,
    /// A running turn was asked to stop (it ends at its next await and its
    /// transcript is saved).
    pub stopping: bool,
    /// The running turn's subagents stopped with it, by what each works on
    /// (e.g. `order 4821`), including those still waiting for a place;
    /// known when the turn runs on the replica that took the Stop.
    pub subagents_stopping: Vec<String>,
    /// Subagents left running in the background on another replica were
    /// told to stop (that replica stops them).
    pub background_elsewhere: bool,
    /// Queued messages cancelled: none of them will run.
    pub cancelled_messages: Vec<String>,
    /// The conversation's tasks at other groups told to stop.
    pub peer_tasks_told: usize,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConversationEventView {
    pub seq: i64,
    pub turn: i64,
    pub agent: String,
    /// `model_call_started`, `tool_call_finished`, `handoff_accepted`,
    /// `subagent_started`, `subagent_finished`, … (a subagent's events carry
    /// its id in `event.subagent`)
    pub kind: String,
    pub at: DateTime<Utc>,
    #[schema(value_type = Object)]
    pub event: serde_json::Value,
}

/// Open a conversation.
#[utoipa::path(post, path = "/api/v1/conversations", tag = "chat", request_body = CreateConversationBody,
    responses((status = 201, body = ConversationView), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiJson(body): ApiJson<CreateConversationBody>,
) -> Result<(StatusCode, Json<ConversationView>), ApiError> {
    let conversation = state
        .engine
        .chat
        .create_conversation(&identity.actor(), body.customer_id.as_deref())
        .await
        .map_err(open_error)?;
    Ok((
        StatusCode::CREATED,
        Json(view(&state, &conversation, Vec::new())),
    ))
}

/// The conversation and its transcript, for its owner, its customer or staff.
#[utoipa::path(get, path = "/api/v1/conversations/{id}", tag = "chat",
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 200, body = ConversationView), (status = 404, body = ErrorBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<ConversationView>, ApiError> {
    let conversation = state
        .engine
        .chat
        .conversation(&identity.actor(), &id)
        .await
        .map_err(chat_error)?;
    let queue = state
        .engine
        .chat
        .queue(&identity.actor(), &id)
        .await
        .map_err(chat_error)?;
    Ok(Json(view(&state, &conversation, queue)))
}

/// Send a message. It is stored first. With no turn running, its turn runs
/// and the reply comes back (200). While a turn runs it is queued with its
/// `priority` (202) and goes into the next turn; follow its state in the
/// conversation's `queue`.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/messages", tag = "chat", request_body = MessageBody,
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 200, body = TurnView), (status = 202, body = QueuedView), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody), (status = 502, body = ErrorBody)))]
pub async fn message(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<MessageBody>,
) -> Result<Response, ApiError> {
    let chars = body.text.trim().chars().count();
    if chars == 0 || chars > MAX_MESSAGE_CHARS {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            format!("text must be 1 to {MAX_MESSAGE_CHARS} characters, got {chars}"),
        ));
    }
    let priority = match body.priority.as_deref() {
        None => Priority::default(),
        Some(word) => Priority::parse(word).ok_or_else(|| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid",
                format!("priority must be \"now\", \"this_turn\" or \"later\", got {word:?}"),
            )
        })?,
    };
    let delivery = state
        .engine
        .chat
        .chat_turn(
            &identity.actor(),
            &id,
            &body.text,
            priority,
            TurnControl::new(),
        )
        .await
        .map_err(chat_error)?;
    Ok(match delivery {
        Delivery::Answered(result) => Json(turn_view(result)).into_response(),
        Delivery::Queued(queued) => {
            (StatusCode::ACCEPTED, Json(queued_view(queued))).into_response()
        }
    })
}

/// Stop everything of the conversation: the running turn (it ends at its
/// next await and its transcript is saved), the queued messages (cancelled,
/// never run) and its tasks at other groups. 409 when nothing runs or waits.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/stop", tag = "chat",
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 202, body = StopView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn stop(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<(StatusCode, Json<StopView>), ApiError> {
    let receipt = state
        .engine
        .chat
        .stop_turn(&identity.actor(), &id)
        .await
        .map_err(chat_error)?;
    Ok((StatusCode::ACCEPTED, Json(stop_view(id, receipt))))
}

fn stop_view(conversation_id: String, receipt: StopReceipt) -> StopView {
    StopView {
        conversation_id,
        stopping: receipt.turn_stopping,
        subagents_stopping: receipt.subagents_stopping,
        background_elsewhere: receipt.background_elsewhere,
        cancelled_messages: receipt.cancelled_messages,
        peer_tasks_told: receipt.peer_tasks_told,
    }
}

fn queued_view(queued: QueuedMessage) -> QueuedView {
    QueuedView {
        conversation_id: queued.conversation_id,
        message_id: queued.id,
        priority: queued.priority.as_str().to_owned(),
        preempting: queued.preempting,
        state: "waiting".to_owned(),
    }
}

fn queue_entry_view(entry: QueueEntry) -> QueueEntryView {
    QueueEntryView {
        id: entry.id,
        priority: entry.priority,
        text: entry.text,
        state: entry.state,
        turn: entry.turn,
        received_at: entry.received_at,
        settled_at: entry.settled_at,
    }
}

/// The agent events of a conversation (model calls, tool calls and their
/// outcomes, handoffs, stops), oldest first.
#[utoipa::path(get, path = "/api/v1/conversations/{id}/events", tag = "chat",
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 200, body = [ConversationEventView]), (status = 404, body = ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Vec<ConversationEventView>>, ApiError> {
    let events = state
        .engine
        .chat
        .conversation_events(&identity.actor(), &id)
        .await
        .map_err(chat_error)?;
    Ok(Json(events.into_iter().map(event_view).collect()))
}

fn view(state: &AppState, conversation: &Conversation, queue: Vec<QueueEntry>) -> ConversationView {
    ConversationView {
        id: conversation.id.clone(),
        owner_id: conversation.owner_id.clone(),
        customer_id: conversation.customer_id.clone(),
        active_agent: conversation.active_agent.clone(),
        running: conversation.running,
        background: conversation.background,
        waiting_for_sign_in: conversation.waiting_for_sign_in,
        reading_carrier_page: conversation.reading_carrier_page,
        message_being_answered: conversation.message_being_answered.clone(),
        turns: conversation.turns,
        model: state.engine.assistant.model_name().to_owned(),
        created_at: conversation.created_at,
        updated_at: conversation.updated_at,
        messages: conversation
            .state
            .messages()
            .iter()
            .map(message_view)
            .collect(),
        queue: queue.into_iter().map(queue_entry_view).collect(),
        proposals: conversation
            .proposals
            .iter()
            .map(|(order_id, proposal_id)| LinkedProposalView {
                order_id: order_id.clone(),
                proposal_id: proposal_id.clone(),
            })
            .collect(),
    }
}

fn message_view(message: &Message) -> MessageView {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    MessageView {
        role: role.to_owned(),
        agent: message.agent.clone(),
        text: message.content.clone(),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| ToolCallView {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })
            .collect(),
        tool_call_id: message.tool_call_id.clone(),
        outcome: message.outcome.map(|o| o.as_str().to_owned()),
    }
}

fn turn_view(result: TurnResult) -> TurnView {
    let outcome = match result.end {
        TurnEnd::Answered => "answered",
        TurnEnd::Stopped { .. } => "stopped",
        TurnEnd::StepLimit { .. } => "step_limit",
        TurnEnd::ForPerson => "for_person",
    };
    TurnView {
        conversation_id: result.conversation_id,
        turn: result.turn,
        agent: result.agent,
        reply: result.reply,
        outcome: outcome.to_owned(),
        evidence: result.evidence.into_iter().map(evidence_view).collect(),
        proposal_id: result.proposal_id,
        proposal_ids: result.proposal_ids,
        questions: result.questions,
    }
}

fn evidence_view(item: Provenance) -> EvidenceItemView {
    EvidenceItemView {
        source: item.source,
        title: item.title,
        section: item.section,
        version: item.version,
        quote: item.quote,
    }
}

fn event_view(event: ConversationEvent) -> ConversationEventView {
    ConversationEventView {
        seq: event.seq,
        turn: event.turn,
        agent: event.agent,
        kind: event.kind,
        at: event.at,
        event: event.event,
    }
}

fn open_error(error: OpenConversationError) -> ApiError {
    let message = error.to_string();
    match error {
        OpenConversationError::CustomerRequired | OpenConversationError::InvalidCustomerId => {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message)
        }
        OpenConversationError::UnknownCustomer(_) => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_customer",
            message,
        ),
        OpenConversationError::NotAllowed => ApiError::forbidden("forbidden", &message),
        OpenConversationError::Storage(error) => ApiError::internal(&error),
    }
}

pub(super) fn chat_error(error: ChatError) -> ApiError {
    let message = error.to_string();
    match error {
        ChatError::InvalidMessage(_) => {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message)
        }
        ChatError::NotFound(_) => ApiError::new(StatusCode::NOT_FOUND, "not_found", message),
        ChatError::ReadOnly(_) => ApiError::forbidden("forbidden", &message),
        ChatError::TurnInProgress(_) => {
            ApiError::new(StatusCode::CONFLICT, "turn_in_progress", message)
        }
        ChatError::NoTurnRunning(_) => ApiError::new(StatusCode::CONFLICT, "not_running", message),
        ChatError::ClaimLost(_) => ApiError::new(StatusCode::CONFLICT, "conflict", message),
        ChatError::ModelFailed { agent, kind, .. } => {
            // The provider's own message may name internal hosts: log it, send the kind.
            tracing::warn!(%agent, %kind, error = %message, "chat turn: the model failed");
            ApiError::new(
                StatusCode::BAD_GATEWAY,
                "model_failed",
                format!(
                    "the model could not answer ({kind}); your message was kept and nothing else was done — try again"
                ),
            )
        }
        ChatError::Corrupt(_) | ChatError::Interrupted => ApiError::internal(&message),
        ChatError::Storage(storage::StorageError::Unavailable(reason)) => {
            tracing::error!(%reason, "chat: database unavailable");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "the database is unavailable; try again shortly",
            )
        }
        ChatError::Storage(error) => ApiError::internal(&error),
    }
}
