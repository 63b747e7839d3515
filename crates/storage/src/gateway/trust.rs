//! What this group trusts: the peers' pinned public keys and the allowlist
//! of (from group, to group, task kind). Both are small and read whole.

use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};

mod pinned_key {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gateway_pinned_keys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub group_name: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub key_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub version: i32,
        pub public_key: String,
        pub valid_from: DateTimeUtc,
        pub usable_until: Option<DateTimeUtc>,
        pub pinned_by: String,
        pub pinned_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

mod pair {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gateway_pairs")]
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

/// A pinned key, as stored.
pub type PinnedKeyRow = pinned_key::Model;
/// An allowed (from, to, kind), as stored.
pub type PairRow = pair::Model;

/// What pinning a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pinned {
    New,
    /// The same key was pinned already; nothing changed.
    AlreadyPinned,
    /// This version of the key is pinned with another public key: a key
    /// version never changes, so nothing was written.
    Conflict {
        pinned: PinnedKeyRow,
    },
}

/// Pins `key` unless its (group, key id, version) is pinned already.
///
/// # Errors
/// Database failures.
pub async fn pin_key(db: &impl ConnectionTrait, key: PinnedKeyRow) -> Result<Pinned, StorageError> {
    let written = pinned_key::Entity::insert(pinned_key::ActiveModel {
        group_name: Set(key.group_name.clone()),
        key_id: Set(key.key_id.clone()),
        version: Set(key.version),
        public_key: Set(key.public_key.clone()),
        valid_from: Set(key.valid_from),
        usable_until: Set(key.usable_until),
        pinned_by: Set(key.pinned_by.clone()),
        pinned_at: Set(key.pinned_at),
    })
    .on_conflict(OnConflict::new().do_nothing().to_owned())
    .exec_without_returning(db)
    .await?;
    if written == 1 {
        return Ok(Pinned::New);
    }
    let pinned =
        pinned_key::Entity::find_by_id((key.group_name.clone(), key.key_id.clone(), key.version))
            .one(db)
            .await?
            .ok_or_else(|| {
                StorageError::Corrupt("a pinned key was neither written nor found".into())
            })?;
    Ok(if pinned.public_key == key.public_key {
        Pinned::AlreadyPinned
    } else {
        Pinned::Conflict { pinned }
    })
}

/// Sets until when a pinned key may verify (its retirement plus the
/// overlap). Returns false when no such key is pinned.
///
/// # Errors
/// Database failures.
pub async fn retire_key(
    db: &impl ConnectionTrait,
    group: &str,
    key_id: &str,
    version: i32,
    usable_until: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let updated = pinned_key::Entity::update_many()
        .col_expr(pinned_key::Column::UsableUntil, Expr::value(usable_until))
        .filter(pinned_key::Column::GroupName.eq(group))
        .filter(pinned_key::Column::KeyId.eq(key_id))
        .filter(pinned_key::Column::Version.eq(version))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// Every pinned key.
///
/// # Errors
/// Database failures.
pub async fn pinned_keys(db: &impl ConnectionTrait) -> Result<Vec<PinnedKeyRow>, StorageError> {
    Ok(pinned_key::Entity::find()
        .order_by_asc(pinned_key::Column::GroupName)
        .order_by_asc(pinned_key::Column::KeyId)
        .order_by_asc(pinned_key::Column::Version)
        .all(db)
        .await?)
}

/// Allows `from` to send tasks of `kind` to `to`. Returns false when it
/// was allowed already.
///
/// # Errors
/// Database failures.
pub async fn allow_pair(db: &impl ConnectionTrait, row: PairRow) -> Result<bool, StorageError> {
    let written = pair::Entity::insert(pair::ActiveModel {
        from_group: Set(row.from_group),
        to_group: Set(row.to_group),
        kind: Set(row.kind),
        allowed_by: Set(row.allowed_by),
        allowed_at: Set(row.allowed_at),
    })
    .on_conflict(OnConflict::new().do_nothing().to_owned())
    .exec_without_returning(db)
    .await?;
    Ok(written == 1)
}

/// Withdraws an allowed pair. Returns false when it was not allowed.
///
/// # Errors
/// Database failures.
pub async fn disallow_pair(
    db: &impl ConnectionTrait,
    from: &str,
    to: &str,
    kind: &str,
) -> Result<bool, StorageError> {
    let deleted = pair::Entity::delete_many()
        .filter(pair::Column::FromGroup.eq(from))
        .filter(pair::Column::ToGroup.eq(to))
        .filter(pair::Column::Kind.eq(kind))
        .exec(db)
        .await?;
    Ok(deleted.rows_affected == 1)
}

/// Every allowed pair.
///
/// # Errors
/// Database failures.
pub async fn pairs(db: &impl ConnectionTrait) -> Result<Vec<PairRow>, StorageError> {
    Ok(pair::Entity::find()
        .order_by_asc(pair::Column::FromGroup)
        .order_by_asc(pair::Column::ToGroup)
        .order_by_asc(pair::Column::Kind)
        .all(db)
        .await?)
}
