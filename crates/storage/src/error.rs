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
    /// A value the database cannot take: limits and offsets above
    /// `i64::MAX` (refused before any query is built), or text PostgreSQL
    /// cannot hold (a NUL character). The caller sent it; it is no fault of
    /// the database's.
    #[error("{0}")]
    OutOfRange(String),
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
        if let Some(message) = unstorable_text(&err) {
            return StorageError::OutOfRange(message.to_owned());
        }
        match &err {
            DbErr::ConnectionAcquire(e) => StorageError::Unavailable(e.to_string()),
            DbErr::Conn(RuntimeErr::SqlxError(e)) => StorageError::Unavailable(e.to_string()),
            DbErr::Exec(RuntimeErr::SqlxError(e)) | DbErr::Query(RuntimeErr::SqlxError(e))
                if is_transient(e) =>
            {
                StorageError::Unavailable(e.to_string())
            }
            _ => StorageError::Other(err),
        }
    }
}

/// PostgreSQL refuses text with a NUL character (or one its encoding cannot
/// hold) in any statement, a lookup by such an id included; SQLite stores
/// it. Either way it came from the client, so it is refused as input.
fn unstorable_text(err: &DbErr) -> Option<&'static str> {
    let (DbErr::Exec(RuntimeErr::SqlxError(sqlx::Error::Database(db)))
    | DbErr::Query(RuntimeErr::SqlxError(sqlx::Error::Database(db)))) = err
    else {
        return None;
    };
    // character_not_in_repertoire, untranslatable_character.
    matches!(db.code().as_deref(), Some("22021" | "22P05"))
        .then_some("text with a NUL or other unstorable character is not accepted")
}

/// Errors that say "not now" rather than "never": the caller may retry and
/// the client should be told to try again (503), not that something broke.
fn is_transient(error: &sqlx::Error) -> bool {
    match error {
        // PostgreSQL's class 08, connection exceptions: the connection
        // failed or broke, not the statement.
        sqlx::Error::Database(db) if db.code().is_some_and(|code| code.starts_with("08")) => true,
        sqlx::Error::Database(db) => matches!(
            db.code().as_deref(),
            // SQLite: busy, locked, busy recovery / snapshot / timeout.
            Some("5" | "6" | "261" | "517" | "773")
            // PostgreSQL: serialization failure, deadlock, lock wait timed
            // out, too many connections, shutting down, cannot connect now.
            | Some("40001" | "40P01" | "55P03" | "53300" | "57P01" | "57P02" | "57P03")
        ),
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => true,
        _ => false,
    }
}

/// The largest limit, offset or row count the database binds (its integers
/// are signed 64-bit).
pub const MAX_BINDABLE: u64 = i64::MAX as u64;

/// `value` if the database can bind it, else [`StorageError::OutOfRange`]
/// naming it.
///
/// # Errors
/// `value` is above [`MAX_BINDABLE`].
pub fn bindable(value: u64, name: &str) -> Result<u64, StorageError> {
    if value > MAX_BINDABLE {
        return Err(StorageError::OutOfRange(format!(
            "{name} must be at most {MAX_BINDABLE}"
        )));
    }
    Ok(value)
}

impl StorageError {
    pub fn is_conflict(&self) -> bool {
        matches!(self, StorageError::Conflict { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_BINDABLE, StorageError, bindable};

    #[test]
    fn numbers_above_the_database_s_largest_integer_are_refused_by_name() {
        assert_eq!(bindable(MAX_BINDABLE, "offset").unwrap(), MAX_BINDABLE);
        let refused = bindable(MAX_BINDABLE + 1, "offset").unwrap_err();
        assert!(
            matches!(&refused, StorageError::OutOfRange(m) if m == "offset must be at most 9223372036854775807"),
            "{refused:?}"
        );
    }
}
