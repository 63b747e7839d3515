//! Creating, listing and disabling users.

use super::Accounts;
use super::passwords::{PasswordError, hash_password};
use crate::settings::{ChangedBy, record};
use domain::{RoleSet, SettingChange, SettingKind, UserName, UserNameError};
use storage::users::{NewUser, UserRecord};
use storage::{StorageError, ids::new_id};

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
    #[error(
        "display name must be 1 to 200 characters, without control characters or text-direction overrides"
    )]
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
/// A name people read beside money decisions ("approved by …"): 1 to 200
/// characters, none of them a control character (NUL, newlines, which
/// forge lines in logs and CSV exports) or a bidirectional formatting
/// character (which can make "Anna" display as someone else's name).
fn is_plain_display_name(name: &str) -> bool {
    let bidi = |c: char| matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    let count = name.chars().count();
    (1..=200).contains(&count) && !name.chars().any(|c| c.is_control() || bidi(c))
}

impl Accounts {
    /// [`AccountError`] for invalid input or a taken name.
    pub async fn create_user(
        &self,
        by: &ChangedBy,
        input: CreateUser<'_>,
    ) -> Result<UserRecord, AccountError> {
        let (db, now) = (&self.db, self.clock.now());
        let name = UserName::parse(input.name)?;
        if input.roles.is_empty() {
            return Err(AccountError::NoRoles);
        }
        let display_name = input.display_name.unwrap_or(name.as_str()).trim();
        if !is_plain_display_name(display_name) {
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
        let change = SettingChange {
            subject: format!("user:{name}"),
            before: None,
            after: Some(format!("roles {}", input.roles)),
        };
        record(&*tx, by, SettingKind::UserCreated, change, now).await?;
        tx.commit().await?;
        storage::users::find_by_id(db.conn(), &id)
            .await?
            .ok_or(AccountError::NoSuchUser(name.to_string()))
    }

    /// Disables a user and ends all of their sessions at once.
    ///
    /// # Errors
    /// [`AccountError::NoSuchUser`].
    pub async fn disable_user(&self, by: &ChangedBy, name: &str) -> Result<(), AccountError> {
        let (db, now) = (&self.db, self.clock.now());
        let tx = db.begin_write().await?;
        // Read inside the transaction: the journaled "before" is what changed.
        let user = find(&*tx, name).await?;
        storage::users::disable(&*tx, &user.id, now).await?;
        record(
            &*tx,
            by,
            SettingKind::UserDisabled,
            enabled_change(&user, false),
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Lets a disabled user sign in again.
    ///
    /// # Errors
    /// [`AccountError::NoSuchUser`].
    pub async fn enable_user(&self, by: &ChangedBy, name: &str) -> Result<(), AccountError> {
        let (db, now) = (&self.db, self.clock.now());
        let tx = db.begin_write().await?;
        // Read inside the transaction: the journaled "before" is what changed.
        let user = find(&*tx, name).await?;
        storage::users::enable(&*tx, &user.id).await?;
        record(
            &*tx,
            by,
            SettingKind::UserEnabled,
            enabled_change(&user, true),
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Replaces a user's roles; the next request they make already has only
    /// these (roles are read with the session, not stored in it).
    ///
    /// # Errors
    /// [`AccountError::NoSuchUser`], [`AccountError::NoRoles`].
    pub async fn set_user_roles(
        &self,
        by: &ChangedBy,
        name: &str,
        roles: &RoleSet,
    ) -> Result<(), AccountError> {
        let (db, now) = (&self.db, self.clock.now());
        if roles.is_empty() {
            return Err(AccountError::NoRoles);
        }
        let tx = db.begin_write().await?;
        // Read inside the transaction: the journaled "before" is what changed.
        let user = find(&*tx, name).await?;
        storage::users::set_roles(&*tx, &user.id, roles).await?;
        let change = SettingChange {
            subject: format!("user:{}", user.name),
            before: Some(user.roles.to_string()),
            after: Some(roles.to_string()),
        };
        record(&*tx, by, SettingKind::RolesChanged, change, now).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// A user's sign-in state before (as loaded) and after a change.
fn enabled_change(user: &UserRecord, enabled_after: bool) -> SettingChange {
    let state = |enabled: bool| if enabled { "enabled" } else { "disabled" }.to_owned();
    SettingChange {
        subject: format!("user:{}", user.name),
        before: Some(state(!user.disabled)),
        after: Some(state(enabled_after)),
    }
}

async fn find(
    db: &impl storage::ConnectionTrait,
    name: &str,
) -> Result<storage::users::UserRecord, AccountError> {
    let name = UserName::parse(name)?;
    storage::users::find_by_name(db, name.as_str())
        .await?
        .ok_or_else(|| AccountError::NoSuchUser(name.to_string()))
}

#[cfg(test)]
mod display_name_tests {
    use super::is_plain_display_name;

    #[test]
    fn a_display_name_cannot_forge_log_lines_or_reverse_what_an_approver_reads() {
        assert!(is_plain_display_name("Anna Berg"));
        assert!(is_plain_display_name("Zoë Ångström-Łukasz 陈"));
        for forged in [
            "Anna\u{0}",
            "Anna\nsystem: approved",
            "Anna\r",
            "\u{202E}anna",
            "Anna\u{2066}",
            "\u{200F}Anna",
            "",
        ] {
            assert!(!is_plain_display_name(forged), "{forged:?}");
        }
        assert!(!is_plain_display_name(&"a".repeat(201)));
    }
}
