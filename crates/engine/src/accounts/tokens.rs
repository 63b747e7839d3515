//! API bearer tokens: `cst_` + 32 random bytes, shown once, stored as SHA-256.

use super::Accounts;
use domain::UserName;
use rand::RngCore;
use storage::users::UserRecord;
use storage::{StorageError, ids::new_id};

/// How precisely a token's last use is recorded: a token used again within
/// this long after its recorded use writes nothing.
pub const USE_RECORDED_TO: chrono::Duration = chrono::Duration::minutes(1);

const PREFIX: &str = "cst_";

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("no user named {0:?}")]
    NoSuchUser(String),
    #[error("label must be 1 to 200 characters")]
    InvalidLabel,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A freshly created token; `secret` is never stored or shown again.
pub struct CreatedToken {
    pub id: String,
    pub secret: String,
}

pub fn hash_secret(secret: &str) -> String {
    domain::digest::sha256_hex(secret.as_bytes())
}

impl Accounts {
    /// # Errors
    /// [`TokenError::NoSuchUser`] or [`TokenError::InvalidLabel`].
    pub async fn create_token(
        &self,
        user_name: &str,
        label: &str,
    ) -> Result<CreatedToken, TokenError> {
        let (db, now) = (&self.db, self.clock.now());
        let label = label.trim();
        if label.is_empty() || label.chars().count() > 200 {
            return Err(TokenError::InvalidLabel);
        }
        let name =
            UserName::parse(user_name).map_err(|_| TokenError::NoSuchUser(user_name.into()))?;
        let user = storage::users::find_by_name(db.conn(), name.as_str())
            .await?
            .ok_or_else(|| TokenError::NoSuchUser(user_name.into()))?;
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        let secret = format!("{PREFIX}{}", hex::encode(bytes));
        let id = new_id("tok");
        let tx = db.begin_write().await?;
        storage::tokens::insert(&*tx, &id, &user.id, label, &hash_secret(&secret), now).await?;
        tx.commit().await?;
        Ok(CreatedToken { id, secret })
    }

    /// The enabled user behind a bearer secret, if the token is valid and
    /// unrevoked. Its last use is recorded to the minute.
    ///
    /// # Errors
    /// Database failures.
    pub async fn authenticate_token(
        &self,
        secret: &str,
    ) -> Result<Option<UserRecord>, StorageError> {
        let (db, now) = (&self.db, self.clock.now());
        if !secret.starts_with(PREFIX) || secret.len() != PREFIX.len() + 64 {
            return Ok(None);
        }
        let Some(token) =
            storage::tokens::find_active_by_hash(db.conn(), &hash_secret(secret)).await?
        else {
            return Ok(None);
        };
        let user = storage::users::find_by_id(db.conn(), &token.user_id).await?;
        let Some(user) = user.filter(|u| !u.disabled) else {
            return Ok(None);
        };
        // A read request writes nothing: the use is recorded to the minute,
        // so at most one write per token per minute. Best effort: a failed
        // timestamp update must not fail the request.
        let recorded = token
            .last_used_at
            .is_some_and(|last| now - last < USE_RECORDED_TO);
        if !recorded && let Err(error) = storage::tokens::touch(db.conn(), &token.id, now).await {
            tracing::warn!(%error, token.id = %token.id, "could not record token use");
        }
        Ok(Some(user))
    }

    /// # Errors
    /// Database failures.
    pub async fn revoke_token(&self, id: &str) -> Result<bool, StorageError> {
        let tx = self.db.begin_write().await?;
        let revoked = storage::tokens::revoke(&*tx, id, self.clock.now()).await?;
        tx.commit().await?;
        Ok(revoked)
    }
}
