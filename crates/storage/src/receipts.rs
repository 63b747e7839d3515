//! Receipts: the provider's proof of a refund, persisted with the state that
//! records it.

use crate::bulk::{self, Conflict};
use crate::entities::receipt;
use crate::error::StorageError;
use domain::proposal::Receipt;
use sea_orm::{ConnectionTrait, EntityTrait, Set};

pub use receipt::Model as StoredReceipt;

/// A receipt to store for a proposal, with the provider's raw answer.
#[derive(Debug, Clone)]
pub struct NewReceipt {
    pub proposal_id: String,
    pub receipt: Receipt,
    pub raw: serde_json::Value,
}

/// Stores each receipt unless one is already stored for its proposal (a
/// status query after a lost answer finds the same refund again), all in
/// one statement.
///
/// # Errors
/// Database failures.
pub async fn insert_many_once(
    db: &impl ConnectionTrait,
    receipts: &[NewReceipt],
) -> Result<(), StorageError> {
    if receipts.is_empty() {
        return Ok(());
    }
    let rows = receipts.iter().map(|new| receipt::ActiveModel {
        proposal_id: Set(new.proposal_id.clone()),
        provider: Set(new.receipt.provider.clone()),
        provider_refund_id: Set(new.receipt.provider_refund_id.clone()),
        amount_minor: Set(new.receipt.amount.amount_minor),
        currency: Set(new.receipt.amount.currency.code().to_owned()),
        status: Set(new.receipt.status.clone()),
        raw: Set(new.raw.to_string()),
        recorded_at: Set(new.receipt.recorded_at),
    });
    bulk::insert_all(
        db,
        rows.collect(),
        Conflict::Skip(receipt::Column::ProposalId),
    )
    .await?;
    Ok(())
}

/// # Errors
/// Database failures.
pub async fn get(
    db: &impl ConnectionTrait,
    proposal_id: &str,
) -> Result<Option<StoredReceipt>, StorageError> {
    Ok(receipt::Entity::find_by_id(proposal_id.to_owned())
        .one(db)
        .await?)
}
