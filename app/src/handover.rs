//! Server functions for a person taking over a conversation: the customer
//! asks for one; staff with inbox access list what waits, take a
//! conversation over, write in it under their own name and hand it back;
//! admins choose which roles see the inbox. The same engine use cases serve
//! the JSON API (`/api/v1/conversations/{id}/handover`, `/api/v1/inbox`).

use crate::error::AppError;
use domain::{Role, Timestamp};
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

/// Where a conversation stands with the team, as the chat page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum ChatHandover {
    /// The agents answer.
    #[default]
    Agents,
    /// A person was asked for; nobody has joined yet.
    Waiting,
    /// `name` from the team holds the conversation.
    WithPerson { name: String },
}

/// One conversation in the staff inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxItem {
    pub conversation_id: String,
    pub customer_name: String,
    pub waiting_since: Timestamp,
    /// Who holds it, if anyone.
    pub person_name: Option<String>,
    /// The viewer holds it: they may reply and hand it back.
    pub held_by_me: bool,
    pub last_customer_message: Option<String>,
}

/// The inbox page's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxView {
    pub items: Vec<InboxItem>,
    /// The roles that see the inbox now.
    pub roles: Vec<Role>,
    /// The viewer administers, so may change those roles.
    pub can_set_roles: bool,
}

#[cfg(feature = "ssr")]
pub(crate) mod backend {
    use super::*;
    use crate::chat::MessageKind;
    use crate::server::{self, Identity};
    use engine::assistant::handover::{HANDOVER_NOTE, Handover, HandoverError, PERSON_PREFIX};
    use engine::assistant::{ChatError, Message};

    /// A message written outside an agent turn, as the chat shows it: a
    /// person's reply under their name, or a note that someone joined or
    /// left (kind and speaker). `None` for the agents' own messages.
    pub fn outside_turn(message: &Message) -> Option<(MessageKind, String)> {
        let agent = message.agent.as_deref()?;
        if let Some(name) = agent.strip_prefix(PERSON_PREFIX) {
            Some((MessageKind::Person, name.to_owned()))
        } else if agent == HANDOVER_NOTE {
            Some((MessageKind::Note, String::new()))
        } else {
            None
        }
    }

    pub async fn chat_handover(
        ctx: &server::ServerContext,
        me: &Identity,
        id: &str,
    ) -> Result<ChatHandover, AppError> {
        let handover = ctx
            .engine
            .chat
            .handover(&me.actor(), id)
            .await
            .map_err(|e| handover_error(HandoverError::Chat(e)))?;
        Ok(match handover {
            Handover::Agents => ChatHandover::Agents,
            Handover::Waiting { .. } => ChatHandover::Waiting,
            Handover::TakenOver { person_name, .. } => {
                ChatHandover::WithPerson { name: person_name }
            }
        })
    }

    pub fn handover_error(error: HandoverError) -> AppError {
        let message = error.to_string();
        let mapped = match error {
            HandoverError::Forbidden(_) => AppError::Forbidden(message),
            HandoverError::HeldByAnother { .. } | HandoverError::NotHeldByYou(_) => {
                AppError::Conflict(message)
            }
            HandoverError::Chat(chat) => match chat {
                ChatError::InvalidMessage(_) => AppError::Invalid(message),
                ChatError::NotFound(_) => AppError::NotFound(message),
                ChatError::ReadOnly(_) => AppError::Forbidden(message),
                ChatError::TurnInProgress(_)
                | ChatError::NoTurnRunning(_)
                | ChatError::ClaimLost(_) => AppError::Conflict(message),
                ChatError::Storage(inner) => return server::internal(&inner),
                _ => return server::internal(&message),
            },
        };
        server::fail(mapped)
    }
}

/// The customer asks for a person in their conversation.
#[server(prefix = "/fn", endpoint = "request_person")]
pub async fn request_person(csrf_token: String, id: String) -> Result<(), AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_user()?;
    let ctx = server::context()?;
    ctx.engine
        .chat
        .request_person(&me.actor(), id.trim())
        .await
        .map_err(backend::handover_error)?;
    Ok(())
}

