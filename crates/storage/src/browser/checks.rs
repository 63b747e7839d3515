//! Browser checks: what a page said when the browser read it, with the
//! screenshot taken at that moment and its SHA-256, so a citation of it
//! can be checked against the picture later.

use crate::error::StorageError;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, Set};

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "browser_checks")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub order_id: String,
        pub conversation_id: Option<String>,
        pub url: String,
        pub captured_at: DateTimeUtc,
        pub status: String,
        pub delivered_on: Option<String>,
        pub page_text: String,
        pub screenshot_sha256: String,
        pub screenshot: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A browser check as recorded, screenshot included.
pub type BrowserCheck = entity::Model;

/// Records a check.
///
/// # Errors
/// Database failures.
pub async fn record(db: &impl ConnectionTrait, check: BrowserCheck) -> Result<(), StorageError> {
    entity::Entity::insert(entity::ActiveModel {
        id: Set(check.id),
        order_id: Set(check.order_id),
        conversation_id: Set(check.conversation_id),
        url: Set(check.url),
        captured_at: Set(check.captured_at),
        status: Set(check.status),
        delivered_on: Set(check.delivered_on),
        page_text: Set(check.page_text),
        screenshot_sha256: Set(check.screenshot_sha256),
        screenshot: Set(check.screenshot),
    })
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// The check `id`, screenshot included.
///
/// # Errors
/// Database failures.
pub async fn get(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<BrowserCheck>, StorageError> {
    Ok(entity::Entity::find_by_id(id).one(db).await?)
}

/// How many checks of `order_id` are on record (tests and the demo read it).
///
/// # Errors
/// Database failures.
pub async fn count_for_order(
    db: &impl ConnectionTrait,
    order_id: &str,
) -> Result<u64, StorageError> {
    let ids: Vec<String> = entity::Entity::find()
        .select_only()
        .column(entity::Column::Id)
        .filter(entity::Column::OrderId.eq(order_id))
        .into_tuple()
        .all(db)
        .await?;
    Ok(ids.len() as u64)
}
