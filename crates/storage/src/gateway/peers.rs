//! Where each peer group is reached: its A2A endpoint, set by an admin.

use crate::error::StorageError;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, EntityTrait, QueryOrder, Set};

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gateway_peers")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub group_name: String,
        pub url: String,
        pub updated_by: String,
        pub updated_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A peer group and its endpoint.
pub type Peer = entity::Model;

/// Sets (or moves) where `peer.group_name` is reached.
///
/// # Errors
/// Database failures.
pub async fn set(db: &impl ConnectionTrait, peer: Peer) -> Result<(), StorageError> {
    entity::Entity::insert(entity::ActiveModel {
        group_name: Set(peer.group_name),
        url: Set(peer.url),
        updated_by: Set(peer.updated_by),
        updated_at: Set(peer.updated_at),
    })
    .on_conflict(
        OnConflict::column(entity::Column::GroupName)
            .update_columns([
                entity::Column::Url,
                entity::Column::UpdatedBy,
                entity::Column::UpdatedAt,
            ])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// Where `group` is reached, if an admin said.
///
/// # Errors
/// Database failures.
pub async fn get(db: &impl ConnectionTrait, group: &str) -> Result<Option<Peer>, StorageError> {
    Ok(entity::Entity::find_by_id(group).one(db).await?)
}

/// Every peer, by name.
///
/// # Errors
/// Database failures.
pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<Peer>, StorageError> {
    Ok(entity::Entity::find()
        .order_by_asc(entity::Column::GroupName)
        .all(db)
        .await?)
}
