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
    /// The limits set for this approver, one per currency.
    pub limits: Vec<domain::Money>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyInfo {
    pub slug: String,
    pub title: String,
    pub version: String,
    pub created_at: domain::Timestamp,
    /// Versions replaced by later uploads, newest first: `(version, since)`.
    pub earlier: Vec<(String, domain::Timestamp)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminState {
    pub users: Vec<AdminUser>,
    /// Four-eyes thresholds set per currency.
    pub thresholds: Vec<domain::Money>,
    /// In minor units of any currency without a threshold of its own.
    pub default_threshold_minor: i64,
    /// In minor units of any currency an approver has no limit for.
    pub default_limit_minor: Option<i64>,
    /// The currencies orders are in, to state those defaults in.
    pub currencies_in_use: Vec<domain::Currency>,
    pub policies: Vec<PolicyInfo>,
}

#[cfg(feature = "ssr")]
pub(crate) mod backend {
    use crate::error::AppError;
    use crate::server;

    pub fn invalid(message: impl ToString) -> AppError {
        server::fail(AppError::Invalid(message.to_string()))
    }

    pub fn currency(code: &str) -> Result<domain::Currency, AppError> {
        domain::Currency::parse(code.trim()).map_err(invalid)
    }

    /// A currency money can be paid in: what limits and thresholds are set for.
    pub fn money_currency(code: &str) -> Result<domain::Currency, AppError> {
        domain::Currency::parse_money(code.trim()).map_err(invalid)
    }

    /// A comma-separated list of roles, e.g. `approver, manager`.
    pub fn roles(list: &str) -> Result<domain::RoleSet, AppError> {
        let roles = list
            .split(',')
            .filter(|r| !r.trim().is_empty())
            .map(|r| r.trim().parse::<domain::Role>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        Ok(domain::RoleSet::new(roles))
    }

    /// The journal's name for the admin making a change.
    pub fn changed_by(me: &server::Identity) -> engine::settings::ChangedBy {
        engine::settings::ChangedBy::person(&me.actor())
    }

    /// How a limit or threshold change that went wrong reaches the admin.
    pub fn limit_error(error: engine::settings::LimitError) -> AppError {
        use engine::settings::LimitError;
        match error {
            LimitError::Storage(inner) => server::internal(&inner),
            LimitError::NoSuchUser => server::fail(AppError::NotFound(error.to_string())),
            LimitError::NotAnApprover(_) => invalid(error),
        }
    }

    /// How an account change that went wrong reaches the admin.
    pub fn account_error(error: engine::accounts::AccountError) -> AppError {
        use engine::accounts::AccountError;
        match error {
            AccountError::Storage(inner) => server::internal(&inner),
            AccountError::NoSuchUser(_) => server::fail(AppError::NotFound(error.to_string())),
            AccountError::NameTaken(_) => server::fail(AppError::Conflict(error.to_string())),
            other => invalid(other),
        }
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
            for (currency, limit) in storage::limits::approval_limits(conn, &user.id)
                .await
                .map_err(|e| server::internal(&e))?
            {
                limits.push(domain::Money::new(limit, backend::currency(&currency)?));
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
    let mut thresholds = Vec::new();
    for (currency, threshold) in storage::limits::four_eyes_thresholds(conn)
        .await
        .map_err(|e| server::internal(&e))?
    {
        thresholds.push(domain::Money::new(threshold, backend::currency(&currency)?));
    }
    let mut policies = Vec::new();
    for (slug, current) in storage::policies::current_versions(conn)
        .await
        .map_err(|e| server::internal(&e))?
    {
        let earlier = storage::policies::history(conn, &slug)
            .await
            .map_err(|e| server::internal(&e))?
            .into_iter()
            .filter(|v| v.content_hash != current.content_hash)
            .map(|v| (v.content_hash, v.created_at))
            .collect();
        policies.push(PolicyInfo {
            slug,
            title: current.title,
            version: current.content_hash,
            created_at: current.created_at,
            earlier,
        });
    }
    let mut currencies_in_use = Vec::new();
    for code in storage::orders::currencies(conn)
        .await
        .map_err(|e| server::internal(&e))?
    {
        currencies_in_use.push(backend::currency(&code)?);
    }
    Ok(AdminState {
        users,
        thresholds,
        currencies_in_use,
        default_threshold_minor: ctx.engine.settings.four_eyes_threshold_minor,
        default_limit_minor: ctx.engine.settings.default_approval_limit_minor,
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
    let (ctx, me) = server::require_admin()?;
    let roles = backend::roles(&roles)?;
    let display = display_name.trim();
    let user = ctx
        .engine
        .accounts
        .create_user(
            &backend::changed_by(&me),
            engine::accounts::CreateUser {
                name: &name,
                display_name: (!display.is_empty()).then_some(display),
                password: &password,
                roles,
            },
        )
        .await
        .map_err(backend::account_error)?;
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
    ctx.engine
        .accounts
        .disable_user(&backend::changed_by(&me), &name)
        .await
        .map_err(backend::account_error)?;
    Ok(format!("disabled {name}; their sessions have ended"))
}

/// Lets a disabled user sign in again.
#[server(prefix = "/fn", endpoint = "admin_enable_user")]
pub async fn admin_enable_user(csrf_token: String, name: String) -> Result<String, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let (ctx, me) = server::require_admin()?;
    ctx.engine
        .accounts
        .enable_user(&backend::changed_by(&me), &name)
        .await
        .map_err(backend::account_error)?;
    Ok(format!("enabled {}; they can sign in again", name.trim()))
}

/// Replaces a user's roles; `roles` is a comma-separated list.
#[server(prefix = "/fn", endpoint = "admin_set_roles")]
pub async fn admin_set_roles(
    csrf_token: String,
    name: String,
    roles: String,
) -> Result<String, AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let (ctx, me) = server::require_admin()?;
    let roles = backend::roles(&roles)?;
    if me.name == name.trim().to_lowercase() && !roles.contains(domain::Role::Admin) {
        return Err(backend::invalid(
            "you cannot remove your own admin role; ask another admin",
        ));
    }
    ctx.engine
        .accounts
        .set_user_roles(&backend::changed_by(&me), &name, &roles)
        .await
        .map_err(backend::account_error)?;
    Ok(format!("{} now has the roles {roles}", name.trim()))
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
    let (ctx, me) = server::require_admin()?;
    let currency = backend::money_currency(&currency)?;
    let limit = domain::Money::parse_decimal(&amount, currency).map_err(backend::invalid)?;
    let user = ctx
        .engine
        .team_settings
        .set_approval_limit(&backend::changed_by(&me), user_id.trim(), limit)
        .await
        .map_err(backend::limit_error)?;
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
    let (ctx, me) = server::require_admin()?;
    let currency = backend::money_currency(&currency)?;
    let threshold = domain::Money::parse_decimal(&amount, currency).map_err(backend::invalid)?;
    ctx.engine
        .team_settings
        .set_four_eyes_threshold(&backend::changed_by(&me), threshold)
        .await
        .map_err(backend::limit_error)?;
    Ok(format!(
        "refunds above {} now need two approvers",
        threshold.display()
    ))
}
