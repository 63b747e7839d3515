//! Approval limits (how much one approver may approve alone) and four-eyes
//! thresholds (above which two approvers are needed).

use super::{ChangedBy, TeamSettings, record};
use domain::{Money, Role, SettingChange, SettingKind};
use storage::StorageError;
use storage::users::UserRecord;

#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    #[error("no such user")]
    NoSuchUser,
    #[error("{0} is not an approver")]
    NotAnApprover(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl TeamSettings {
    /// Sets how much `user_id` may approve in `limit`'s currency, and journals
    /// the limit stored before and after. Returns the approver.
    ///
    /// # Errors
    /// [`LimitError::NoSuchUser`], [`LimitError::NotAnApprover`].
    pub async fn set_approval_limit(
        &self,
        by: &ChangedBy,
        user_id: &str,
        limit: Money,
    ) -> Result<UserRecord, LimitError> {
        let (db, now) = (&self.db, self.clock.now());
        let currency = limit.currency.code();
        let tx = db.begin_write().await?;
        let user = storage::users::find_by_id(&*tx, user_id)
            .await?
            .ok_or(LimitError::NoSuchUser)?;
        if !user.roles.contains(Role::Approver) {
            return Err(LimitError::NotAnApprover(user.name));
        }
        let before = storage::limits::approval_limit(&*tx, &user.id, currency).await?;
        storage::limits::set_approval_limit(&*tx, &user.id, currency, limit.amount_minor).await?;
        let change = SettingChange {
            subject: format!("user:{}", user.name),
            before: before.map(|minor| Money::new(minor, limit.currency).display()),
            after: Some(limit.display()),
        };
        record(&*tx, by, SettingKind::ApprovalLimitSet, change, now).await?;
        tx.commit().await?;
        tracing::info!(user = %user.name, limit = %limit.display(), by = by.journal_name(), "approval limit set");
        Ok(user)
    }

    /// Sets the amount in `threshold`'s currency above which two approvers are
    /// needed, and journals the threshold stored before and after.
    ///
    /// # Errors
    /// Database failures.
    pub async fn set_four_eyes_threshold(
        &self,
        by: &ChangedBy,
        threshold: Money,
    ) -> Result<(), LimitError> {
        let (db, now) = (&self.db, self.clock.now());
        let currency = threshold.currency.code();
        let tx = db.begin_write().await?;
        let before = storage::limits::four_eyes_threshold(&*tx, currency).await?;
        storage::limits::set_four_eyes_threshold(&*tx, currency, threshold.amount_minor).await?;
        let change = SettingChange {
            subject: format!("currency:{currency}"),
            before: before.map(|minor| Money::new(minor, threshold.currency).display()),
            after: Some(threshold.display()),
        };
        record(&*tx, by, SettingKind::FourEyesThresholdSet, change, now).await?;
        tx.commit().await?;
        tracing::info!(threshold = %threshold.display(), by = by.journal_name(), "four-eyes threshold set");
        Ok(())
    }
}
