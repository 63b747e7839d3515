//! The audit trail for managers: the journal filtered by order, proposal,
//! user, action and date range, paged; the hash-chain check as a status.

use crate::error::AppError;
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

/// Filters as they appear in the page's query string (all optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditQuery {
    #[serde(default)]
    pub order: String,
    #[serde(default)]
    pub proposal: String,
    /// A user's login or display name (events that user caused), or an
    /// actor as the journal names it (`system:executor-1`, `user:ada`).
    #[serde(default)]
    pub user: String,
    /// An event kind: `proposed`, `approved`, `sent`, `verified`,
    /// `approval_limit_set`…, or [`SETTINGS_CHANGES`] for every settings
    /// change.
    #[serde(default)]
    pub action: String,
    /// `YYYY-MM-DD`, inclusive, UTC.
    #[serde(default)]
    pub from: String,
    /// `YYYY-MM-DD`, inclusive, UTC.
    #[serde(default)]
    pub until: String,
}

pub const PER_PAGE: u64 = 50;

/// The action filter that selects every settings change (limits,
/// thresholds, accounts and roles, policies, widget sites).
pub const SETTINGS_CHANGES: &str = "settings";

/// The last page number the journal can be asked for: its first event's
/// position must fit the database's signed 64-bit integers.
pub const MAX_PAGE: u64 = (i64::MAX as u64) / PER_PAGE;

