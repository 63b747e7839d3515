//! Versioned policy documents. An update with new content adds a version;
//! old versions stay, so evidence keeps pointing at what it cited.

use crate::entities::{policy_document, policy_version};
use crate::error::StorageError;
use crate::ids::new_id;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

pub use policy_version::Model as PolicyVersion;

type Utc = chrono::DateTime<chrono::Utc>;

/// What happened on import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportOutcome {
    Created { version: String },
    NewVersion { version: String },
    Unchanged { version: String },
}

/// Stores `body` as the current version of document `slug`.
///
/// # Errors
/// Database failures.
pub async fn import(
    db: &impl ConnectionTrait,
    slug: &str,
    title: &str,
    body: &str,
    now: Utc,
) -> Result<ImportOutcome, StorageError> {
    let hash = domain::digest::sha256_hex(format!("{title}\n{body}").as_bytes());
    let existing = policy_document::Entity::find()
        .filter(policy_document::Column::Slug.eq(slug))
        .one(db)
        .await?;
    let (document_id, created) = match existing {
        Some(doc) if doc.current_version == hash => {
            return Ok(ImportOutcome::Unchanged { version: hash });
        }
        Some(doc) => {
            let id = doc.id.clone();
            let mut active: policy_document::ActiveModel = doc.into();
            active.current_version = Set(hash.clone());
            active.title = Set(title.to_owned());
            active.updated_at = Set(now);
            active.update(db).await?;
            (id, false)
        }
        None => {
            let id = new_id("pol");
            policy_document::ActiveModel {
                id: Set(id.clone()),
                slug: Set(slug.to_owned()),
                title: Set(title.to_owned()),
                current_version: Set(hash.clone()),
                created_at: Set(now),
                updated_at: Set(now),
            }
            .insert(db)
            .await?;
            (id, true)
        }
    };
    let known = policy_version::Entity::find()
        .filter(policy_version::Column::DocumentId.eq(document_id.clone()))
        .filter(policy_version::Column::ContentHash.eq(hash.clone()))
        .one(db)
        .await?;
    if known.is_none() {
        policy_version::ActiveModel {
            id: Set(new_id("pv")),
            document_id: Set(document_id),
            content_hash: Set(hash.clone()),
            title: Set(title.to_owned()),
            body: Set(body.to_owned()),
            created_at: Set(now),
        }
        .insert(db)
        .await?;
    }
    Ok(if created {
        ImportOutcome::Created { version: hash }
    } else {
        ImportOutcome::NewVersion { version: hash }
    })
}

/// The version in force of every document, by slug.
///
/// # Errors
/// Database failures.
pub async fn current_versions(
    db: &impl ConnectionTrait,
) -> Result<Vec<(String, PolicyVersion)>, StorageError> {
    let docs = policy_document::Entity::find()
        .order_by_asc(policy_document::Column::Slug)
        .all(db)
        .await?;
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        let version = policy_version::Entity::find()
            .filter(policy_version::Column::DocumentId.eq(doc.id.clone()))
            .filter(policy_version::Column::ContentHash.eq(doc.current_version.clone()))
            .one(db)
            .await?
            .ok_or(StorageError::NotFound {
                entity: "policy version",
            })?;
        out.push((doc.slug, version));
    }
    Ok(out)
}

/// The version in force of the document `slug` (none for no such document).
///
/// # Errors
/// Database failures.
pub async fn current_version(
    db: &impl ConnectionTrait,
    slug: &str,
) -> Result<Option<PolicyVersion>, StorageError> {
    let Some(doc) = policy_document::Entity::find()
        .filter(policy_document::Column::Slug.eq(slug))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    Ok(policy_version::Entity::find()
        .filter(policy_version::Column::DocumentId.eq(doc.id))
        .filter(policy_version::Column::ContentHash.eq(doc.current_version))
        .one(db)
        .await?)
}

/// Which version of each document is current: (slug, content hash), by
/// slug. One light read, for a replica to learn whether its search index
/// is still that of the documents in force.
///
/// # Errors
/// Database failures.
pub async fn current_fingerprint(
    db: &impl ConnectionTrait,
) -> Result<Vec<(String, String)>, StorageError> {
    Ok(policy_document::Entity::find()
        .select_only()
        .column(policy_document::Column::Slug)
        .column(policy_document::Column::CurrentVersion)
        .order_by_asc(policy_document::Column::Slug)
        .into_tuple()
        .all(db)
        .await?)
}

/// A specific version of a document, whether or not it is still current.
///
/// # Errors
/// Database failures.
pub async fn version(
    db: &impl ConnectionTrait,
    slug: &str,
    content_hash: &str,
) -> Result<Option<PolicyVersion>, StorageError> {
    let Some(doc) = policy_document::Entity::find()
        .filter(policy_document::Column::Slug.eq(slug))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    Ok(policy_version::Entity::find()
        .filter(policy_version::Column::DocumentId.eq(doc.id))
        .filter(policy_version::Column::ContentHash.eq(content_hash))
        .one(db)
        .await?)
}

/// Every version of the document `slug`, newest first (empty for no such
/// document).
///
/// # Errors
/// Database failures.
pub async fn history(
    db: &impl ConnectionTrait,
    slug: &str,
) -> Result<Vec<PolicyVersion>, StorageError> {
    let Some(doc) = policy_document::Entity::find()
        .filter(policy_document::Column::Slug.eq(slug))
        .one(db)
        .await?
    else {
        return Ok(Vec::new());
    };
    Ok(policy_version::Entity::find()
        .filter(policy_version::Column::DocumentId.eq(doc.id))
        .order_by_desc(policy_version::Column::CreatedAt)
        .all(db)
        .await?)
}
