//! Widget host sites, their public signing keys and widget sessions.

use crate::entities::{widget_key, widget_session, widget_site, widget_site_customer};
use crate::error::StorageError;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, QueryFilter, QueryOrder,
    sea_query::{Expr, Query},
};

pub use widget_key::Model as WidgetKey;
pub use widget_session::Model as WidgetSession;
pub use widget_site::Model as WidgetSite;
pub use widget_site_customer::Model as SiteCustomer;

/// # Errors
/// [`StorageError::Conflict`] when the origin is already registered.
pub async fn insert_site(db: &impl ConnectionTrait, site: &WidgetSite) -> Result<(), StorageError> {
    widget_site::Entity::insert(site.clone().into_active_model())
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// # Errors
/// Database failures.
pub async fn insert_key(db: &impl ConnectionTrait, key: &WidgetKey) -> Result<(), StorageError> {
    widget_key::Entity::insert(key.clone().into_active_model())
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// # Errors
/// Database failures.
pub async fn find_site(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<WidgetSite>, StorageError> {
    Ok(widget_site::Entity::find_by_id(id).one(db).await?)
}

/// # Errors
/// Database failures.
pub async fn find_key(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<WidgetKey>, StorageError> {
    Ok(widget_key::Entity::find_by_id(id).one(db).await?)
}

/// Every site, oldest first.
///
/// # Errors
/// Database failures.
pub async fn list_sites(db: &impl ConnectionTrait) -> Result<Vec<WidgetSite>, StorageError> {
    Ok(widget_site::Entity::find()
        .order_by_asc(widget_site::Column::CreatedAt)
        .order_by_asc(widget_site::Column::Id)
        .all(db)
        .await?)
}

/// Every key of every site, oldest first.
///
/// # Errors
/// Database failures.
pub async fn list_keys(db: &impl ConnectionTrait) -> Result<Vec<WidgetKey>, StorageError> {
    Ok(widget_key::Entity::find()
        .order_by_asc(widget_key::Column::CreatedAt)
        .order_by_asc(widget_key::Column::Id)
        .all(db)
        .await?)
}

/// Revokes a key of a site; false when there is no such unrevoked key.
///
/// # Errors
/// Database failures.
pub async fn revoke_key(
    db: &impl ConnectionTrait,
    site_id: &str,
    key_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let result = widget_key::Entity::update_many()
        .col_expr(widget_key::Column::RevokedAt, Expr::value(now))
        .filter(widget_key::Column::Id.eq(key_id))
        .filter(widget_key::Column::SiteId.eq(site_id))
        .filter(widget_key::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Disables (`Some(now)`) or re-enables (`None`) a site; false when there is
/// no such site.
///
/// # Errors
/// Database failures.
pub async fn set_site_disabled(
    db: &impl ConnectionTrait,
    site_id: &str,
    disabled_at: Option<DateTime<Utc>>,
) -> Result<bool, StorageError> {
    let result = widget_site::Entity::update_many()
        .col_expr(widget_site::Column::DisabledAt, Expr::value(disabled_at))
        .filter(widget_site::Column::Id.eq(site_id))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// # Errors
/// [`StorageError::Conflict`] when the site already has a session for this
/// token id (a replayed token).
pub async fn insert_session(
    db: &impl ConnectionTrait,
    session: &WidgetSession,
) -> Result<(), StorageError> {
    widget_session::Entity::insert(session.clone().into_active_model())
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// The session with this secret hash if it can still be used: not expired,
/// its site not disabled and its key not revoked — one query, since it runs
/// on every widget request.
///
/// # Errors
/// Database failures.
pub async fn find_usable_session(
    db: &impl ConnectionTrait,
    secret_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<WidgetSession>, StorageError> {
    let enabled_sites = Query::select()
        .column(widget_site::Column::Id)
        .from(widget_site::Entity)
        .and_where(widget_site::Column::DisabledAt.is_null())
        .to_owned();
    let live_keys = Query::select()
        .column(widget_key::Column::Id)
        .from(widget_key::Entity)
        .and_where(widget_key::Column::RevokedAt.is_null())
        .to_owned();
    Ok(widget_session::Entity::find()
        .filter(widget_session::Column::SecretHash.eq(secret_hash))
        .filter(widget_session::Column::ExpiresAt.gt(now))
        .filter(widget_session::Column::SiteId.in_subquery(enabled_sites))
        .filter(widget_session::Column::KeyId.in_subquery(live_keys))
        .one(db)
        .await?)
}

/// Deletes sessions that expired before `cutoff`; returns how many.
///
/// # Errors
/// Database failures.
pub async fn delete_expired_sessions(
    db: &impl ConnectionTrait,
    cutoff: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let result = widget_session::Entity::delete_many()
        .filter(widget_session::Column::ExpiresAt.lt(cutoff))
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}

/// Ends every unexpired widget session of a customer (a disabled customer's
/// sessions never come back). The rows stay until they age out, so a host
/// token already used still cannot open a second session.
///
/// # Errors
/// Database failures.
pub async fn end_sessions_of_customer(
    db: &impl ConnectionTrait,
    customer_id: &str,
    now: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let result = widget_session::Entity::update_many()
        .col_expr(widget_session::Column::ExpiresAt, Expr::value(now))
        .filter(widget_session::Column::CustomerId.eq(customer_id))
        .filter(widget_session::Column::ExpiresAt.gt(now))
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}

/// Lets a site sign in a customer; false when it already could.
///
/// # Errors
/// [`StorageError::Conflict`] for an unknown site or user.
pub async fn bind_customer(
    db: &impl ConnectionTrait,
    binding: &SiteCustomer,
) -> Result<bool, StorageError> {
    if is_bound(db, &binding.site_id, &binding.customer_id).await? {
        return Ok(false);
    }
    widget_site_customer::Entity::insert(binding.clone().into_active_model())
        .exec_without_returning(db)
        .await?;
    Ok(true)
}

/// Stops a site signing in a customer; false when it could not anyway.
///
/// # Errors
/// Database failures.
pub async fn unbind_customer(
    db: &impl ConnectionTrait,
    site_id: &str,
    customer_id: &str,
) -> Result<bool, StorageError> {
    let result = widget_site_customer::Entity::delete_many()
        .filter(widget_site_customer::Column::SiteId.eq(site_id))
        .filter(widget_site_customer::Column::CustomerId.eq(customer_id))
        .exec(db)
        .await?;
    Ok(result.rows_affected > 0)
}

/// Whether `site_id` may sign in `customer_id`.
///
/// # Errors
/// Database failures.
pub async fn is_bound(
    db: &impl ConnectionTrait,
    site_id: &str,
    customer_id: &str,
) -> Result<bool, StorageError> {
    Ok(
        widget_site_customer::Entity::find_by_id((site_id.to_owned(), customer_id.to_owned()))
            .one(db)
            .await?
            .is_some(),
    )
}

/// Every site's customers, oldest binding first.
///
/// # Errors
/// Database failures.
pub async fn list_site_customers(
    db: &impl ConnectionTrait,
) -> Result<Vec<SiteCustomer>, StorageError> {
    Ok(widget_site_customer::Entity::find()
        .order_by_asc(widget_site_customer::Column::BoundAt)
        .order_by_asc(widget_site_customer::Column::CustomerId)
        .all(db)
        .await?)
}
