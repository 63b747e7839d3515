//! Writing a settings change into the journal's settings stream.

use crate::Actor;
use domain::{SettingChange, SettingKind, Timestamp};
use storage::ConnectionTrait;
use storage::StorageError;
use storage::journal::{NewEvent, SETTINGS_STREAM};

/// Who made a settings change, as the journal names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedBy(String);

impl ChangedBy {
    /// A signed-in person (an admin in the web app, or the account named
    /// with `--admin` on the command line).
    #[must_use]
    pub fn person(actor: &Actor) -> Self {
        ChangedBy(actor.journal_name())
    }

    /// Whoever runs the `countersign` command on the server. They need no
    /// account (the first admin is created there), so the journal names the
    /// console rather than a person.
    #[must_use]
    pub fn console() -> Self {
        ChangedBy("system:cli".to_owned())
    }

    /// A component of the system, e.g. `demo` seeding the demo data.
    #[must_use]
    pub fn system(component: &str) -> Self {
        ChangedBy(format!("system:{component}"))
    }

    /// `user:NAME` or `system:COMPONENT`.
    #[must_use]
    pub fn journal_name(&self) -> &str {
        &self.0
    }
}

/// Appends one settings change to the settings stream inside the caller's
/// transaction, so the change and its record commit together or not at all.
///
/// # Errors
/// Database failures; the caller's transaction then rolls back.
pub(crate) async fn record(
    db: &impl ConnectionTrait,
    by: &ChangedBy,
    kind: SettingKind,
    change: SettingChange,
    at: Timestamp,
) -> Result<(), StorageError> {
    let SettingChange {
        subject,
        before,
        after,
    } = change;
    storage::journal::append_to_stream(
        db,
        SETTINGS_STREAM,
        vec![NewEvent {
            proposal_id: None,
            order_id: None,
            actor: by.journal_name().to_owned(),
            kind: kind.as_str().to_owned(),
            from_status: None,
            to_status: None,
            payload: serde_json::json!({
                "subject": subject,
                "before": before,
                "after": after,
            }),
            at,
        }],
    )
    .await?;
    Ok(())
}
