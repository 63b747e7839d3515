//! Administration of the embeddable widget: host sites, the customers each
//! may sign in, their signing keys (the private half shown once), key
//! rotation and revocation. Admins only.

use crate::error::AppError;
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WidgetKeyInfo {
    pub id: String,
    pub public_key: String,
    pub created_at: domain::Timestamp,
    pub revoked: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WidgetSiteInfo {
    pub id: String,
    pub name: String,
    pub origin: String,
    pub disabled: bool,
    /// User names of the customers this site may sign in.
    pub customers: Vec<String>,
    pub keys: Vec<WidgetKeyInfo>,
}

/// A key just made: the only time its private half is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewWidgetKey {
    pub site_id: String,
    pub key_id: String,
    pub private_key_pem: String,
}

#[cfg(feature = "ssr")]
mod backend {
    use crate::error::AppError;
    use crate::server;
    use engine::widget::SiteAdminError;

    pub fn admin() -> Result<(server::ServerContext, engine::Actor), AppError> {
        let (ctx, me) = server::require_admin()?;
        Ok((ctx, me.actor()))
    }

    pub fn error(error: SiteAdminError) -> AppError {
        match error {
            SiteAdminError::Storage(inner) => server::internal(&inner),
            SiteAdminError::KeyGeneration => server::internal(&error),
            SiteAdminError::NotAllowed => server::fail(AppError::Forbidden(error.to_string())),
            SiteAdminError::OriginTaken(_) => server::fail(AppError::Conflict(error.to_string())),
            SiteAdminError::NoSuchSite(_) | SiteAdminError::NoSuchKey { .. } => {
                server::fail(AppError::NotFound(error.to_string()))
            }
            SiteAdminError::InvalidName | SiteAdminError::InvalidOrigin(_) => {
                server::fail(AppError::Invalid(error.to_string()))
            }
        }
    }

    pub fn customer_error(error: engine::widget::SiteCustomerError) -> AppError {
        use engine::widget::SiteCustomerError as E;
        match error {
            E::Storage(inner) => server::internal(&inner),
            E::NotAllowed => server::fail(AppError::Forbidden(error.to_string())),
            E::NoSuchSite(_) | E::NoSuchCustomer(_) | E::NotBound { .. } => {
                server::fail(AppError::NotFound(error.to_string()))
            }
        }
    }

    pub fn shown_once(key: engine::widget::NewSigningKey) -> super::NewWidgetKey {
        super::NewWidgetKey {
            site_id: key.site_id,
            key_id: key.key_id,
            private_key_pem: key.private_key_pem,
        }
    }
}

#[server(prefix = "/fn", endpoint = "admin_widget_sites", input = server_fn::codec::GetUrl)]
pub async fn admin_widget_sites() -> Result<Vec<WidgetSiteInfo>, AppError> {
    let (ctx, _) = backend::admin()?;
    let sites = ctx
        .engine
        .widget
        .list_sites()
        .await
        .map_err(|e| crate::server::internal(&e))?;
    let customers = ctx
        .engine
        .widget
        .list_site_customers()
        .await
        .map_err(|e| crate::server::internal(&e))?;
    Ok(sites
        .into_iter()
        .map(|site| WidgetSiteInfo {
            customers: customers
                .iter()
                .filter(|c| c.site_id == site.id)
                .map(|c| c.customer_name.clone())
                .collect(),
            id: site.id,
            name: site.name,
            origin: site.origin,
            disabled: site.disabled,
            keys: site
                .keys
                .into_iter()
                .map(|key| WidgetKeyInfo {
                    id: key.id,
                    public_key: key.public_key,
                    created_at: key.created_at,
                    revoked: key.revoked_at.is_some(),
                })
                .collect(),
        })
        .collect())
}

/// Registers a host site by name and origin and makes its first key.
#[server(prefix = "/fn", endpoint = "admin_register_widget_site")]
pub async fn admin_register_widget_site(
    csrf_token: String,
    name: String,
    origin: String,
) -> Result<NewWidgetKey, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (ctx, me) = backend::admin()?;
    ctx.engine
        .widget
        .register_site(&me, &name, &origin)
        .await
        .map(backend::shown_once)
        .map_err(backend::error)
}

/// Adds a key to a site, for rotation.
#[server(prefix = "/fn", endpoint = "admin_add_widget_key")]
pub async fn admin_add_widget_key(
    csrf_token: String,
    site_id: String,
) -> Result<NewWidgetKey, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (ctx, me) = backend::admin()?;
    ctx.engine
        .widget
        .add_key(&me, site_id.trim())
        .await
        .map(backend::shown_once)
        .map_err(backend::error)
}

/// Revokes a key: tokens signed with it are refused, its sessions end.
#[server(prefix = "/fn", endpoint = "admin_revoke_widget_key")]
pub async fn admin_revoke_widget_key(
    csrf_token: String,
    site_id: String,
    key_id: String,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (ctx, me) = backend::admin()?;
    ctx.engine
        .widget
        .revoke_key(&me, site_id.trim(), key_id.trim())
        .await
        .map_err(backend::error)?;
    Ok(format!(
        "revoked key {}; its tokens and sessions no longer work",
        key_id.trim()
    ))
}

/// Disables a site (`enabled` = "false") or enables it again.
#[server(prefix = "/fn", endpoint = "admin_set_widget_site_enabled")]
pub async fn admin_set_widget_site_enabled(
    csrf_token: String,
    site_id: String,
    enabled: String,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (ctx, me) = backend::admin()?;
    let enabled = match enabled.as_str() {
        "true" => true,
        "false" => false,
        other => {
            return Err(crate::server::fail(AppError::Invalid(format!(
                "enabled must be true or false, got {other:?}"
            ))));
        }
    };
    ctx.engine
        .widget
        .set_site_enabled(&me, site_id.trim(), enabled)
        .await
        .map_err(backend::error)?;
    Ok(if enabled {
        format!("{} is enabled", site_id.trim())
    } else {
        format!(
            "{} is disabled; its frame, tokens and sessions are refused",
            site_id.trim()
        )
    })
}

/// Lets a site sign in a customer, by user name.
#[server(prefix = "/fn", endpoint = "admin_allow_widget_customer")]
pub async fn admin_allow_widget_customer(
    csrf_token: String,
    site_id: String,
    customer: String,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (ctx, me) = backend::admin()?;
    ctx.engine
        .widget
        .bind_customer(&me, site_id.trim(), &customer)
        .await
        .map_err(backend::customer_error)?;
    Ok(format!(
        "{} may sign in {}",
        site_id.trim(),
        customer.trim()
    ))
}

/// Stops a site signing in a customer; their sessions from it end.
#[server(prefix = "/fn", endpoint = "admin_disallow_widget_customer")]
pub async fn admin_disallow_widget_customer(
    csrf_token: String,
    site_id: String,
    customer: String,
) -> Result<String, AppError> {
    crate::server::check_csrf(&csrf_token)?;
    let (ctx, me) = backend::admin()?;
    ctx.engine
        .widget
        .unbind_customer(&me, site_id.trim(), &customer)
        .await
        .map_err(backend::customer_error)?;
    Ok(format!(
        "{} may no longer sign in {}",
        site_id.trim(),
        customer.trim()
    ))
}
