//! The search index over the policy versions in force, shared by all agents
//! and rebuilt after every import.

use super::index::{IndexError, IndexedDocument, PolicyHit, PolicyIndex};
use super::sections::split_sections;
use crate::settings::{ChangedBy, record};
use domain::{SettingChange, SettingKind, Timestamp};
use std::sync::{Arc, RwLock};
use storage::policies::ImportOutcome;
use storage::{Database, StorageError};

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("policy slug must be 1 to 128 lower-case letters, digits or '-'")]
    InvalidSlug,
    #[error("policy title must be 1 to 300 characters")]
    InvalidTitle,
    #[error("policy body must not be empty and at most 1 MiB")]
    InvalidBody,
    /// What was reviewed is no longer what is in force: someone published
    /// meanwhile (or the policy appeared or went away).
    #[error(
        "{slug} changed since you reviewed it: {now} is in force now; review the changes again"
    )]
    ChangedSinceReview { slug: String, now: String },
}

/// What the person publishing reviewed the new text against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reviewed {
    /// Nothing: an import from a file or the console replaces whatever is
    /// in force.
    Unseen,
    /// No policy of that slug existed.
    NewPolicy,
    /// This version (content hash) was in force.
    Against(String),
}

/// A document every agent may cite: a slug of lower-case letters, digits
/// and '-', a title, and a body of at most 1 MiB.
fn validate(slug: &str, title: &str, body: &str) -> Result<(), PolicyError> {
    let valid_slug = !slug.is_empty()
        && slug.len() <= 128
        && slug
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid_slug {
        return Err(PolicyError::InvalidSlug);
    }
    if title.trim().is_empty() || title.chars().count() > 300 {
        return Err(PolicyError::InvalidTitle);
    }
    if body.trim().is_empty() || body.len() > 1 << 20 {
        return Err(PolicyError::InvalidBody);
    }
    Ok(())
}

/// How the audit trail names a policy version: its title and short hash.
fn version_label(title: &str, content_hash: &str) -> String {
    let short = content_hash.get(..12).unwrap_or(content_hash);
    format!("{title} (version {short})")
}

/// A cited section at a specific version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedSection {
    pub document_title: String,
    pub heading: String,
    pub text: String,
}

#[derive(Clone)]
pub struct PolicyLibrary {
    db: Database,
    index: Arc<RwLock<Indexed>>,
}

/// The search index and the documents in force it was built from.
struct Indexed {
    index: Arc<PolicyIndex>,
    /// (slug, content hash) of each current version, by slug.
    from: Vec<(String, String)>,
}

/// How often a running process checks whether another process (another
/// replica, or `countersign policy import`) changed the documents in force.
pub const REFRESH_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

impl PolicyLibrary {
    /// Loads the current versions and indexes them.
    ///
    /// # Errors
    /// Storage or index failures.
    pub async fn load(db: Database) -> Result<Self, PolicyError> {
        let indexed = build_index(&db).await?;
        Ok(PolicyLibrary {
            db,
            index: Arc::new(RwLock::new(indexed)),
        })
    }

    /// # Errors
    /// Index failures.
    pub fn search(&self, question: &str, limit: usize) -> Result<Vec<PolicyHit>, PolicyError> {
        let index = self
            .index
            .read()
            .map(|guard| guard.index.clone())
            .map_err(|_| IndexError::from(tantivy::TantivyError::Poisoned))?;
        Ok(index.search(question, limit)?)
    }

    /// Imports a document (new version when the content changed) and
    /// refreshes the index.
    ///
    /// # Errors
    /// Invalid input or storage failures.
    pub async fn import(
        &self,
        by: &ChangedBy,
        slug: &str,
        title: &str,
        body: &str,
        now: Timestamp,
    ) -> Result<ImportOutcome, PolicyError> {
        self.publish(by, slug, title, body, &Reviewed::Unseen, now)
            .await
    }

    /// The new text of `slug` against the version in force, for a person to
    /// review before [`PolicyLibrary::publish`].
    ///
    /// # Errors
    /// Storage failures.
    pub async fn review(
        &self,
        slug: &str,
        title: &str,
        body: &str,
    ) -> Result<super::review::PolicyReview, PolicyError> {
        validate(slug, title, body)?;
        let current = self.in_force(slug).await?;
        Ok(super::review::review(
            current
                .as_ref()
                .map(|v| (v.content_hash.as_str(), v.title.as_str(), v.body.as_str())),
            title,
            body,
        ))
    }

