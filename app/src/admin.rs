//! Administration: users and roles, approver limits, four-eyes thresholds and
//! policy documents. Every function needs the admin role.

use crate::error::AppError;
use domain::RoleSet;
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminUser {
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub roles: RoleSet,
    pub disabled: bool,
    /// `(currency, limit)` for approvers.
    pub limits: Vec<(String, domain::Money)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyInfo {
    pub slug: String,
    pub title: String,
    pub version: String,
    pub created_at: domain::Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminState {
    pub users: Vec<AdminUser>,
    pub eur_threshold: domain::Money,
    pub policies: Vec<PolicyInfo>,
}

#[cfg(feature = "ssr")]
mod backend {
    use crate::error::AppError;
    use crate::server;

    pub fn invalid(message: impl ToString) -> AppError {
        server::fail(AppError::Invalid(message.to_string()))
    }

    pub fn currency(code: &str) -> Result<domain::Currency, AppError> {
        domain::Currency::parse(code.trim()).map_err(invalid)
    }
}

#[server(prefix = "/fn", endpoint = "admin_overview", input = server_fn::codec::GetUrl)]
pub async fn admin_overview() -> Result<AdminState, AppError> {
    use crate::server;
    let (ctx, _) = server::require_admin()?;
    let conn = ctx.db.conn();
    let mut users = Vec::new();
    for user in storage::users::list(conn)
        .await
        .map_err(|e| server::internal(&e))?
    {
        let mut limits = Vec::new();
        if user.roles.contains(domain::Role::Approver) {
            let limit = storage::limits::approval_limit(conn, &user.id, "EUR")
                .await
                .map_err(|e| server::internal(&e))?
                .or(ctx.engine.settings.default_approval_limit_minor);
            if let Some(limit) = limit {
                limits.push((
                    "EUR".to_owned(),
                    domain::Money::new(limit, domain::Currency::EUR),
                ));
            }
        }
        users.push(AdminUser {
            id: user.id,
            name: user.name,
            display_name: user.display_name,
            roles: user.roles,
            disabled: user.disabled,
            limits,
        });
    }
    let threshold = storage::limits::four_eyes_threshold(conn, "EUR")
        .await
        .map_err(|e| server::internal(&e))?
        .unwrap_or(ctx.engine.settings.four_eyes_threshold_minor);
    let policies = storage::policies::current_versions(conn)
        .await
        .map_err(|e| server::internal(&e))?
        .into_iter()
        .map(|(slug, v)| PolicyInfo {
            slug,
            title: v.title,
            version: v.content_hash,
            created_at: v.created_at,
        })
        .collect();
    Ok(AdminState {
        users,
        eur_threshold: domain::Money::new(threshold, domain::Currency::EUR),
        policies,
    })
}

/// Creates a user; `roles` is a comma-separated list.
#[server(prefix = "/fn", endpoint = "admin_create_user")]
pub async fn admin_create_user(
    csrf_token: String,
    name: String,
    display_name: String,
    password: String,
    roles: String,
) -> Result<String, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let (ctx, _) = server::require_admin()?;
    let roles = roles
        .split(',')
        .filter(|r| !r.trim().is_empty())
        .map(|r| r.parse::<domain::Role>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend::invalid)?;
    let display = display_name.trim();
    let user = engine::accounts::create_user(
        &ctx.db,
        engine::accounts::users::CreateUser {
            name: &name,
            display_name: (!display.is_empty()).then_some(display),
            password: &password,
            roles: RoleSet::new(roles),
        },
        engine::now(),
    )
    .await
    .map_err(|e| match e {
        engine::accounts::AccountError::Storage(inner) => server::internal(&inner),
        engine::accounts::AccountError::NameTaken(_) => {
            server::fail(AppError::Conflict(e.to_string()))
        }
        other => backend::invalid(other),
    })?;
    Ok(format!("created {} with roles {}", user.name, user.roles))
}

/// Disables a user and ends all of their sessions.
#[server(prefix = "/fn", endpoint = "admin_disable_user")]
pub async fn admin_disable_user(csrf_token: String, name: String) -> Result<String, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let (ctx, me) = server::require_admin()?;
    if me.name == name.trim().to_lowercase() {
        return Err(backend::invalid("you cannot disable your own account"));
    }
    engine::accounts::disable_user(&ctx.db, &name, engine::now())
        .await
        .map_err(|e| match e {
            engine::accounts::AccountError::Storage(inner) => server::internal(&inner),
            engine::accounts::AccountError::NoSuchUser(_) => {
                server::fail(AppError::NotFound(e.to_string()))
            }
            other => backend::invalid(other),
        })?;
    Ok(format!("disabled {name}; their sessions have ended"))
}

