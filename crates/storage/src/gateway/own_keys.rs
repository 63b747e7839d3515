//! This group's own key versions, sealed (see `gateway::key_ring`). A new
//! version and the retirement of the one before are written together, and
//! a version number is taken once: two processes rotating at the same
//! moment make one new version, not two.

use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gateway_own_keys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub group_name: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub key_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub version: i32,
        pub public_key: String,
        pub seal_nonce: String,
        pub sealed: String,
        pub created_at: DateTimeUtc,
        pub retired_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// One stored version of this group's key.
pub type OwnKeyRow = entity::Model;

/// Every version of `group`'s key `key_id`, oldest first.
///
/// # Errors
/// Database failures.
pub async fn versions(
    db: &impl ConnectionTrait,
    group: &str,
    key_id: &str,
) -> Result<Vec<OwnKeyRow>, StorageError> {
    Ok(entity::Entity::find()
        .filter(entity::Column::GroupName.eq(group))
        .filter(entity::Column::KeyId.eq(key_id))
        .order_by_asc(entity::Column::Version)
        .all(db)
        .await?)
}

/// Adds `row` as the newest version and retires every older one at its
/// creation. Returns false (nothing written) when that version exists
/// already: another process made it first.
///
/// # Errors
/// Database failures.
pub async fn add_version(db: &impl ConnectionTrait, row: OwnKeyRow) -> Result<bool, StorageError> {
    let (group, key_id, version, at) = (
        row.group_name.clone(),
        row.key_id.clone(),
        row.version,
        row.created_at,
    );
    let written = entity::Entity::insert(entity::ActiveModel {
        group_name: Set(row.group_name),
        key_id: Set(row.key_id),
        version: Set(row.version),
        public_key: Set(row.public_key),
        seal_nonce: Set(row.seal_nonce),
        sealed: Set(row.sealed),
        created_at: Set(row.created_at),
        retired_at: Set(None),
    })
    .on_conflict(OnConflict::new().do_nothing().to_owned())
    .exec_without_returning(db)
    .await?;
    if written == 0 {
        return Ok(false);
    }
    retire_older(db, &group, &key_id, version, at).await?;
    Ok(true)
}

async fn retire_older(
    db: &impl ConnectionTrait,
    group: &str,
    key_id: &str,
    version: i32,
    at: DateTime<Utc>,
) -> Result<(), StorageError> {
    entity::Entity::update_many()
        .col_expr(entity::Column::RetiredAt, Expr::value(at))
        .filter(entity::Column::GroupName.eq(group))
        .filter(entity::Column::KeyId.eq(key_id))
        .filter(entity::Column::Version.lt(version))
        .filter(entity::Column::RetiredAt.is_null())
        .exec(db)
        .await?;
    Ok(())
}
