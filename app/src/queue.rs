//! The review queue's server side: one approver's lists ("to decide",
//! "waiting for a second approver", "decided by me"), filtered, sorted and
//! paged in the database.

use crate::error::AppError;
use crate::proposals::ProposalCard;
use leptos::prelude::*;
use leptos::server_fn;
use serde::{Deserialize, Serialize};

/// Cards on one page of the queue.
pub const QUEUE_PAGE: u64 = 25;

/// The approver's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueTab {
    /// Awaiting approval and not yet approved by them.
    #[default]
    ToDecide,
    /// Approved by them; another approver must approve too.
    Waiting,
    /// Everything they approved or rejected, most recent first.
    Decided,
}

impl QueueTab {
    pub const ALL: [QueueTab; 3] = [QueueTab::ToDecide, QueueTab::Waiting, QueueTab::Decided];

    pub fn as_str(self) -> &'static str {
        match self {
            QueueTab::ToDecide => "to_decide",
            QueueTab::Waiting => "waiting",
            QueueTab::Decided => "decided",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            QueueTab::ToDecide => "To decide",
            QueueTab::Waiting => "Waiting for a second approver",
            QueueTab::Decided => "Decided by me",
        }
    }

    pub fn parse(text: &str) -> QueueTab {
        QueueTab::ALL
            .into_iter()
            .find(|t| t.as_str() == text)
            .unwrap_or_default()
    }
}

/// The orders the queue can be sorted in: (query value, label).
pub const SORTS: [(&str, &str); 5] = [
    ("expiring_soonest", "Expiring soonest"),
    ("newest", "Newest first"),
    ("oldest", "Oldest first"),
    ("largest_amount", "Largest amount"),
    ("smallest_amount", "Smallest amount"),
];

/// What the approver asked for, as the page's address carries it (so a
/// filtered view can be bookmarked, and works before the page hydrates).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct QueueQuery {
    pub tab: String,
    pub sort: String,
    /// In major units ("50" or "50.00"), blank for none.
    pub min_amount: String,
    pub max_amount: String,
    pub order: String,
    pub submitted_by: String,
    /// Waiting at least this many hours.
    pub waiting_hours: String,
    /// Expiring within this many hours.
    pub expiring_hours: String,
    /// 1-based.
    pub page: u64,
}

/// One page of one list, with how many there are in each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueView {
    pub tab: QueueTab,
    pub cards: Vec<ProposalCard>,
    /// Matching cards in this list, over all pages.
    pub total: u64,
    pub page: u64,
    pub pages: u64,
    /// Unfiltered sizes of "to decide" and "waiting".
    pub to_decide: u64,
    pub waiting: u64,
}

#[cfg(feature = "ssr")]
mod backend {
    use super::*;
    use crate::server;
    use storage::review_queue::{QueueFilter, QueueSort};

    fn invalid(message: String) -> AppError {
        server::fail(AppError::Invalid(message))
    }

    fn text(value: &str) -> Option<String> {
        let value = value.trim();
        (!value.is_empty()).then(|| value.to_owned())
    }

    fn amount(value: &str, name: &str) -> Result<Option<i64>, AppError> {
        text(value)
            .map(|v| {
                // Two decimals, as every currency the shop takes has.
                domain::Money::parse_decimal(&v, domain::Currency::EUR)
                    .map(|m| m.amount_minor)
                    .map_err(|_| {
                        invalid(format!(
                            "{name} must be an amount such as 50 or 49.90, not {v:?}"
                        ))
                    })
            })
            .transpose()
    }

    fn hours(value: &str, name: &str) -> Result<Option<chrono::Duration>, AppError> {
        text(value)
            .map(|v| {
                v.parse::<u32>()
                    .ok()
                    .filter(|h| *h <= 24 * 365)
                    .map(|h| chrono::Duration::hours(i64::from(h)))
                    .ok_or_else(|| {
                        invalid(format!(
                            "{name} must be a whole number of hours up to 8760, not {v:?}"
                        ))
                    })
            })
            .transpose()
    }

