//! Proposals: immutable content and the current state, moved only by
//! conditional updates on the state version.

use crate::entities::proposal;
use crate::error::StorageError;
use chrono::{DateTime, Utc};
use domain::proposal::{ProposalState, ProposalStatus, RefundProposal};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Set, sea_query::Expr,
};

/// A proposal as stored: content, state, and the version of that state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredProposal {
    pub proposal: RefundProposal,
    pub state: ProposalState,
    pub state_version: i64,
    pub updated_at: DateTime<Utc>,
}

impl StoredProposal {
    pub fn status(&self) -> ProposalStatus {
        self.state.status()
    }
}

/// # Errors
/// [`StorageError::Conflict`] for a duplicate id.
pub async fn insert(
    db: &impl ConnectionTrait,
    proposal: &RefundProposal,
    state: &ProposalState,
    due_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<(), StorageError> {
    proposal::ActiveModel {
        id: Set(proposal.id.clone()),
        kind: Set("refund".to_owned()),
        order_id: Set(proposal.order_id.clone()),
        amount_minor: Set(proposal.amount.amount_minor),
        currency: Set(proposal.amount.currency.code().to_owned()),
        action_digest: Set(proposal.action_digest.clone()),
        content: Set(to_json(proposal)?),
        status: Set(state.status().as_str().to_owned()),
        state: Set(to_json(state)?),
        state_version: Set(1),
        requested_by: Set(proposal.provenance.requested_by.clone()),
        on_behalf_of: Set(proposal.provenance.on_behalf_of.clone()),
        conversation_id: Set(proposal.provenance.conversation_id.clone()),
        supersedes: Set(proposal.supersedes.clone()),
        created_at: Set(proposal.created_at),
        expires_at: Set(proposal.expires_at),
        updated_at: Set(now),
        due_at: Set(due_at),
    }
    .insert(db)
    .await?;
    Ok(())
}

/// # Errors
/// Database failures or stored JSON that no longer parses.
pub async fn get(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<StoredProposal>, StorageError> {
    proposal::Entity::find_by_id(id.to_owned())
        .one(db)
        .await?
        .map(decode)
        .transpose()
}

/// Moves the proposal to `state` if nobody else moved it since
/// `expected_version` was read. Returns false when someone did (the caller
/// lost the race and must re-read).
///
/// # Errors
/// Database failures.
pub async fn update_state(
    db: &impl ConnectionTrait,
    id: &str,
    expected_version: i64,
    state: &ProposalState,
    due_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let result = proposal::Entity::update_many()
        .col_expr(
            proposal::Column::Status,
            Expr::value(state.status().as_str()),
        )
        .col_expr(proposal::Column::State, Expr::value(to_json(state)?))
        .col_expr(
            proposal::Column::StateVersion,
            Expr::value(expected_version + 1),
        )
        .col_expr(proposal::Column::UpdatedAt, Expr::value(now))
        .col_expr(proposal::Column::DueAt, Expr::value(due_at))
        .filter(proposal::Column::Id.eq(id))
        .filter(proposal::Column::StateVersion.eq(expected_version))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Filters for listing proposals.
#[derive(Debug, Clone, Default)]
pub struct ProposalFilter {
    pub statuses: Vec<ProposalStatus>,
    pub order_id: Option<String>,
    pub on_behalf_of: Option<String>,
    pub requested_by: Option<String>,
    pub conversation_id: Option<String>,
}

/// Proposals matching the filter: awaiting ones soonest expiry first,
/// everything else newest first.
///
/// # Errors
/// Database failures.
pub async fn list(
    db: &impl ConnectionTrait,
    filter: &ProposalFilter,
    limit: u64,
    offset: u64,
) -> Result<Vec<StoredProposal>, StorageError> {
    let mut query = proposal::Entity::find();
    if !filter.statuses.is_empty() {
        query = query
            .filter(proposal::Column::Status.is_in(filter.statuses.iter().map(|s| s.as_str())));
    }
    if let Some(v) = &filter.order_id {
        query = query.filter(proposal::Column::OrderId.eq(v.clone()));
    }
    if let Some(v) = &filter.on_behalf_of {
        query = query.filter(proposal::Column::OnBehalfOf.eq(v.clone()));
    }
    if let Some(v) = &filter.requested_by {
        query = query.filter(proposal::Column::RequestedBy.eq(v.clone()));
    }
    if let Some(v) = &filter.conversation_id {
        query = query.filter(proposal::Column::ConversationId.eq(v.clone()));
    }
    let awaiting_only = filter.statuses == [ProposalStatus::AwaitingApproval];
    query = if awaiting_only {
        query.order_by_asc(proposal::Column::ExpiresAt)
    } else {
        query.order_by_desc(proposal::Column::CreatedAt)
    };
    query
        .order_by_asc(proposal::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await?
        .into_iter()
        .map(decode)
        .collect()
}

/// # Errors
/// Database failures.
pub async fn count(db: &impl ConnectionTrait, status: ProposalStatus) -> Result<u64, StorageError> {
    Ok(proposal::Entity::find()
        .filter(proposal::Column::Status.eq(status.as_str()))
        .count(db)
        .await?)
}

/// Ids of proposals in `statuses` whose due time has come (oldest first).
///
/// # Errors
/// Database failures.
pub async fn due(
    db: &impl ConnectionTrait,
    statuses: &[ProposalStatus],
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<String>, StorageError> {
    Ok(proposal::Entity::find()
        .select_only()
        .column(proposal::Column::Id)
        .filter(proposal::Column::Status.is_in(statuses.iter().map(|s| s.as_str())))
        .filter(proposal::Column::DueAt.lte(now))
        .order_by_asc(proposal::Column::DueAt)
        .limit(limit)
        .into_tuple::<String>()
        .all(db)
        .await?)
}

/// Minor units of other proposals on the order whose refund may be on its
/// way (executing, outcome unknown, needing attention) and is therefore not
/// yet booked on the order.
///
/// # Errors
/// Database failures.
pub async fn reserved_on_order(
    db: &impl ConnectionTrait,
    order_id: &str,
    excluding: &str,
) -> Result<i64, StorageError> {
    let in_flight = [
        ProposalStatus::Executing,
        ProposalStatus::OutcomeUnknown,
        ProposalStatus::NeedsAttention,
    ];
    let amounts: Vec<i64> = proposal::Entity::find()
        .select_only()
        .column(proposal::Column::AmountMinor)
        .filter(proposal::Column::OrderId.eq(order_id))
        .filter(proposal::Column::Id.ne(excluding))
        .filter(proposal::Column::Status.is_in(in_flight.iter().map(|s| s.as_str())))
        .into_tuple::<i64>()
        .all(db)
        .await?;
    Ok(amounts.into_iter().sum())
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StorageError> {
    serde_json::to_string(value).map_err(|e| StorageError::Corrupt(e.to_string()))
}

fn decode(row: proposal::Model) -> Result<StoredProposal, StorageError> {
    let proposal: RefundProposal = serde_json::from_str(&row.content)
        .map_err(|e| StorageError::Corrupt(format!("proposal {} content: {e}", row.id)))?;
    let state: ProposalState = serde_json::from_str(&row.state)
        .map_err(|e| StorageError::Corrupt(format!("proposal {} state: {e}", row.id)))?;
    Ok(StoredProposal {
        proposal,
        state,
        state_version: row.state_version,
        updated_at: row.updated_at,
    })
}
