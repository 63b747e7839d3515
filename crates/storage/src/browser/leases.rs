//! Leases on named resources: at most one holder at a time across every
//! process sharing the database. Each step is one statement the database
//! makes atomic, so two replicas racing for a free resource cannot both
//! win; a holder that dies leaves a lease that runs out.

use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "resource_leases")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub resource: String,
        pub holder: String,
        pub until: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// Who holds a resource, and until when.
pub type Lease = entity::Model;

/// Takes `resource` for `holder` until `until` when nobody holds it, its
/// lease ran out before `now`, or a holder whose name starts with
/// `successor_of` holds it (an earlier hold of the same process, which the
/// caller knows has ended). True when `holder` holds it afterwards.
///
/// # Errors
/// Database failures.
pub async fn try_acquire(
    db: &impl ConnectionTrait,
    resource: &str,
    holder: &str,
    successor_of: &str,
    until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let inserted = entity::Entity::insert(entity::ActiveModel {
        resource: Set(resource.to_owned()),
        holder: Set(holder.to_owned()),
        until: Set(until),
    })
    .on_conflict(
        OnConflict::column(entity::Column::Resource)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    if inserted == 1 {
        return Ok(true);
    }
    let taken = entity::Entity::update_many()
        .col_expr(entity::Column::Holder, Expr::value(holder))
        .col_expr(entity::Column::Until, Expr::value(until))
        .filter(entity::Column::Resource.eq(resource))
        .filter(
            entity::Column::Until
                .lt(now)
                .or(entity::Column::Holder.starts_with(successor_of)),
        )
        .exec(db)
        .await?;
    Ok(taken.rows_affected == 1)
}

/// Gives `resource` back if `holder` still holds it.
///
/// # Errors
/// Database failures.
pub async fn release(
    db: &impl ConnectionTrait,
    resource: &str,
    holder: &str,
) -> Result<(), StorageError> {
    entity::Entity::delete_many()
        .filter(entity::Column::Resource.eq(resource))
        .filter(entity::Column::Holder.eq(holder))
        .exec(db)
        .await?;
    Ok(())
}

/// The lease on `resource`, if any (it may have run out).
///
/// # Errors
/// Database failures.
pub async fn find(
    db: &impl ConnectionTrait,
    resource: &str,
) -> Result<Option<Lease>, StorageError> {
    Ok(entity::Entity::find_by_id(resource).one(db).await?)
}
