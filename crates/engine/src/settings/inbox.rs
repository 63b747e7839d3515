//! Which roles see the staff inbox, where conversations wait for a person.

use super::{ChangedBy, TeamSettings, record};
use domain::{Role, RoleSet, SettingChange, SettingKind};
use storage::StorageError;

/// The roles the inbox may be opened to: staff only (customers, agents'
/// service accounts and shops never read other customers' conversations).
pub const INBOX_ROLE_CHOICES: [Role; 3] = [Role::Approver, Role::Manager, Role::Admin];

#[derive(Debug, thiserror::Error)]
pub enum InboxRolesError {
    #[error("choose at least one role for the staff inbox")]
    Empty,
    #[error(
        "the staff inbox is for staff; {0} cannot be given it (choose approver, manager or admin)"
    )]
    NotStaff(Role),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl TeamSettings {
    /// Sets the roles whose holders see the staff inbox, and journals the
    /// roles before and after.
    ///
    /// # Errors
    /// [`InboxRolesError::Empty`], [`InboxRolesError::NotStaff`].
    pub async fn set_inbox_roles(
        &self,
        by: &ChangedBy,
        roles: &RoleSet,
    ) -> Result<RoleSet, InboxRolesError> {
        let (db, now) = (&self.db, self.clock.now());
        if roles.iter().next().is_none() {
            return Err(InboxRolesError::Empty);
        }
        if let Some(role) = roles.iter().find(|r| !INBOX_ROLE_CHOICES.contains(r)) {
            return Err(InboxRolesError::NotStaff(role));
        }
        let tx = db.begin_write().await?;
        let before = storage::handovers::inbox_roles(&*tx).await?;
        storage::handovers::set_inbox_roles(&*tx, roles).await?;
        let named = |set: &RoleSet| {
            set.iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let change = SettingChange {
            subject: "inbox".to_owned(),
            before: Some(named(&before)),
            after: Some(named(roles)),
        };
        record(&*tx, by, SettingKind::InboxRolesSet, change, now).await?;
        tx.commit().await?;
        tracing::info!(roles = %named(roles), by = by.journal_name(), "inbox roles set");
        Ok(roles.clone())
    }
}
