//! API bearer tokens for machines. Only a SHA-256 of each secret is stored.

use crate::entities::api_token;
use crate::error::StorageError;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
    sea_query::Expr,
};

pub use api_token::Model as ApiToken;

/// # Errors
/// Database failures.
pub async fn insert(
    db: &impl ConnectionTrait,
    id: &str,
    user_id: &str,
    label: &str,
    token_hash: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), StorageError> {
    api_token::ActiveModel {
        id: Set(id.to_owned()),
        user_id: Set(user_id.to_owned()),
        label: Set(label.to_owned()),
        token_hash: Set(token_hash.to_owned()),
        created_at: Set(now),
        last_used_at: Set(None),
        revoked_at: Set(None),
    }
    .insert(db)
    .await?;
    Ok(())
}

/// The unrevoked token with this hash, if any.
///
/// # Errors
/// Database failures.
pub async fn find_active_by_hash(
    db: &impl ConnectionTrait,
    token_hash: &str,
) -> Result<Option<ApiToken>, StorageError> {
    Ok(api_token::Entity::find()
        .filter(api_token::Column::TokenHash.eq(token_hash))
        .filter(api_token::Column::RevokedAt.is_null())
        .one(db)
        .await?)
}

/// # Errors
/// Database failures.
pub async fn touch(
    db: &impl ConnectionTrait,
    id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), StorageError> {
    api_token::Entity::update_many()
        .col_expr(api_token::Column::LastUsedAt, Expr::value(now))
        .filter(api_token::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Revokes a token; false when it does not exist or was already revoked.
///
/// # Errors
/// Database failures.
pub async fn revoke(
    db: &impl ConnectionTrait,
    id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<bool, StorageError> {
    let result = api_token::Entity::update_many()
        .col_expr(api_token::Column::RevokedAt, Expr::value(now))
        .filter(api_token::Column::Id.eq(id))
        .filter(api_token::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Revokes every unrevoked token of a user; returns how many.
///
/// # Errors
/// Database failures.
pub async fn revoke_all_of_user(
    db: &impl ConnectionTrait,
    user_id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<u64, StorageError> {
    let result = api_token::Entity::update_many()
        .col_expr(api_token::Column::RevokedAt, Expr::value(now))
        .filter(api_token::Column::UserId.eq(user_id))
        .filter(api_token::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}

/// # Errors
/// Database failures.
pub async fn list_for_user(
    db: &impl ConnectionTrait,
    user_id: &str,
) -> Result<Vec<ApiToken>, StorageError> {
    Ok(api_token::Entity::find()
        .filter(api_token::Column::UserId.eq(user_id))
        .order_by_asc(api_token::Column::CreatedAt)
        .all(db)
        .await?)
}
