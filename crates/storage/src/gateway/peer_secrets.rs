//! Secrets issued to plain A2A peers, kept as SHA-256 digests: a peer's
//! bearer secret names its group; a revoked one names nobody.

use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gateway_peer_secrets")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub group_name: String,
        pub secret_digest: String,
        pub issued_by: String,
        pub issued_at: DateTimeUtc,
        pub revoked_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A secret as stored (its digest, never the secret).
pub type PeerSecret = entity::Model;

/// Stores a newly issued secret's digest.
///
/// # Errors
/// Database failures.
pub async fn insert(db: &impl ConnectionTrait, secret: PeerSecret) -> Result<(), StorageError> {
    entity::Entity::insert(entity::ActiveModel {
        id: Set(secret.id),
        group_name: Set(secret.group_name),
        secret_digest: Set(secret.secret_digest),
        issued_by: Set(secret.issued_by),
        issued_at: Set(secret.issued_at),
        revoked_at: Set(secret.revoked_at),
    })
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// The group a secret with this digest was issued to, if it is not revoked.
///
/// # Errors
/// Database failures.
pub async fn group_of(
    db: &impl ConnectionTrait,
    digest: &str,
) -> Result<Option<String>, StorageError> {
    Ok(entity::Entity::find()
        .filter(entity::Column::SecretDigest.eq(digest))
        .filter(entity::Column::RevokedAt.is_null())
        .one(db)
        .await?
        .map(|secret| secret.group_name))
}

/// Revokes every live secret of `group` at `at`; how many there were.
///
/// # Errors
/// Database failures.
pub async fn revoke_all(
    db: &impl ConnectionTrait,
    group: &str,
    at: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let revoked = entity::Entity::update_many()
        .col_expr(entity::Column::RevokedAt, Expr::value(at))
        .filter(entity::Column::GroupName.eq(group))
        .filter(entity::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(revoked.rows_affected)
}

/// Every secret issued, live or revoked, newest first.
///
/// # Errors
/// Database failures.
pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<PeerSecret>, StorageError> {
    Ok(entity::Entity::find()
        .order_by_desc(entity::Column::IssuedAt)
        .all(db)
        .await?)
}