/// Sets an approver's limit, e.g. `250.00` EUR.
#[server(prefix = "/fn", endpoint = "admin_set_limit")]
pub async fn admin_set_limit(
    csrf_token: String,
    user_id: String,
    currency: String,
    amount: String,
) -> Result<String, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let (ctx, _) = server::require_admin()?;
    let currency = backend::currency(&currency)?;
    let limit = domain::Money::parse_decimal(&amount, currency).map_err(backend::invalid)?;
    let user = storage::users::find_by_id(ctx.db.conn(), user_id.trim())
        .await
        .map_err(|e| server::internal(&e))?
        .ok_or_else(|| server::fail(AppError::NotFound("no such user".into())))?;
    if !user.roles.contains(domain::Role::Approver) {
        return Err(backend::invalid(format!(
            "{} is not an approver",
            user.name
        )));
    }
    let tx = ctx
        .db
        .begin_write()
        .await
        .map_err(|e| server::internal(&e))?;
    storage::limits::set_approval_limit(&*tx, &user.id, currency.code(), limit.amount_minor)
        .await
        .map_err(|e| server::internal(&e))?;
    tx.commit().await.map_err(|e| server::internal(&e))?;
    Ok(format!(
        "{} may now approve up to {}",
        user.name,
        limit.display()
    ))
}

/// Sets the amount above which two approvers are needed.
#[server(prefix = "/fn", endpoint = "admin_set_threshold")]
pub async fn admin_set_threshold(
    csrf_token: String,
    currency: String,
    amount: String,
) -> Result<String, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let (ctx, _) = server::require_admin()?;
    let currency = backend::currency(&currency)?;
    let threshold = domain::Money::parse_decimal(&amount, currency).map_err(backend::invalid)?;
    let tx = ctx
        .db
        .begin_write()
        .await
        .map_err(|e| server::internal(&e))?;
    storage::limits::set_four_eyes_threshold(&*tx, currency.code(), threshold.amount_minor)
        .await
        .map_err(|e| server::internal(&e))?;
    tx.commit().await.map_err(|e| server::internal(&e))?;
    Ok(format!(
        "refunds above {} now need two approvers",
        threshold.display()
    ))
}

/// Uploads a policy document; changed content becomes a new version.
#[server(prefix = "/fn", endpoint = "admin_import_policy")]
pub async fn admin_import_policy(
    csrf_token: String,
    slug: String,
    title: String,
    body: String,
) -> Result<String, AppError> {
    use crate::server;
    use storage::policies::ImportOutcome;
    server::check_csrf(&csrf_token)?;
    let (ctx, _) = server::require_admin()?;
    let outcome = ctx
        .engine
        .policies
        .import(slug.trim(), &title, &body)
        .await
        .map_err(|e| match e {
            engine::policies::library::PolicyError::Storage(inner) => server::internal(&inner),
            engine::policies::library::PolicyError::Index(inner) => server::internal(&inner),
            other => backend::invalid(other),
        })?;
    Ok(match outcome {
        ImportOutcome::Created { version } => {
            format!("created {slug} (version {})", &version[..12])
        }
        ImportOutcome::NewVersion { version } => format!("{slug}: new version {}", &version[..12]),
        ImportOutcome::Unchanged { .. } => format!("{slug}: unchanged"),
    })
}
