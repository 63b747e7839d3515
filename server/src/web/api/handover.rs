//! A person takes over a conversation, through the JSON API:
//! `…/conversations/{id}/handover` (read it; the customer asks for a
//! person), `…/takeover`, `…/person-messages` and `…/handback` (staff with
//! inbox access), and `/inbox` (what waits for a person).

use super::Caller;
use super::conversations::chat_error;
use super::extract::{ApiJson, ApiPath};
use super::openapi::ErrorBody;
use crate::startup::AppState;
use crate::web::api_error::ApiError;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use engine::assistant::MAX_MESSAGE_CHARS;
use engine::assistant::handover::{Handover, HandoverError, InboxEntry, InboxStatus};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Where a conversation stands with the team.
#[derive(Debug, Serialize, ToSchema)]
pub struct HandoverView {
    pub conversation_id: String,
    /// `agents` (the agents answer), `waiting` (a person was asked for) or
    /// `taken_over` (a person writes in it; the agents stay silent).
    pub status: String,
    /// Since when it waits or is taken over.
    pub since: Option<DateTime<Utc>>,
    /// The person holding it: the name the customer reads.
    pub person_name: Option<String>,
    pub person_id: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PersonMessageBody {
    /// 1 to 4000 characters, shown to the customer under your display name.
    pub text: String,
}

/// A conversation waiting for a person or taken over by one.
#[derive(Debug, Serialize, ToSchema)]
pub struct InboxEntryView {
    pub conversation_id: String,
    pub customer_id: String,
    pub customer_name: String,
    /// `waiting` or `taken_over`.
    pub status: String,
    pub waiting_since: DateTime<Utc>,
    pub person_name: Option<String>,
    pub taken_over_at: Option<DateTime<Utc>>,
    /// The start of the customer's most recent message.
    pub last_customer_message: Option<String>,
}

/// Where the conversation stands with the team, for whoever may read it.
#[utoipa::path(get, path = "/api/v1/conversations/{id}/handover", tag = "chat",
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 200, body = HandoverView), (status = 404, body = ErrorBody)))]
pub async fn get_handover(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<HandoverView>, ApiError> {
    let handover = state
        .engine
        .chat
        .handover(&identity.actor(), &id)
        .await
        .map_err(chat_error)?;
    Ok(Json(view(id, handover)))
}

/// The customer who opened the conversation asks for a person: it waits in
/// the staff inbox and the agents stay silent until a person hands it back.
/// Asking again changes nothing.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/handover", tag = "chat",
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 200, body = HandoverView), (status = 403, body = ErrorBody, description = "Only the person who opened the conversation may ask"),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "An agent turn is running; wait for its reply")))]
pub async fn request(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<HandoverView>, ApiError> {
    let handover = state
        .engine
        .chat
        .request_person(&identity.actor(), &id)
        .await
        .map_err(handover_error)?;
    Ok(Json(view(id, handover)))
}

/// Take the conversation over (staff with inbox access): the customer reads
/// that you joined; their messages come to you and the agents stay silent.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/takeover", tag = "chat",
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 200, body = HandoverView), (status = 403, body = ErrorBody, description = "Your roles do not open the staff inbox"),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "Another person holds it, or an agent turn is running")))]
pub async fn take_over(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<HandoverView>, ApiError> {
    let handover = state
        .engine
        .chat
        .take_over(&identity.actor(), &id)
        .await
        .map_err(handover_error)?;
    Ok(Json(view(id, handover)))
}

/// Write to the customer in a conversation you took over; they read it
/// under your display name.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/person-messages", tag = "chat", request_body = PersonMessageBody,
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 201, body = HandoverView), (status = 403, body = ErrorBody, description = "Your roles do not open the staff inbox"),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "You have not taken it over, or someone else has"),
        (status = 422, body = ErrorBody)))]
pub async fn person_message(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<PersonMessageBody>,
) -> Result<(StatusCode, Json<HandoverView>), ApiError> {
    let chars = body.text.trim().chars().count();
    if chars == 0 || chars > MAX_MESSAGE_CHARS {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            format!("text must be 1 to {MAX_MESSAGE_CHARS} characters, got {chars}"),
        ));
    }
    let handover = state
        .engine
        .chat
        .person_reply(&identity.actor(), &id, &body.text)
        .await
        .map_err(handover_error)?;
    Ok((StatusCode::CREATED, Json(view(id, handover))))
}

/// Hand the conversation you took over back to the agents; they answer the
/// customer's next message.
#[utoipa::path(post, path = "/api/v1/conversations/{id}/handback", tag = "chat",
    params(("id" = String, Path, description = "The conversation id")),
    responses((status = 200, body = HandoverView), (status = 403, body = ErrorBody, description = "Your roles do not open the staff inbox"),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "You have not taken it over, or someone else has")))]
pub async fn hand_back(
    State(state): State<AppState>,
    Caller(identity): Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<HandoverView>, ApiError> {
    let handover = state
        .engine
        .chat
        .hand_back(&identity.actor(), &id)
        .await
        .map_err(handover_error)?;
    Ok(Json(view(id, handover)))
}

/// Conversations waiting for a person or taken over by one, waiting
/// longest first (the roles an administrator chose).
#[utoipa::path(get, path = "/api/v1/inbox", tag = "chat",
    responses((status = 200, body = [InboxEntryView]), (status = 403, body = ErrorBody, description = "Your roles do not open the staff inbox")))]
pub async fn inbox(
    State(state): State<AppState>,
    Caller(identity): Caller,
) -> Result<Json<Vec<InboxEntryView>>, ApiError> {
    let entries = state
        .engine
        .chat
        .inbox(&identity.actor())
        .await
        .map_err(handover_error)?;
    Ok(Json(entries.into_iter().map(entry_view).collect()))
}

fn view(conversation_id: String, handover: Handover) -> HandoverView {
    let (status, since, person_name, person_id) = match handover {
        Handover::Agents => ("agents", None, None, None),
        Handover::Waiting { since } => ("waiting", Some(since), None, None),
        Handover::TakenOver {
            since,
            person_id,
            person_name,
            ..
        } => (
            "taken_over",
            Some(since),
            Some(person_name),
            Some(person_id),
        ),
    };
    HandoverView {
        conversation_id,
        status: status.to_owned(),
        since,
        person_name,
        person_id,
    }
}

fn entry_view(entry: InboxEntry) -> InboxEntryView {
    let (status, person_name, taken_over_at) = match entry.status {
        InboxStatus::Waiting => ("waiting", None, None),
        InboxStatus::TakenOver {
            person_name, since, ..
        } => ("taken_over", Some(person_name), Some(since)),
    };
    InboxEntryView {
        conversation_id: entry.conversation_id,
        customer_id: entry.customer_id,
        customer_name: entry.customer_name,
        status: status.to_owned(),
        waiting_since: entry.waiting_since,
        person_name,
        taken_over_at,
        last_customer_message: entry.last_customer_message,
    }
}

fn handover_error(error: HandoverError) -> ApiError {
    let message = error.to_string();
    match error {
        HandoverError::Chat(chat) => chat_error(chat),
        HandoverError::Forbidden(_) => ApiError::forbidden("forbidden", &message),
        HandoverError::HeldByAnother { .. } => {
            ApiError::new(StatusCode::CONFLICT, "held_by_another", message)
        }
        HandoverError::NotHeldByYou(_) => ApiError::new(StatusCode::CONFLICT, "not_held", message),
    }
}
