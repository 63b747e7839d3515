//! Proposals: immutable content and the current state, moved only by
//! conditional updates on the state version.

use crate::bulk;
use crate::entities::proposal;
use crate::error::StorageError;
use crate::many::one_of;
use chrono::{DateTime, Utc};
use domain::proposal::{ProposalState, ProposalStatus, RefundProposal};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Select, SelectModel, Selector, Set,
};
use sea_orm::{DbBackend, Statement};
use std::collections::{HashMap, HashSet};

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
        submitted_by: Set(proposal
            .provenance
            .submitted_by
            .as_ref()
            .map(|s| s.user_id.clone())),
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
    stored_columns(proposal::Entity::find_by_id(id.to_owned()))
        .one(db)
        .await?
        .map(decode)
        .transpose()
}

/// Several proposals by id in one query; missing ids are absent.
///
/// # Errors
/// Database failures or stored JSON that no longer parses.
pub async fn get_many(
    db: &impl ConnectionTrait,
    ids: &[String],
) -> Result<HashMap<String, StoredProposal>, StorageError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    stored_columns(proposal::Entity::find().filter(one_of(
        db.get_database_backend(),
        proposal::Column::Id,
        ids,
    )))
    .all(db)
    .await?
    .into_iter()
    .map(|row| decode(row).map(|stored| (stored.proposal.id.clone(), stored)))
    .collect()
}

/// Several proposals by id in one query, in the order of `ids` (a page's
/// order, found by a query that reads ids only); ids with no proposal are
/// left out, and a repeated id appears once, at its first place.
///
/// # Errors
/// Database failures or stored JSON that no longer parses.
pub async fn get_many_in_order(
    db: &impl ConnectionTrait,
    ids: &[String],
) -> Result<Vec<StoredProposal>, StorageError> {
    let mut found = get_many(db, ids).await?;
    Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
}

/// A proposal's next state, to be written only if its state is still at
/// `expected_version`.
#[derive(Debug, Clone)]
pub struct StateUpdate {
    pub id: String,
    pub expected_version: i64,
    pub state: ProposalState,
    pub due_at: Option<DateTime<Utc>>,
    pub now: DateTime<Utc>,
}

/// Moves each proposal (distinct ids) to its new state if nobody moved it
/// since its `expected_version` was read, all in one statement; returns the
/// ids that moved (the others lost a race and must be re-read).
///
/// # Errors
/// Database failures.
pub async fn update_states(
    db: &impl ConnectionTrait,
    updates: &[StateUpdate],
) -> Result<HashSet<String>, StorageError> {
    if updates.is_empty() {
        return Ok(HashSet::new());
    }
    let backend = db.get_database_backend();
    // A conditional update per row, in one statement: each id is paired
    // with the version its writer read.
    let (rows, values) = if backend == DbBackend::Postgres {
        // One JSON parameter, so the statement text is the same for every
        // batch size (see `crate::bulk`).
        let mut json = bulk::JsonRows::new();
        for update in updates {
            json.row();
            json.field("id", &update.id)?;
            json.field("expected", &update.expected_version)?;
            json.field("status", update.state.status().as_str())?;
            json.field("state", &to_json(&update.state)?)?;
            json.field("updated_at", &bulk::json_time(&update.now))?;
            json.field("due_at", &update.due_at.as_ref().map(bulk::json_time))?;
        }
        (
            "SELECT * FROM json_to_recordset($1::json) AS r(id text, expected bigint, \
             status text, state text, updated_at timestamptz, due_at timestamptz)"
                .to_owned(),
            vec![json.finish()?],
        )
    } else {
        let mut values: Vec<sea_orm::Value> = Vec::with_capacity(updates.len() * 6);
        for update in updates {
            values.extend([
                update.id.clone().into(),
                update.expected_version.into(),
                update.state.status().as_str().into(),
                to_json(&update.state)?.into(),
                update.now.into(),
                update.due_at.into(),
            ]);
        }
        let rows = vec!["(?, ?, ?, ?, ?, ?)"; updates.len()].join(", ");
        (format!("VALUES {rows}"), values)
    };
    let sql = format!(
        "WITH v(id, expected, status, state, updated_at, due_at) AS ({rows}) \
         UPDATE proposals AS p SET status = v.status, state = v.state, \
         state_version = v.expected + 1, updated_at = v.updated_at, due_at = v.due_at \
         FROM v WHERE p.id = v.id AND p.state_version = v.expected RETURNING {returned}",
        // SQLite's RETURNING sees only the updated table and takes no alias.
        returned = if backend == DbBackend::Postgres {
            "p.id"
        } else {
            "id"
        },
    );
    let moved = db
        .query_all(Statement::from_sql_and_values(backend, sql, values))
        .await?;
    moved
        .iter()
        .map(|row| {
            row.try_get_by_index::<String>(0)
                .map_err(StorageError::from)
        })
        .collect()
}

