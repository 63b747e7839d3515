//! Storage errors, translated from driver codes so callers can act on them.

use sea_orm::{DbErr, RuntimeErr, SqlErr};

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("{entity} not found")]
    NotFound { entity: &'static str },
    #[error("conflict on {constraint}")]
    Conflict { constraint: String },
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error("stored data is invalid: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Other(DbErr),
}

impl From<DbErr> for StorageError {
    fn from(err: DbErr) -> Self {
        if let Some(SqlErr::UniqueConstraintViolation(detail)) = err.sql_err() {
            return StorageError::Conflict { constraint: detail };
        }
        if let Some(SqlErr::ForeignKeyConstraintViolation(detail)) = err.sql_err() {
            return StorageError::Conflict { constraint: detail };
        }
        match &err {
            DbErr::ConnectionAcquire(e) => StorageError::Unavailable(e.to_string()),
            DbErr::Conn(RuntimeErr::SqlxError(e)) => StorageError::Unavailable(e.to_string()),
            _ => StorageError::Other(err),
        }
    }
}

impl StorageError {
    pub fn is_conflict(&self) -> bool {
        matches!(self, StorageError::Conflict { .. })
    }
}
