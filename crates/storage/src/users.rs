//! Users and their roles.

use crate::entities::{user, user_role};
use crate::error::StorageError;
use domain::{Role, RoleSet};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
    sea_query::Expr,
};

/// A user with their roles, as the rest of the system sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRecord {
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub password_hash: String,
    pub session_epoch: i64,
    pub disabled: bool,
    pub roles: RoleSet,
}

pub struct NewUser<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub display_name: &'a str,
    pub password_hash: &'a str,
    pub roles: &'a RoleSet,
    pub now: chrono::DateTime<chrono::Utc>,
}

/// # Errors
/// [`StorageError::Conflict`] when the name is taken.
pub async fn insert(db: &impl ConnectionTrait, new: NewUser<'_>) -> Result<(), StorageError> {
    user::ActiveModel {
        id: Set(new.id.to_owned()),
        name: Set(new.name.to_owned()),
        display_name: Set(new.display_name.to_owned()),
        password_hash: Set(new.password_hash.to_owned()),
        session_epoch: Set(0),
        disabled_at: Set(None),
        created_at: Set(new.now),
    }
    .insert(db)
    .await?;
    set_roles(db, new.id, new.roles).await
}

/// Replaces the user's roles.
///
/// # Errors
/// Database failures.
pub async fn set_roles(
    db: &impl ConnectionTrait,
    user_id: &str,
    roles: &RoleSet,
) -> Result<(), StorageError> {
    user_role::Entity::delete_many()
        .filter(user_role::Column::UserId.eq(user_id))
        .exec(db)
        .await?;
    if roles.is_empty() {
        return Ok(());
    }
    user_role::Entity::insert_many(roles.iter().map(|role| user_role::ActiveModel {
        user_id: Set(user_id.to_owned()),
        role: Set(role.as_str().to_owned()),
    }))
    .exec(db)
    .await?;
    Ok(())
}

/// # Errors
/// Database failures or a stored role that no longer parses.
pub async fn find_by_name(
    db: &impl ConnectionTrait,
    name: &str,
) -> Result<Option<UserRecord>, StorageError> {
    let found = user::Entity::find()
        .filter(user::Column::Name.eq(name))
        .find_with_related(user_role::Entity)
        .all(db)
        .await?;
    found.into_iter().next().map(to_record).transpose()
}

/// The login names of the users whose display name is `display_name`,
/// ignoring case (people are known by their names, accounts by logins).
///
/// # Errors
/// Database failures.
pub async fn names_with_display_name(
    db: &impl ConnectionTrait,
    display_name: &str,
) -> Result<Vec<String>, StorageError> {
    use sea_orm::QuerySelect;
    use sea_orm::sea_query::Func;
    Ok(user::Entity::find()
        .select_only()
        .column(user::Column::Name)
        .filter(
            Expr::expr(Func::lower(Expr::col(user::Column::DisplayName)))
                .eq(display_name.trim().to_lowercase()),
        )
        .order_by_asc(user::Column::Name)
        .into_tuple()
        .all(db)
        .await?)
}

/// The display names of the accounts with these logins, in one read (the
/// audit trail names the people behind a page of events).
///
/// # Errors
/// Database failures.
pub async fn display_names(
    db: &impl ConnectionTrait,
    names: &[String],
) -> Result<std::collections::HashMap<String, String>, StorageError> {
    display_names_keyed_by(db, user::Column::Name, names).await
}

/// The display names of the accounts with these ids, in one read (a page
/// of cards names each proposal's customer, a proposal page its
/// approvers); ids with no account are absent.
///
/// # Errors
/// Database failures.
pub async fn display_names_by_id(
    db: &impl ConnectionTrait,
    ids: &[String],
) -> Result<std::collections::HashMap<String, String>, StorageError> {
    display_names_keyed_by(db, user::Column::Id, ids).await
}

async fn display_names_keyed_by(
    db: &impl ConnectionTrait,
    key: user::Column,
    keys: &[String],
) -> Result<std::collections::HashMap<String, String>, StorageError> {
    use sea_orm::QuerySelect;
    if keys.is_empty() {
        return Ok(std::collections::HashMap::new());
    }
    let rows: Vec<(String, String)> = user::Entity::find()
        .select_only()
        .column(key)
        .column(user::Column::DisplayName)
        .filter(key.is_in(keys.iter().cloned()))
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows.into_iter().collect())
}

