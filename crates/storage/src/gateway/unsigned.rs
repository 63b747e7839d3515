//! Pairs allowed without envelope signatures (a plain A2A peer): for a pair
//! from this group, the peer's answers are taken unsigned and marked so.

use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gateway_unsigned_pairs")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub from_group: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub to_group: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub kind: String,
        pub allowed_by: String,
        pub allowed_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A pair allowed without signatures, as stored.
pub type UnsignedPair = entity::Model;

/// Allows `(from, to, kind)` without signatures. Returns false when it was
/// allowed so already.
///
/// # Errors
/// Database failures.
pub async fn allow(
    db: &impl ConnectionTrait,
    from: &str,
    to: &str,
    kind: &str,
    by: &str,
    at: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let written = entity::Entity::insert(entity::ActiveModel {
        from_group: Set(from.to_owned()),
        to_group: Set(to.to_owned()),
        kind: Set(kind.to_owned()),
        allowed_by: Set(by.to_owned()),
        allowed_at: Set(at),
    })
    .on_conflict(OnConflict::new().do_nothing().to_owned())
    .exec_without_returning(db)
    .await?;
    Ok(written == 1)
}

/// Requires signatures on `(from, to, kind)` again. Returns false when it
/// was not allowed without them.
///
/// # Errors
/// Database failures.
pub async fn withdraw(
    db: &impl ConnectionTrait,
    from: &str,
    to: &str,
    kind: &str,
) -> Result<bool, StorageError> {
    let deleted = entity::Entity::delete_many()
        .filter(entity::Column::FromGroup.eq(from))
        .filter(entity::Column::ToGroup.eq(to))
        .filter(entity::Column::Kind.eq(kind))
        .exec(db)
        .await?;
    Ok(deleted.rows_affected == 1)
}

/// Every pair allowed without signatures.
///
/// # Errors
/// Database failures.
pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<UnsignedPair>, StorageError> {
    Ok(entity::Entity::find()
        .order_by_asc(entity::Column::FromGroup)
        .order_by_asc(entity::Column::ToGroup)
        .order_by_asc(entity::Column::Kind)
        .all(db)
        .await?)
}

/// Whether `(from, to, kind)` is allowed without signatures.
///
/// # Errors
/// Database failures.
pub async fn allows(
    db: &impl ConnectionTrait,
    from: &str,
    to: &str,
    kind: &str,
) -> Result<bool, StorageError> {
    Ok(
        entity::Entity::find_by_id((from.to_owned(), to.to_owned(), kind.to_owned()))
            .one(db)
            .await?
            .is_some(),
    )
}