    pub fn filter(query: &QueueQuery) -> Result<QueueFilter, AppError> {
        let sort = match text(&query.sort) {
            None => QueueSort::default(),
            Some(sort) => QueueSort::parse(&sort)
                .ok_or_else(|| invalid(format!("there is no sort order {sort:?}")))?,
        };
        let now = engine::now();
        Ok(QueueFilter {
            min_amount_minor: amount(&query.min_amount, "the smallest amount")?,
            max_amount_minor: amount(&query.max_amount, "the largest amount")?,
            order_id: text(&query.order).map(|o| o.trim_start_matches('#').to_owned()),
            submitted_by: text(&query.submitted_by),
            created_before: hours(&query.waiting_hours, "waiting at least")?.map(|h| now - h),
            expires_before: hours(&query.expiring_hours, "expiring within")?.map(|h| now + h),
            sort,
        })
    }
}

/// One page of one of the approver's lists.
#[server(prefix = "/fn", endpoint = "review_queue", input = server_fn::codec::GetUrl)]
pub async fn review_queue(#[server(default)] query: QueueQuery) -> Result<QueueView, AppError> {
    use crate::server;
    use storage::review_queue::{QueueView as Which, count, decided_by, page, totals};
    let me = server::require_role(crate::access::QUEUE_ROLES)?;
    let ctx = server::context()?;
    let conn = ctx.db.conn();
    let tab = QueueTab::parse(&query.tab);
    let mut filter = backend::filter(&query)?;
    if let Some(name) = filter.submitted_by.take() {
        let account = storage::users::find_by_name(conn, &name)
            .await
            .map_err(|e| server::internal(&e))?
            .ok_or_else(|| {
                server::fail(AppError::Invalid(format!("no account is named {name:?}")))
            })?;
        filter.submitted_by = Some(account.id);
    }
    // Approvals lapse: one that no longer counts is the approver's to give
    // again, so the lists are drawn as of now.
    let now = engine::now();
    let to_decide = Which::ToDecide {
        approver_id: &me.user_id,
        at: now,
    };
    let waiting = Which::WaitingForAnother {
        approver_id: &me.user_id,
        at: now,
    };
    let requested = query.page.max(1);
    let offset = (requested - 1).saturating_mul(QUEUE_PAGE);
    let totals = totals(conn, &me.user_id, now)
        .await
        .map_err(|e| server::internal(&e))?;
    let (to_decide_total, waiting_total) = (totals.to_decide, totals.waiting_for_another);
    let (stored, total) = match tab {
        QueueTab::ToDecide | QueueTab::Waiting => {
            let (which, unfiltered_total) = if tab == QueueTab::ToDecide {
                (to_decide, to_decide_total)
            } else {
                (waiting, waiting_total)
            };
            let total = if filter.narrows() {
                count(conn, which, &filter)
                    .await
                    .map_err(|e| server::internal(&e))?
            } else {
                unfiltered_total
            };
            let stored = page(conn, which, &filter, QUEUE_PAGE, offset)
                .await
                .map_err(|e| server::internal(&e))?;
            (stored, total)
        }
        QueueTab::Decided => {
            let ids = decided_by(conn, &me.user_id, QUEUE_PAGE)
                .await
                .map_err(|e| server::internal(&e))?;
            let stored = storage::proposals::get_many_in_order(conn, &ids)
                .await
                .map_err(|e| server::internal(&e))?;
            let total = stored.len() as u64;
            (stored, total)
        }
    };
    let cards = crate::proposals::cards_for(stored).await?;
    Ok(QueueView {
        tab,
        cards,
        total,
        page: requested,
        pages: total.div_ceil(QUEUE_PAGE).max(1),
        to_decide: to_decide_total,
        waiting: waiting_total,
    })
}

/// The proposals an approver is following after deciding (ids separated by
/// commas, at most 50), as they are now; ids that no longer exist are left
/// out.
#[server(prefix = "/fn", endpoint = "followed_proposals", input = server_fn::codec::GetUrl)]
pub async fn followed_proposals(ids: String) -> Result<Vec<ProposalCard>, AppError> {
    use crate::server;
    server::require_role(crate::access::QUEUE_ROLES)?;
    let ctx = server::context()?;
    let ids: Vec<String> = ids
        .split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect();
    if ids.len() > 50 {
        return Err(server::fail(AppError::Invalid(
            "follow at most 50 proposals at once".into(),
        )));
    }
    let stored = storage::proposals::get_many_in_order(ctx.db.conn(), &ids)
        .await
        .map_err(|e| server::internal(&e))?;
    crate::proposals::cards_for(stored).await
}
