//! Publishing policy documents from `/admin`: the admin picks the policy
//! (or a new one), reviews the new text line by line against the version in
//! force, and publishes exactly what was reviewed. A version someone else
//! published meanwhile is never overwritten: publishing names the version
//! the review was made against.

use crate::error::AppError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One line of the review's diff: `'+'` added, `'-'` removed, `' '` kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewLine {
    pub change: char,
    pub text: String,
}

/// A run of changes with a few lines of context, and where it starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewHunk {
    pub old_start: usize,
    pub new_start: usize,
    pub lines: Vec<ReviewLine>,
}

/// What publishing would change, and the text that would be published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyReview {
    pub slug: String,
    pub title: String,
    pub body: String,
    /// The version in force (content hash) and its title; `None` when the
    /// policy is new.
    pub current_version: Option<String>,
    pub current_title: Option<String>,
    pub unchanged: bool,
    pub added_lines: usize,
    pub removed_lines: usize,
    pub hunks: Vec<ReviewHunk>,
    /// The headings agents will cite.
    pub sections: Vec<String>,
}

#[cfg(feature = "ssr")]
fn policy_error(error: engine::policies::PolicyError) -> AppError {
    use crate::server;
    use engine::policies::PolicyError;
    match error {
        PolicyError::Storage(inner) => server::internal(&inner),
        PolicyError::Index(inner) => server::internal(&inner),
        PolicyError::ChangedSinceReview { .. } => {
            server::fail(AppError::Conflict(error.to_string()))
        }
        other => crate::admin::backend::invalid(other),
    }
}

/// The text of the version of `slug` in force, the starting point for
/// its next version (404 when no policy has that slug).
#[server(prefix = "/fn", endpoint = "admin_policy_in_force", input = server_fn::codec::GetUrl)]
pub async fn admin_policy_in_force(slug: String) -> Result<String, AppError> {
    use crate::server;
    let (ctx, _) = server::require_admin()?;
    let slug = slug.trim();
    ctx.engine
        .policies
        .in_force(slug)
        .await
        .map_err(policy_error)?
        .map(|version| version.body)
        .ok_or_else(|| server::fail(AppError::NotFound(format!("no policy is called {slug}"))))
}

/// The new text of a policy against the version in force. A POST: the
/// text can be up to 1 MiB.
#[server(prefix = "/fn", endpoint = "admin_review_policy")]
pub async fn admin_review_policy(
    csrf_token: String,
    slug: String,
    title: String,
    body: String,
) -> Result<PolicyReview, AppError> {
    use crate::server;
    use engine::policies::review::DiffLine;
    server::check_csrf(&csrf_token)?;
    let (ctx, _) = server::require_admin()?;
    let slug = slug.trim().to_owned();
    let title = title.trim().to_owned();
    let review = ctx
        .engine
        .policies
        .review(&slug, &title, &body)
        .await
        .map_err(policy_error)?;
    let line = |change: char, text: String| ReviewLine { change, text };
    Ok(PolicyReview {
        current_title: review.current.as_ref().map(|(_, title)| title.clone()),
        current_version: review.current.map(|(version, _)| version),
        unchanged: review.unchanged,
        added_lines: review.added_lines,
        removed_lines: review.removed_lines,
        hunks: review
            .hunks
            .into_iter()
            .map(|hunk| ReviewHunk {
                old_start: hunk.old_start,
                new_start: hunk.new_start,
                lines: hunk
                    .lines
                    .into_iter()
                    .map(|l| match l {
                        DiffLine::Kept(text) => line(' ', text),
                        DiffLine::Added(text) => line('+', text),
                        DiffLine::Removed(text) => line('-', text),
                    })
                    .collect(),
            })
            .collect(),
        sections: review.sections,
        slug,
        title,
        body,
    })
}

/// Publishes the reviewed text: `reviewed_version` is the version in force
/// when it was reviewed (blank for a new policy). 409 when another version
/// went live since.
#[server(prefix = "/fn", endpoint = "admin_publish_policy")]
pub async fn admin_publish_policy(
    csrf_token: String,
    slug: String,
    title: String,
    body: String,
    reviewed_version: String,
) -> Result<String, AppError> {
    use crate::server;
    use engine::policies::Reviewed;
    use storage::policies::ImportOutcome;
    server::check_csrf(&csrf_token)?;
    let (ctx, me) = server::require_admin()?;
    let slug = slug.trim();
    let reviewed = match reviewed_version.trim() {
        "" => Reviewed::NewPolicy,
        version => Reviewed::Against(version.to_owned()),
    };
    let outcome = ctx
        .engine
        .policies
        .publish(
            &crate::admin::backend::changed_by(&me),
            slug,
            title.trim(),
            &body,
            &reviewed,
            engine::now(),
        )
        .await
        .map_err(policy_error)?;
    let short = |version: &str| version.get(..12).unwrap_or(version).to_owned();
    Ok(match outcome {
        ImportOutcome::Created { version } => {
            format!("{slug} published (version {})", short(&version))
        }
        ImportOutcome::NewVersion { version } => {
            format!("{slug}: version {} is in force", short(&version))
        }
        ImportOutcome::Unchanged { .. } => format!("{slug}: unchanged"),
    })
}
