//! Returned parcels: one per order, with what the inspector found.

use crate::error::StorageError;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, EntityTrait, Set};

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "returned_parcels")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub order_id: String,
        pub received_at: DateTimeUtc,
        pub condition: String,
        pub note: Option<String>,
        pub inspected_by: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A returned parcel as recorded.
pub type Parcel = entity::Model;

/// Records (or corrects) the parcel of `parcel.order_id`.
///
/// # Errors
/// Database failures.
pub async fn record(db: &impl ConnectionTrait, parcel: Parcel) -> Result<(), StorageError> {
    entity::Entity::insert(entity::ActiveModel {
        order_id: Set(parcel.order_id),
        received_at: Set(parcel.received_at),
        condition: Set(parcel.condition),
        note: Set(parcel.note),
        inspected_by: Set(parcel.inspected_by),
    })
    .on_conflict(
        OnConflict::column(entity::Column::OrderId)
            .update_columns([
                entity::Column::ReceivedAt,
                entity::Column::Condition,
                entity::Column::Note,
                entity::Column::InspectedBy,
            ])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// The parcel returned for `order_id`, if one came back.
///
/// # Errors
/// Database failures.
pub async fn find(
    db: &impl ConnectionTrait,
    order_id: &str,
) -> Result<Option<Parcel>, StorageError> {
    Ok(entity::Entity::find_by_id(order_id).one(db).await?)
}
