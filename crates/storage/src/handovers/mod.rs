//! Handovers to a person: which conversations wait for one or are taken over
//! by one, who spoke for the team in each conversation, and which roles see
//! the staff inbox.
//!
//! A conversation has at most one handover row; it is deleted when the
//! person hands the conversation back (the journal keeps the history).

mod entities;

use crate::error::StorageError;
use chrono::{DateTime, Utc};
use domain::{Role, RoleSet};
use entities::{conversation_handover, conversation_person, inbox_role};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use std::collections::HashSet;

/// `status` while waiting for a person.
pub const REQUESTED: &str = "requested";
/// `status` while a person speaks in the conversation.
pub const TAKEN: &str = "taken";

/// A conversation's handover as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHandover {
    pub conversation_id: String,
    pub status: String,
    pub requested_at: DateTime<Utc>,
    pub person_id: Option<String>,
    pub person_name: Option<String>,
    pub taken_at: Option<DateTime<Utc>>,
}

/// The handover of one conversation, if any.
///
/// # Errors
/// Database failures.
pub async fn get(
    db: &impl ConnectionTrait,
    conversation_id: &str,
) -> Result<Option<StoredHandover>, StorageError> {
    Ok(
        conversation_handover::Entity::find_by_id(conversation_id.to_owned())
            .one(db)
            .await?
            .map(decode),
    )
}

/// Marks the conversation as waiting for a person. Returns false when it
/// already waits for one or is taken over (nothing changes then).
///
/// # Errors
/// Database failures.
pub async fn request(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let inserted = conversation_handover::Entity::insert(conversation_handover::ActiveModel {
        conversation_id: Set(conversation_id.to_owned()),
        status: Set(REQUESTED.to_owned()),
        requested_at: Set(now),
        person_id: Set(None),
        person_name: Set(None),
        taken_at: Set(None),
    })
    .on_conflict(
        OnConflict::column(conversation_handover::Column::ConversationId)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(inserted == 1)
}

/// Gives the conversation to `person_id` unless another person holds it.
/// A conversation nobody asked a person for is taken over as well (staff
/// may step in on their own). Returns the handover as it is afterwards and
/// whether this call took it.
///
/// # Errors
/// Database failures.
pub async fn take(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    person_id: &str,
    person_name: &str,
    now: DateTime<Utc>,
) -> Result<(StoredHandover, bool), StorageError> {
    conversation_handover::Entity::insert(conversation_handover::ActiveModel {
        conversation_id: Set(conversation_id.to_owned()),
        status: Set(REQUESTED.to_owned()),
        requested_at: Set(now),
        person_id: Set(None),
        person_name: Set(None),
        taken_at: Set(None),
    })
    .on_conflict(
        OnConflict::column(conversation_handover::Column::ConversationId)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    let taken = conversation_handover::Entity::update_many()
        .col_expr(conversation_handover::Column::Status, Expr::value(TAKEN))
        .col_expr(
            conversation_handover::Column::PersonId,
            Expr::value(person_id),
        )
        .col_expr(
            conversation_handover::Column::PersonName,
            Expr::value(person_name),
        )
        .col_expr(conversation_handover::Column::TakenAt, Expr::value(now))
        .filter(conversation_handover::Column::ConversationId.eq(conversation_id))
        .filter(conversation_handover::Column::Status.eq(REQUESTED))
        .exec(db)
        .await?;
    let current = get(db, conversation_id)
        .await?
        .ok_or_else(|| StorageError::Corrupt(format!("handover of {conversation_id} vanished")))?;
    Ok((current, taken.rows_affected == 1))
}

/// Ends the handover `person_id` holds. Returns false when they do not
/// hold it (nothing changes then).
///
/// # Errors
/// Database failures.
pub async fn hand_back(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    person_id: &str,
) -> Result<bool, StorageError> {
    let deleted = conversation_handover::Entity::delete_many()
        .filter(conversation_handover::Column::ConversationId.eq(conversation_id))
        .filter(conversation_handover::Column::Status.eq(TAKEN))
        .filter(conversation_handover::Column::PersonId.eq(person_id))
        .exec(db)
        .await?;
    Ok(deleted.rows_affected == 1)
}

/// Every conversation waiting for a person or taken over by one, those
/// waiting longest first.
///
/// # Errors
/// Database failures.
pub async fn open(
    db: &impl ConnectionTrait,
    limit: u64,
) -> Result<Vec<StoredHandover>, StorageError> {
    Ok(conversation_handover::Entity::find()
        .order_by_asc(conversation_handover::Column::RequestedAt)
        .order_by_asc(conversation_handover::Column::ConversationId)
        .limit(crate::error::bindable(limit, "limit")?)
        .all(db)
        .await?
        .into_iter()
        .map(decode)
        .collect())
}

/// Records that `user_id` spoke for the team in the conversation (once).
///
/// # Errors
/// Database failures.
pub async fn record_speaker(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StorageError> {
    conversation_person::Entity::insert(conversation_person::ActiveModel {
        conversation_id: Set(conversation_id.to_owned()),
        user_id: Set(user_id.to_owned()),
        first_spoke_at: Set(now),
    })
    .on_conflict(
        OnConflict::columns([
            conversation_person::Column::ConversationId,
            conversation_person::Column::UserId,
        ])
        .do_nothing()
        .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// Who spoke for the team in any of `conversation_ids`, as
/// `(conversation_id, user_id)` pairs: one statement for a whole batch of
/// approvals.
///
/// # Errors
/// Database failures.
pub async fn people_who_spoke_in(
    db: &impl ConnectionTrait,
    conversation_ids: &[String],
) -> Result<HashSet<(String, String)>, StorageError> {
    if conversation_ids.is_empty() {
        return Ok(HashSet::new());
    }
    Ok(conversation_person::Entity::find()
        .filter(conversation_person::Column::ConversationId.is_in(conversation_ids.iter().cloned()))
        .all(db)
        .await?
        .into_iter()
        .map(|row| (row.conversation_id, row.user_id))
        .collect())
}

/// The roles whose holders see the staff inbox.
///
/// # Errors
/// Database failures; [`StorageError::Corrupt`] for a role this version
/// does not know.
pub async fn inbox_roles(db: &impl ConnectionTrait) -> Result<RoleSet, StorageError> {
    let rows = inbox_role::Entity::find().all(db).await?;
    let roles = rows
        .into_iter()
        .map(|row| {
            row.role
                .parse::<Role>()
                .map_err(|e| StorageError::Corrupt(e.to_string()))
        })
        .collect::<Result<Vec<Role>, _>>()?;
    Ok(RoleSet::new(roles))
}

/// Replaces the roles whose holders see the staff inbox.
///
/// # Errors
/// Database failures.
pub async fn set_inbox_roles(
    db: &impl ConnectionTrait,
    roles: &RoleSet,
) -> Result<(), StorageError> {
    inbox_role::Entity::delete_many().exec(db).await?;
    if roles.iter().next().is_none() {
        return Ok(());
    }
    inbox_role::Entity::insert_many(roles.iter().map(|role| inbox_role::ActiveModel {
        role: Set(role.as_str().to_owned()),
    }))
    .exec(db)
    .await?;
    Ok(())
}

fn decode(row: conversation_handover::Model) -> StoredHandover {
    StoredHandover {
        conversation_id: row.conversation_id,
        status: row.status,
        requested_at: row.requested_at,
        person_id: row.person_id,
        person_name: row.person_name,
        taken_at: row.taken_at,
    }
}