    /// The version of `slug` in force, if the policy exists.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn in_force(
        &self,
        slug: &str,
    ) -> Result<Option<storage::policies::PolicyVersion>, PolicyError> {
        Ok(storage::policies::current_version(self.db.conn(), slug).await?)
    }

    /// Publishes a new version of `slug` (or the policy itself) when what is
    /// in force is still what the person `reviewed`, and refreshes the index.
    ///
    /// # Errors
    /// Invalid input, [`PolicyError::ChangedSinceReview`], or storage
    /// failures.
    pub async fn publish(
        &self,
        by: &ChangedBy,
        slug: &str,
        title: &str,
        body: &str,
        reviewed: &Reviewed,
        now: Timestamp,
    ) -> Result<ImportOutcome, PolicyError> {
        validate(slug, title, body)?;
        let tx = self.db.begin_write().await?;
        let in_force = storage::policies::current_versions(&*tx)
            .await?
            .into_iter()
            .find(|(current, _)| current == slug)
            .map(|(_, version)| version);
        let still_as_reviewed = match (reviewed, &in_force) {
            (Reviewed::Unseen, _) | (Reviewed::NewPolicy, None) => true,
            (Reviewed::Against(seen), Some(version)) => *seen == version.content_hash,
            _ => false,
        };
        if !still_as_reviewed {
            return Err(PolicyError::ChangedSinceReview {
                slug: slug.to_owned(),
                now: in_force.map_or_else(
                    || "no version".to_owned(),
                    |v| version_label(&v.title, &v.content_hash),
                ),
            });
        }
        let before = in_force
            .as_ref()
            .map(|version| version_label(&version.title, &version.content_hash));
        let outcome = storage::policies::import(&*tx, slug, title.trim(), body, now).await?;
        let after = match &outcome {
            ImportOutcome::Created { version } | ImportOutcome::NewVersion { version } => {
                Some(version_label(title.trim(), version))
            }
            ImportOutcome::Unchanged { .. } => None,
        };
        // Uploading the text in force again changes nothing worth a record.
        if let Some(after) = after {
            let change = SettingChange {
                subject: format!("policy:{slug}"),
                before,
                after: Some(after),
            };
            record(&*tx, by, SettingKind::PolicyPublished, change, now).await?;
        }
        tx.commit().await?;
        self.reload().await?;
        Ok(outcome)
    }

    /// Rebuilds the index from the database.
    ///
    /// # Errors
    /// Storage or index failures.
    pub async fn reload(&self) -> Result<(), PolicyError> {
        let fresh = build_index(&self.db).await?;
        if let Ok(mut guard) = self.index.write() {
            *guard = fresh;
        }
        Ok(())
    }

    /// Rebuilds the index when the documents in force are no longer those
    /// it was built from (another replica or the command line imported a
    /// version); a read and nothing else otherwise. Returns whether it
    /// rebuilt.
    ///
    /// # Errors
    /// Storage or index failures (the old index stays in use).
    pub async fn reload_if_changed(&self) -> Result<bool, PolicyError> {
        let now_in_force = storage::policies::current_fingerprint(self.db.conn()).await?;
        let indexed_from = self
            .index
            .read()
            .map(|guard| guard.from.clone())
            .unwrap_or_default();
        if now_in_force == indexed_from {
            return Ok(false);
        }
        self.reload().await?;
        tracing::info!(
            documents = now_in_force.len(),
            "policy search index rebuilt: the documents in force changed"
        );
        Ok(true)
    }

    /// Keeps this process's index that of the documents in force, checking
    /// every [`REFRESH_EVERY`] on a task of the supervisor (ends at
    /// shutdown). Each replica holds its own index, so this is per
    /// process, not a runner lane (whose items one worker of all claims).
    pub fn keep_fresh(&self, tasks: &runner::Supervisor) {
        let (library, stopping) = (self.clone(), tasks.stopping());
        tasks.spawn(
            "policy index refresh",
            storage::write_gate::in_background(async move {
                loop {
                    tokio::select! {
                        () = tokio::time::sleep(REFRESH_EVERY) => {}
                        () = stopping.cancelled() => return,
                    }
                    if let Err(error) = library.reload_if_changed().await {
                        tracing::warn!(%error, "could not refresh the policy search index; the current one stays in use");
                    }
                }
            }),
        );
    }

    /// The text of `section_id` in version `version` of document `slug`,
    /// whether or not that version is still current.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn cited_section(
        &self,
        slug: &str,
        version: &str,
        section_id: &str,
    ) -> Result<Option<CitedSection>, PolicyError> {
        let Some(stored) = storage::policies::version(self.db.conn(), slug, version).await? else {
            return Ok(None);
        };
        Ok(split_sections(&stored.body)
            .into_iter()
            .find(|s| s.id == section_id)
            .map(|s| CitedSection {
                document_title: stored.title.clone(),
                heading: s.heading,
                text: s.text,
            }))
    }
}

async fn build_index(db: &Database) -> Result<Indexed, PolicyError> {
    let versions = storage::policies::current_versions(db.conn()).await?;
    let from = versions
        .iter()
        .map(|(slug, version)| (slug.clone(), version.content_hash.clone()))
        .collect();
    let documents: Vec<IndexedDocument<'_>> = versions
        .iter()
        .map(|(slug, v)| IndexedDocument {
            slug,
            title: &v.title,
            version: &v.content_hash,
            body: &v.body,
        })
        .collect();
    Ok(Indexed {
        index: Arc::new(PolicyIndex::build(&documents)?),
        from,
    })
}
