//! Receipts: the provider's proof of a refund, persisted with the state that
//! records it.

use crate::entities::receipt;
use crate::error::StorageError;
use domain::proposal::Receipt;
use sea_orm::{ConnectionTrait, EntityTrait, Set, sea_query::OnConflict};

pub use receipt::Model as StoredReceipt;

/// Stores the receipt unless one is already stored for the proposal (a
/// status query after a lost answer finds the same refund again).
///
/// # Errors
/// Database failures.
pub async fn insert_once(
    db: &impl ConnectionTrait,
    proposal_id: &str,
    receipt: &Receipt,
    raw: &serde_json::Value,
) -> Result<(), StorageError> {
    receipt::Entity::insert(receipt::ActiveModel {
        proposal_id: Set(proposal_id.to_owned()),
        provider: Set(receipt.provider.clone()),
        provider_refund_id: Set(receipt.provider_refund_id.clone()),
        amount_minor: Set(receipt.amount.amount_minor),
        currency: Set(receipt.amount.currency.code().to_owned()),
        status: Set(receipt.status.clone()),
        raw: Set(raw.to_string()),
        recorded_at: Set(receipt.recorded_at),
    })
    .on_conflict(
        OnConflict::column(receipt::Column::ProposalId)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
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
