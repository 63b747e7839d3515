//! Approval records: who decided what about which proposal, under which
//! conditions. Immutable once written.

use crate::bulk::{self, Conflict};
use crate::entities::approval;
use crate::error::StorageError;
use domain::proposal::{Approval, ConditionsSnapshot, Decision};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};

/// # Errors
/// Database failures.
pub async fn insert(db: &impl ConnectionTrait, approval: &Approval) -> Result<(), StorageError> {
    insert_many(db, std::slice::from_ref(approval)).await
}

/// Several approval records in one statement.
///
/// # Errors
/// Database failures, e.g. a duplicate id.
pub async fn insert_many(
    db: &impl ConnectionTrait,
    approvals: &[Approval],
) -> Result<(), StorageError> {
    if approvals.is_empty() {
        return Ok(());
    }
    let rows = approvals
        .iter()
        .map(row_of)
        .collect::<Result<Vec<_>, StorageError>>()?;
    bulk::insert_all(db, rows, Conflict::Fail).await?;
    Ok(())
}

fn row_of(approval: &Approval) -> Result<approval::ActiveModel, StorageError> {
    let (decision, reason) = match &approval.decision {
        Decision::Approve => ("approve", None),
        Decision::Reject { reason } => ("reject", Some(reason.clone())),
    };
    Ok(approval::ActiveModel {
        id: Set(approval.id.clone()),
        proposal_id: Set(approval.proposal_id.clone()),
        approver_id: Set(approval.approver_id.clone()),
        decision: Set(decision.to_owned()),
        reason: Set(reason),
        action_digest_shown: Set(approval.action_digest_shown.clone()),
        conditions: Set(serde_json::to_string(&approval.conditions)
            .map_err(|e| StorageError::Corrupt(e.to_string()))?),
        decided_at: Set(approval.decided_at),
        expires_at: Set(approval.expires_at),
    })
}

/// Every decision on a proposal, oldest first.
///
/// # Errors
/// Database failures or stored JSON that no longer parses.
pub async fn for_proposal(
    db: &impl ConnectionTrait,
    proposal_id: &str,
) -> Result<Vec<Approval>, StorageError> {
    approval::Entity::find()
        .filter(approval::Column::ProposalId.eq(proposal_id))
        .order_by_asc(approval::Column::DecidedAt)
        .order_by_asc(approval::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(|row| {
            let conditions: ConditionsSnapshot = serde_json::from_str(&row.conditions)
                .map_err(|e| StorageError::Corrupt(format!("approval {}: {e}", row.id)))?;
            let decision = match (row.decision.as_str(), row.reason) {
                ("approve", _) => Decision::Approve,
                ("reject", reason) => Decision::Reject {
                    reason: reason.unwrap_or_default(),
                },
                (other, _) => {
                    return Err(StorageError::Corrupt(format!("unknown decision {other:?}")));
                }
            };
            Ok(Approval {
                id: row.id,
                proposal_id: row.proposal_id,
                approver_id: row.approver_id,
                decision,
                action_digest_shown: row.action_digest_shown,
                conditions,
                decided_at: row.decided_at,
                expires_at: row.expires_at,
            })
        })
        .collect()
}
