//! Listing the tasks a peer group sent here (A2A `ListTasks`): only the
//! caller's own tasks, newest received first, a page at a time. The page
//! token is opaque to the peer: where the previous page ended (received
//! at, task id), so a task received meanwhile never shifts a page.

use super::receive::{InboxTaskView, Receiver};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use gateway::GroupName;
use storage::StorageError;
use storage::gateway::inbox::{self, SenderFilter};

/// The most tasks one page holds, and the size of a page not asked for.
pub const MAX_PAGE: u64 = 100;
pub const DEFAULT_PAGE: u64 = 50;

/// Which tasks to list.
#[derive(Debug, Clone, Default)]
pub struct TaskQuery {
    /// Only the tasks of one chain (A2A `contextId`: its root key).
    pub context_id: Option<String>,
    /// Only tasks in this state (`working`, `completed`, …).
    pub state: Option<String>,
    /// Only tasks whose state changed at or after this.
    pub updated_since: Option<DateTime<Utc>>,
    /// At most this many (1 to [`MAX_PAGE`]; default [`DEFAULT_PAGE`]).
    pub page_size: Option<u64>,
    /// Where the previous page ended, as that page said.
    pub page_token: Option<String>,
}

/// One page of tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPage {
    pub tasks: Vec<InboxTaskView>,
    /// The token for the next page; None on the last one.
    pub next_page_token: Option<String>,
    pub page_size: u64,
    /// How many tasks the query lets through, over all pages.
    pub total: u64,
}

/// Why a listing was not made.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("pageSize must be between 1 and {MAX_PAGE}, not {0}")]
    PageSize(u64),
    #[error("the pageToken was not made by this group (use the nextPageToken of a previous page)")]
    PageToken,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

fn token(task: &InboxTaskView) -> String {
    URL_SAFE_NO_PAD.encode(format!(
        "{}|{}",
        task.received_at.timestamp_micros(),
        task.task_id
    ))
}

fn after(token: &str) -> Option<(DateTime<Utc>, String)> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(token).ok()?).ok()?;
    let (micros, id) = text.split_once('|')?;
    let at = DateTime::from_timestamp_micros(micros.parse().ok()?)?;
    (!id.is_empty()).then(|| (at, id.to_owned()))
}

impl Receiver {
    /// A page of the tasks `caller` sent this group; another group's tasks
    /// are never listed.
    ///
    /// # Errors
    /// [`ListError`].
    pub async fn list_for(
        &self,
        caller: &GroupName,
        query: &TaskQuery,
    ) -> Result<TaskPage, ListError> {
        let page_size = query.page_size.unwrap_or(DEFAULT_PAGE);
        if !(1..=MAX_PAGE).contains(&page_size) {
            return Err(ListError::PageSize(page_size));
        }
        let after = match &query.page_token {
            Some(token) => Some(after(token).ok_or(ListError::PageToken)?),
            None => None,
        };
        let filter = SenderFilter {
            root_key: query.context_id.as_deref(),
            state: query.state.as_deref(),
            updated_since: query.updated_since,
        };
        let conn = self.db.conn();
        // One more than the page: whether a next page exists, without
        // another query.
        let mut rows = inbox::page_of_sender(
            conn,
            caller.as_str(),
            &filter,
            after.as_ref().map(|(at, id)| (*at, id.as_str())),
            page_size + 1,
        )
        .await?;
        let more = rows.len() as u64 > page_size;
        rows.truncate(usize::try_from(page_size).unwrap_or(usize::MAX));
        let tasks = rows
            .into_iter()
            .map(InboxTaskView::read)
            .collect::<Result<Vec<_>, _>>()?;
        let total = inbox::count_of_sender(conn, caller.as_str(), &filter).await?;
        Ok(TaskPage {
            next_page_token: if more { tasks.last().map(token) } else { None },
            tasks,
            page_size,
            total,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{URL_SAFE_NO_PAD, after};
    use base64::Engine as _;

    #[test]
    fn a_page_token_that_was_not_made_here_is_recognised_as_such() {
        assert_eq!(after("not base64 !"), None);
        assert_eq!(after(&URL_SAFE_NO_PAD.encode("12|")), None);
        assert_eq!(after(&URL_SAFE_NO_PAD.encode("twelve|gtk_1")), None);
        let (at, id) = after(&URL_SAFE_NO_PAD.encode("1700000000000000|gtk_1")).unwrap();
        assert_eq!((at.timestamp(), id.as_str()), (1_700_000_000, "gtk_1"));
    }
}
