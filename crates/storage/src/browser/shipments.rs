//! Shipments: the carrier and tracking number an order went out with.

use crate::error::StorageError;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, EntityTrait, Set};

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "shipments")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub order_id: String,
        pub carrier: String,
        pub tracking_number: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// An order's shipment as recorded.
pub type Shipment = entity::Model;

/// Records (or corrects) the shipment of `shipment.order_id`.
///
/// # Errors
/// Database failures.
pub async fn record(db: &impl ConnectionTrait, shipment: Shipment) -> Result<(), StorageError> {
    entity::Entity::insert(entity::ActiveModel {
        order_id: Set(shipment.order_id),
        carrier: Set(shipment.carrier),
        tracking_number: Set(shipment.tracking_number),
    })
    .on_conflict(
        OnConflict::column(entity::Column::OrderId)
            .update_columns([entity::Column::Carrier, entity::Column::TrackingNumber])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// The shipment `order_id` went out with, if one is on record.
///
/// # Errors
/// Database failures.
pub async fn find(
    db: &impl ConnectionTrait,
    order_id: &str,
) -> Result<Option<Shipment>, StorageError> {
    Ok(entity::Entity::find_by_id(order_id).one(db).await?)
}