/// How many proposals `submitter` submitted after `since`, and the time
/// of the oldest of them (which decides when the window frees a slot).
///
/// # Errors
/// Database failures.
pub async fn submitted_since(
    db: &impl ConnectionTrait,
    submitter: &str,
    since: DateTime<Utc>,
) -> Result<(u64, Option<DateTime<Utc>>), StorageError> {
    let query = proposal::Entity::find()
        .filter(proposal::Column::SubmittedBy.eq(submitter))
        .filter(proposal::Column::CreatedAt.gt(since));
    let count = query.clone().count(db).await?;
    let oldest = query
        .select_only()
        .column(proposal::Column::CreatedAt)
        .order_by_asc(proposal::Column::CreatedAt)
        .into_tuple::<DateTime<Utc>>()
        .one(db)
        .await?;
    Ok((count, oldest))
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
    let query = query
        .order_by_asc(proposal::Column::Id)
        .limit(crate::error::bindable(limit, "limit")?)
        .offset(crate::error::bindable(offset, "offset")?);
    stored_columns(query)
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

/// How many proposals are in each status, in one grouped query (statuses
/// with none are absent).
///
/// # Errors
/// Database failures.
pub async fn count_by_status(
    db: &impl ConnectionTrait,
) -> Result<Vec<(String, i64)>, StorageError> {
    Ok(proposal::Entity::find()
        .select_only()
        .column(proposal::Column::Status)
        .column_as(proposal::Column::Id.count(), "proposals")
        .group_by(proposal::Column::Status)
        .into_tuple::<(String, i64)>()
        .all(db)
        .await?)
}

/// The states of proposals whose refund may or may not have happened: an
/// outcome unknown, or executing past the lease (the process sending it
/// stopped before recording the answer).
///
/// # Errors
/// Database failures; a state that does not decode.
pub async fn unresolved_outcomes(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<Vec<ProposalState>, StorageError> {
    let states: Vec<(String, String)> = proposal::Entity::find()
        .select_only()
        .column(proposal::Column::Id)
        .column(proposal::Column::State)
        .filter(
            proposal::Column::Status
                .eq(ProposalStatus::OutcomeUnknown.as_str())
                .or(proposal::Column::Status
                    .eq(ProposalStatus::Executing.as_str())
                    .and(proposal::Column::DueAt.lte(now))),
        )
        .into_tuple()
        .all(db)
        .await?;
    states
        .into_iter()
        .map(|(id, state)| {
            serde_json::from_str(&state)
                .map_err(|e| StorageError::Corrupt(format!("proposal {id} state: {e}")))
        })
        .collect()
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
        .limit(crate::error::bindable(limit, "limit")?)
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
    Ok(in_flight_on_orders(db, &[order_id.to_owned()])
        .await?
        .reserved(order_id, excluding))
}

/// One proposal on an order, as the per-order checks read it.
struct OnOrder {
    order_id: String,
    id: String,
    amount_minor: i64,
    /// As stored; a status this build does not know is `None`.
    status: Option<ProposalStatus>,
}

/// Every proposal on these orders, by id, read by the order index. Callers
/// filter by status in code: given `status IN (…)` next to the order ids,
/// SQLite without statistics walked the status index through every waiting
/// or executing proposal, reading each row to compare its order (10 ms per
/// queue page with 10,000 waiting), where an order has a handful.
async fn on_orders(
    db: &impl ConnectionTrait,
    order_ids: &[String],
) -> Result<Vec<OnOrder>, StorageError> {
    if order_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<(String, String, i64, String)> = proposal::Entity::find()
        .select_only()
        .column(proposal::Column::OrderId)
        .column(proposal::Column::Id)
        .column(proposal::Column::AmountMinor)
        .column(proposal::Column::Status)
        .filter(one_of(
            db.get_database_backend(),
            proposal::Column::OrderId,
            order_ids,
        ))
        .order_by_asc(proposal::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(order_id, id, amount_minor, status)| OnOrder {
            order_id,
            id,
            amount_minor,
            status: status.parse().ok(),
        })
        .collect())
}

/// The in-flight proposals (executing, outcome unknown, needing attention)
/// on several orders, read in one query: their refunds may be on the way
/// and are not yet booked on the orders.
///
/// # Errors
/// Database failures.
pub async fn in_flight_on_orders(
    db: &impl ConnectionTrait,
    order_ids: &[String],
) -> Result<InFlight, StorageError> {
    let in_flight = [
        ProposalStatus::Executing,
        ProposalStatus::OutcomeUnknown,
        ProposalStatus::NeedsAttention,
    ];
    Ok(InFlight(
        on_orders(db, order_ids)
            .await?
            .into_iter()
            .filter(|p| p.status.is_some_and(|s| in_flight.contains(&s)))
            .map(|p| (p.order_id, p.id, p.amount_minor))
            .collect(),
    ))
}

/// Live proposals (not yet in a final state) on several orders, in one
/// query, as (order id, proposal id): what the review queue marks when an
/// order has more than one.
///
/// # Errors
/// Database failures.
pub async fn live_on_orders(
    db: &impl ConnectionTrait,
    order_ids: &[String],
) -> Result<Vec<(String, String)>, StorageError> {
    Ok(on_orders(db, order_ids)
        .await?
        .into_iter()
        // A status this build does not know counts as live: better a
        // warning too many than a live proposal unmentioned.
        .filter(|p| p.status.is_none_or(|s| !s.is_terminal()))
        .map(|p| (p.order_id, p.id))
        .collect())
}

/// In-flight proposals as (order id, proposal id, amount in minor units).
#[derive(Debug, Clone, Default)]
pub struct InFlight(Vec<(String, String, i64)>);

impl InFlight {
    /// What other proposals than `excluding` hold on the order.
    pub fn reserved(&self, order_id: &str, excluding: &str) -> i64 {
        self.0
            .iter()
            .filter(|(order, id, _)| order == order_id && id != excluding)
            .map(|(_, _, amount)| amount)
            .sum()
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StorageError> {
    serde_json::to_string(value).map_err(|e| StorageError::Corrupt(e.to_string()))
}

/// The columns a [`StoredProposal`] is decoded from. The rest of the row
/// repeats what `content` holds, for queries to filter and sort on; reading
/// it too would copy and decode every one of those columns for nothing.
#[derive(FromQueryResult)]
struct StoredRow {
    id: String,
    content: String,
    state: String,
    state_version: i64,
    updated_at: DateTime<Utc>,
}

/// `select` reading only what [`decode`] needs.
fn stored_columns(select: Select<proposal::Entity>) -> Selector<SelectModel<StoredRow>> {
    select
        .select_only()
        .columns([
            proposal::Column::Id,
            proposal::Column::Content,
            proposal::Column::State,
            proposal::Column::StateVersion,
            proposal::Column::UpdatedAt,
        ])
        .into_model::<StoredRow>()
}

fn decode(row: StoredRow) -> Result<StoredProposal, StorageError> {
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

/// Proposals in these statuses, oldest change first (for sweeps that look
/// at each one's state).
///
/// # Errors
/// Database failures or stored JSON that no longer parses.
pub async fn in_status(
    db: &impl ConnectionTrait,
    statuses: &[ProposalStatus],
    limit: u64,
) -> Result<Vec<StoredProposal>, StorageError> {
    let query = proposal::Entity::find()
        .filter(proposal::Column::Status.is_in(statuses.iter().map(|s| s.as_str())))
        .order_by_asc(proposal::Column::UpdatedAt)
        .limit(crate::error::bindable(limit, "limit")?);
    stored_columns(query)
        .all(db)
        .await?
        .into_iter()
        .map(decode)
        .collect()
}