/// Conversations waiting for a person or taken over by one.
#[server(prefix = "/fn", endpoint = "staff_inbox", input = server_fn::codec::GetUrl)]
pub async fn staff_inbox() -> Result<InboxView, AppError> {
    use crate::server;
    use engine::assistant::handover::InboxStatus;
    let me = server::require_user()?;
    let ctx = server::context()?;
    let entries = ctx
        .engine
        .chat
        .inbox(&me.actor())
        .await
        .map_err(backend::handover_error)?;
    let roles = ctx
        .engine
        .chat
        .inbox_roles()
        .await
        .map_err(|e| server::internal(&e))?;
    let items = entries
        .into_iter()
        .map(|entry| {
            let (person_name, held_by_me) = match entry.status {
                InboxStatus::Waiting => (None, false),
                InboxStatus::TakenOver {
                    person_id,
                    person_name,
                    ..
                } => (Some(person_name), person_id == me.user_id),
            };
            InboxItem {
                conversation_id: entry.conversation_id,
                customer_name: entry.customer_name,
                waiting_since: entry.waiting_since,
                person_name,
                held_by_me,
                last_customer_message: entry.last_customer_message,
            }
        })
        .collect();
    Ok(InboxView {
        items,
        roles: roles.iter().collect(),
        can_set_roles: me.roles.any_of(crate::access::ADMIN_ROLES),
    })
}

/// Takes a conversation over.
#[server(prefix = "/fn", endpoint = "take_over")]
pub async fn take_over(csrf_token: String, id: String) -> Result<(), AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_user()?;
    let ctx = server::context()?;
    ctx.engine
        .chat
        .take_over(&me.actor(), id.trim())
        .await
        .map_err(backend::handover_error)?;
    Ok(())
}

/// Writes to the customer in a conversation the caller took over.
#[server(prefix = "/fn", endpoint = "person_reply")]
pub async fn person_reply(csrf_token: String, id: String, text: String) -> Result<(), AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_user()?;
    crate::chat::check_message(&text).map_err(server::fail)?;
    let ctx = server::context()?;
    ctx.engine
        .chat
        .person_reply(&me.actor(), id.trim(), &text)
        .await
        .map_err(backend::handover_error)?;
    Ok(())
}

/// Hands a conversation back to the agents.
#[server(prefix = "/fn", endpoint = "hand_back")]
pub async fn hand_back(csrf_token: String, id: String) -> Result<(), AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let me = server::require_user()?;
    let ctx = server::context()?;
    ctx.engine
        .chat
        .hand_back(&me.actor(), id.trim())
        .await
        .map_err(backend::handover_error)?;
    Ok(())
}

/// Chooses which staff roles see the inbox (admins only; journaled).
#[server(prefix = "/fn", endpoint = "set_inbox_roles")]
pub async fn set_inbox_roles(
    csrf_token: String,
    approver: Option<String>,
    manager: Option<String>,
    admin: Option<String>,
) -> Result<String, AppError> {
    use crate::server;
    use engine::settings::InboxRolesError;
    server::check_csrf(&csrf_token)?;
    let (ctx, me) = server::require_admin()?;
    let chosen = [
        (approver, Role::Approver),
        (manager, Role::Manager),
        (admin, Role::Admin),
    ]
    .into_iter()
    .filter_map(|(ticked, role)| ticked.is_some().then_some(role));
    let roles = domain::RoleSet::new(chosen);
    let by = engine::settings::ChangedBy::person(&me.actor());
    let set = ctx
        .engine
        .team_settings
        .set_inbox_roles(&by, &roles)
        .await
        .map_err(|error| match error {
            InboxRolesError::Storage(inner) => server::internal(&inner),
            other => server::fail(AppError::Invalid(other.to_string())),
        })?;
    Ok(format!("the inbox is now for: {}", set))
}
