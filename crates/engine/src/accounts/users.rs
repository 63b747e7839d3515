//! Creating, listing and disabling users.

use super::passwords::{PasswordError, hash_password};
use domain::{RoleSet, Timestamp, UserName, UserNameError};
use storage::users::{NewUser, UserRecord};
use storage::{Database, StorageError, ids::new_id};

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error(transparent)]
    InvalidName(#[from] UserNameError),
    #[error(transparent)]
    InvalidPassword(#[from] PasswordError),
    #[error("a user named {0:?} already exists")]
    NameTaken(String),
    #[error("no user named {0:?}")]
    NoSuchUser(String),
    #[error("a user needs at least one role")]
    NoRoles,
    #[error("display name must be 1 to 200 characters")]
    InvalidDisplayName,
    #[error(transparent)]
    Storage(StorageError),
}

impl From<StorageError> for AccountError {
    fn from(err: StorageError) -> Self {
        AccountError::Storage(err)
    }
}

pub struct CreateUser<'a> {
    pub name: &'a str,
    pub display_name: Option<&'a str>,
    pub password: &'a str,
    pub roles: RoleSet,
}

/// # Errors
/// [`AccountError`] for invalid input or a taken name.
pub async fn create_user(
    db: &Database,
    input: CreateUser<'_>,
    now: Timestamp,
) -> Result<UserRecord, AccountError> {
    let name = UserName::parse(input.name)?;
    if input.roles.is_empty() {
        return Err(AccountError::NoRoles);
    }
    let display_name = input.display_name.unwrap_or(name.as_str()).trim();
    if display_name.is_empty() || display_name.chars().count() > 200 {
        return Err(AccountError::InvalidDisplayName);
    }
    let password_hash = hash_password(input.password)?;
    let id = new_id("usr");
    let tx = db.begin_write().await?;
    storage::users::insert(
        &*tx,
        NewUser {
            id: &id,
            name: name.as_str(),
            display_name,
            password_hash: &password_hash,
            roles: &input.roles,
            now,
        },
    )
    .await
    .map_err(|e| match e {
        StorageError::Conflict { .. } => AccountError::NameTaken(name.to_string()),
        other => AccountError::Storage(other),
    })?;
    tx.commit().await?;
    storage::users::find_by_id(db.conn(), &id)
        .await?
        .ok_or(AccountError::NoSuchUser(name.to_string()))
}

/// Disables a user and ends all of their sessions at once.
///
/// # Errors
/// [`AccountError::NoSuchUser`].
pub async fn disable_user(db: &Database, name: &str, now: Timestamp) -> Result<(), AccountError> {
    let user = find(db, name).await?;
    let tx = db.begin_write().await?;
    storage::users::disable(&*tx, &user.id, now).await?;
    tx.commit().await?;
    Ok(())
}

/// Lets a disabled user sign in again.
///
/// # Errors
/// [`AccountError::NoSuchUser`].
pub async fn enable_user(db: &Database, name: &str) -> Result<(), AccountError> {
    let user = find(db, name).await?;
    let tx = db.begin_write().await?;
    storage::users::enable(&*tx, &user.id).await?;
    tx.commit().await?;
    Ok(())
}

/// Replaces a user's roles; the next request they make already has only
/// these (roles are read with the session, not stored in it).
///
/// # Errors
/// [`AccountError::NoSuchUser`], [`AccountError::NoRoles`].
pub async fn set_user_roles(
    db: &Database,
    name: &str,
    roles: &RoleSet,
) -> Result<(), AccountError> {
    if roles.is_empty() {
        return Err(AccountError::NoRoles);
    }
    let user = find(db, name).await?;
    let tx = db.begin_write().await?;
    storage::users::set_roles(&*tx, &user.id, roles).await?;
    tx.commit().await?;
    Ok(())
}

async fn find(db: &Database, name: &str) -> Result<storage::users::UserRecord, AccountError> {
    let name = UserName::parse(name)?;
    storage::users::find_by_name(db.conn(), name.as_str())
        .await?
        .ok_or_else(|| AccountError::NoSuchUser(name.to_string()))
}
