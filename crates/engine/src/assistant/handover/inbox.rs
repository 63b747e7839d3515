//! The staff inbox: conversations waiting for a person or taken over by
//! one, for holders of the roles an admin chose (see
//! `crate::settings::set_inbox_roles`).

use super::{Handover, HandoverError};
use crate::assistant::Chat;
use crate::core::Actor;
use agents::Role as MessageRole;
use domain::{RoleSet, Timestamp};
use serde::Serialize;
use storage::StorageError;

/// The most conversations the inbox lists.
const INBOX_LIMIT: u64 = 200;
/// How much of the customer's last message the inbox shows.
const PREVIEW_CHARS: usize = 160;

/// Where an inbox conversation stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum InboxStatus {
    /// Nobody has taken it yet.
    Waiting,
    /// `person_name` holds it since `since`.
    TakenOver {
        person_id: String,
        person_name: String,
        since: Timestamp,
    },
}

/// One conversation in the inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InboxEntry {
    pub conversation_id: String,
    pub customer_id: String,
    /// The customer's display name.
    pub customer_name: String,
    /// When the customer asked for a person (or a person stepped in).
    pub waiting_since: Timestamp,
    #[serde(flatten)]
    pub status: InboxStatus,
    /// The start of the customer's most recent message.
    pub last_customer_message: Option<String>,
}

impl Chat {
    /// The roles whose holders see the staff inbox.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn inbox_roles(&self) -> Result<RoleSet, StorageError> {
        storage::handovers::inbox_roles(self.db.conn()).await
    }

    /// Whether `actor` sees the staff inbox (never through a widget session).
    ///
    /// # Errors
    /// Storage failures.
    pub async fn may_use_inbox(&self, actor: &Actor) -> Result<bool, StorageError> {
        if actor.widget_session.is_some() {
            return Ok(false);
        }
        let roles: Vec<domain::Role> = self.inbox_roles().await?.iter().collect();
        Ok(actor.roles.any_of(&roles))
    }

    pub(super) async fn require_inbox(&self, actor: &Actor) -> Result<(), HandoverError> {
        if self.may_use_inbox(actor).await? {
            Ok(())
        } else {
            Err(HandoverError::Forbidden(
                "the staff inbox is for the roles an administrator chose; yours is not one of them"
                    .to_owned(),
            ))
        }
    }

    /// Conversations waiting for a person or taken over by one, those
    /// waiting longest first.
    ///
    /// # Errors
    /// [`HandoverError::Forbidden`] without inbox access, storage failures.
    pub async fn inbox(&self, actor: &Actor) -> Result<Vec<InboxEntry>, HandoverError> {
        self.require_inbox(actor).await?;
        let conn = self.db.conn();
        let open = storage::handovers::open(conn, INBOX_LIMIT).await?;
        let mut entries = Vec::with_capacity(open.len());
        for stored in open {
            let Some(conversation) =
                storage::conversations::get(conn, &stored.conversation_id).await?
            else {
                continue;
            };
            let customer = storage::users::find_by_id(conn, &conversation.customer_id).await?;
            let last_customer_message = crate::assistant::chat::decode_state(&conversation)
                .ok()
                .and_then(|state| {
                    state
                        .messages()
                        .iter()
                        .rev()
                        .find(|m| m.role == MessageRole::User)
                        .map(|m| m.content.chars().take(PREVIEW_CHARS).collect())
                });
            let status = match Handover::of(Some(stored.clone())) {
                Handover::TakenOver {
                    since,
                    person_id,
                    person_name,
                    ..
                } => InboxStatus::TakenOver {
                    person_id,
                    person_name,
                    since,
                },
                _ => InboxStatus::Waiting,
            };
            entries.push(InboxEntry {
                conversation_id: conversation.id,
                customer_name: customer
                    .map(|c| c.display_name)
                    .unwrap_or_else(|| conversation.customer_id.clone()),
                customer_id: conversation.customer_id,
                waiting_since: stored.requested_at,
                status,
                last_customer_message,
            });
        }
        Ok(entries)
    }
}