/// The journal's actor for what was typed in the "Who" filter: a user name
/// stands for that user; anything with a `kind:` prefix is taken as written.
pub fn actor_of(who: &str) -> String {
    if who.contains(':') {
        who.to_owned()
    } else {
        format!("user:{}", who.to_lowercase())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRow {
    pub seq: i64,
    pub at: domain::Timestamp,
    pub actor: String,
    /// The display name of the person behind a `user:` actor, when the
    /// account exists.
    pub actor_name: Option<String>,
    pub kind: String,
    pub proposal_id: Option<String>,
    pub order_id: Option<String>,
    pub from_status: Option<String>,
    pub to_status: Option<String>,
    pub payload: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditPage {
    pub rows: Vec<AuditRow>,
    pub total: u64,
    pub page: u64,
}

/// The journal's integrity, for the status shown on the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainStatus {
    pub intact: bool,
    pub message: String,
}

#[cfg(feature = "ssr")]
pub mod backend {
    use super::AuditQuery;
    use chrono::{NaiveDate, TimeZone, Utc};
    use storage::journal::JournalFilter;

    fn day(value: &str, name: &str) -> Result<Option<chrono::DateTime<Utc>>, String> {
        let value = value.trim();
        if value.is_empty() {
            return Ok(None);
        }
        let date = NaiveDate::parse_from_str(value, "%Y-%m-%d")
            .map_err(|_| format!("{name} must be a date like 2026-11-30"))?;
        let midnight = date
            .and_hms_opt(0, 0, 0)
            .ok_or_else(|| format!("{name} is out of range"))?;
        Ok(Some(Utc.from_utc_datetime(&midnight)))
    }

    fn text(value: &str, name: &str) -> Result<Option<String>, String> {
        let value = value.trim();
        if value.chars().count() > 200 {
            return Err(format!("{name} is longer than 200 characters"));
        }
        Ok((!value.is_empty()).then(|| value.to_owned()))
    }

    /// The storage filter for a query, with a person's display name in
    /// "Who" standing for their account ("Ada Approver" finds what
    /// `approver` did); a message naming the bad field otherwise.
    ///
    /// # Errors
    /// As [`journal_filter`], a display name shared by several accounts
    /// (the message lists their logins), or a storage failure.
    pub async fn journal_filter_for(
        db: &impl storage::ConnectionTrait,
        query: &AuditQuery,
    ) -> Result<JournalFilter, FilterError> {
        let mut filter = journal_filter(query).map_err(FilterError::Invalid)?;
        let who = query.user.trim();
        if who.is_empty() || who.contains(':') {
            return Ok(filter);
        }
        if storage::users::find_by_name(db, &who.to_lowercase())
            .await?
            .is_some()
        {
            return Ok(filter);
        }
        match storage::users::names_with_display_name(db, who)
            .await?
            .as_slice()
        {
            [] => {}
            [name] => filter.actor = Some(format!("user:{name}")),
            several => {
                return Err(FilterError::Invalid(format!(
                    "several accounts are named {who:?} ({}): type the login name",
                    several.join(", ")
                )));
            }
        }
        Ok(filter)
    }

    /// Why an audit filter could not be made.
    #[derive(Debug, thiserror::Error)]
    pub enum FilterError {
        #[error("{0}")]
        Invalid(String),
        #[error(transparent)]
        Storage(#[from] storage::StorageError),
    }

    /// The storage filter for a query, or a message naming the bad field.
    ///
    /// # Errors
    /// A date that does not parse, an inverted range, or an over-long field.
    pub fn journal_filter(query: &AuditQuery) -> Result<JournalFilter, String> {
        let from = day(&query.from, "from")?;
        let until = day(&query.until, "until")?.map(|d| d + chrono::Duration::days(1));
        if let (Some(from), Some(until)) = (from, until)
            && until <= from
        {
            return Err("the date range ends before it starts".to_owned());
        }
        let action = text(&query.action, "action")?;
        // Settings changes are their own stream; one kind is one kind.
        let (stream, kind) = match action {
            Some(action) if action == super::SETTINGS_CHANGES => {
                (Some(storage::journal::SETTINGS_STREAM.to_owned()), None)
            }
            other => (None, other),
        };
        Ok(JournalFilter {
            order_id: text(&query.order, "order")?,
            proposal_id: text(&query.proposal, "proposal")?,
            stream,
            actor: text(&query.user, "user")?.map(|who| super::actor_of(&who)),
            kind,
            from,
            until,
        })
    }
}

/// One page of the journal, oldest first.
#[server(prefix = "/fn", endpoint = "audit_events", input = server_fn::codec::GetUrl)]
pub async fn audit_events(query: AuditQuery, page: u64) -> Result<AuditPage, AppError> {
    use crate::server;
    server::require_role(crate::access::AUDIT_ROLES)?;
    if page > MAX_PAGE {
        return Err(server::fail(AppError::Invalid(format!(
            "page must be at most {MAX_PAGE}"
        ))));
    }
    let ctx = server::context()?;
    let filter = backend::journal_filter_for(ctx.db.conn(), &query)
        .await
        .map_err(|e| match e {
            backend::FilterError::Invalid(m) => server::fail(AppError::Invalid(m)),
            backend::FilterError::Storage(other) => server::internal(&other),
        })?;
    let (events, total) = storage::journal::list(ctx.db.conn(), &filter, page, PER_PAGE)
        .await
        .map_err(|e| match e {
            storage::StorageError::OutOfRange(message) => server::fail(AppError::Invalid(message)),
            other => server::internal(&other),
        })?;
    let logins: Vec<String> = events
        .iter()
        .filter_map(|e| e.actor.strip_prefix("user:").map(str::to_owned))
        .collect();
    let names = storage::users::display_names(ctx.db.conn(), &logins)
        .await
        .map_err(|e| server::internal(&e))?;
    Ok(AuditPage {
        rows: events
            .into_iter()
            .map(|e| AuditRow {
                seq: e.seq,
                at: e.at,
                actor_name: e
                    .actor
                    .strip_prefix("user:")
                    .and_then(|login| names.get(login).cloned()),
                actor: e.actor,
                kind: e.kind,
                proposal_id: e.proposal_id,
                order_id: e.order_id,
                from_status: e.from_status,
                to_status: e.to_status,
                payload: e.payload,
            })
            .collect(),
        total,
        page,
    })
}

/// Re-computes the journal's hash chains.
#[server(prefix = "/fn", endpoint = "audit_chain_status", input = server_fn::codec::GetUrl)]
pub async fn audit_chain_status() -> Result<ChainStatus, AppError> {
    use crate::server;
    use storage::journal::ChainReport;
    server::require_role(crate::access::AUDIT_ROLES)?;
    let ctx = server::context()?;
    let report = storage::journal::verify_chain(ctx.db.conn())
        .await
        .map_err(|e| server::internal(&e))?;
    Ok(match report {
        ChainReport::Intact {
            events,
            streams,
            checkpoints,
        } => ChainStatus {
            intact: true,
            message: format!(
                "Intact: {events} events in {streams} chains, {checkpoints} checkpoints verified."
            ),
        },
        ChainReport::Broken {
            stream,
            at_seq,
            problem,
        } => ChainStatus {
            intact: false,
            message: format!("BROKEN in {stream} at event {at_seq}: {problem}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::actor_of;

    #[test]
    fn a_user_name_stands_for_that_user_and_a_prefixed_actor_for_itself() {
        assert_eq!(actor_of("Approver"), "user:approver");
        assert_eq!(actor_of("system:executor-7"), "system:executor-7");
        assert_eq!(actor_of("user:ada"), "user:ada");
    }
}