/// # Errors
/// Database failures or a stored role that no longer parses.
pub async fn find_by_id(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<UserRecord>, StorageError> {
    let found = user::Entity::find_by_id(id.to_owned())
        .find_with_related(user_role::Entity)
        .all(db)
        .await?;
    found.into_iter().next().map(to_record).transpose()
}

/// The account that holds the conversations visitors open before they sign
/// in (created by migration m20261211_000028; disabled, and its name is not
/// a valid user name, so nobody signs in as it). Never listed.
pub const GUEST_ACCOUNT_ID: &str = "usr_visitors_not_signed_in";

/// Every user, by name (not the guest account).
///
/// # Errors
/// Database failures.
pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<UserRecord>, StorageError> {
    user::Entity::find()
        .filter(user::Column::Id.ne(GUEST_ACCOUNT_ID))
        .order_by_asc(user::Column::Name)
        .find_with_related(user_role::Entity)
        .all(db)
        .await?
        .into_iter()
        .map(to_record)
        .collect()
}

/// # Errors
/// Database failures.
pub async fn count(db: &impl ConnectionTrait) -> Result<u64, StorageError> {
    use sea_orm::PaginatorTrait;
    Ok(user::Entity::find()
        .filter(user::Column::Id.ne(GUEST_ACCOUNT_ID))
        .count(db)
        .await?)
}

/// Disables the user and ends every credential they hold, for good: browser
/// sessions (by bumping the epoch each must match), API tokens (revoked) and
/// widget sessions (expired). Enabling the user later lifts only the
/// disable, so nothing issued before it works again. Returns false when no
/// such user exists. Run it inside the caller's transaction, so the disable
/// and the revocations commit together.
///
/// # Errors
/// Database failures.
pub async fn disable(
    db: &impl ConnectionTrait,
    user_id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<bool, StorageError> {
    let result = user::Entity::update_many()
        .col_expr(user::Column::DisabledAt, Expr::value(now))
        .col_expr(
            user::Column::SessionEpoch,
            Expr::col(user::Column::SessionEpoch).add(1),
        )
        .filter(user::Column::Id.eq(user_id))
        .exec(db)
        .await?;
    if result.rows_affected != 1 {
        return Ok(false);
    }
    crate::tokens::revoke_all_of_user(db, user_id, now).await?;
    crate::widget::end_sessions_of_customer(db, user_id, now).await?;
    Ok(true)
}

/// Lets a disabled user sign in again (their old sessions, tokens and widget
/// sessions stay ended: [`disable`] ended them).
/// Returns false when no such user exists.
///
/// # Errors
/// Database failures.
pub async fn enable(db: &impl ConnectionTrait, user_id: &str) -> Result<bool, StorageError> {
    let result = user::Entity::update_many()
        .col_expr(
            user::Column::DisabledAt,
            Expr::value(None::<chrono::DateTime<chrono::Utc>>),
        )
        .filter(user::Column::Id.eq(user_id))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Replaces the password hash and ends every existing session.
///
/// # Errors
/// Database failures.
pub async fn set_password_hash(
    db: &impl ConnectionTrait,
    user_id: &str,
    password_hash: &str,
) -> Result<bool, StorageError> {
    let result = user::Entity::update_many()
        .col_expr(user::Column::PasswordHash, Expr::value(password_hash))
        .col_expr(
            user::Column::SessionEpoch,
            Expr::col(user::Column::SessionEpoch).add(1),
        )
        .filter(user::Column::Id.eq(user_id))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

fn to_record(
    (model, roles): (user::Model, Vec<user_role::Model>),
) -> Result<UserRecord, StorageError> {
    let roles = roles
        .into_iter()
        .map(|r| {
            r.role
                .parse::<Role>()
                .map_err(|e| StorageError::Corrupt(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(UserRecord {
        id: model.id,
        name: model.name,
        display_name: model.display_name,
        password_hash: model.password_hash,
        session_epoch: model.session_epoch,
        disabled: model.disabled_at.is_some(),
        roles: RoleSet::new(roles),
    })
}
