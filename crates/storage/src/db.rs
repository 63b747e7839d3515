//! Connecting, migrating, and write transactions that cannot fail half-way.

use crate::error::StorageError;
use crate::write_gate::{Held, WriteGate};
use migrations::{Migrator, MigratorTrait};
use sea_orm::{
    ConnectOptions, ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, Statement,
    TransactionTrait,
};
use sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The application's database handle: a pool plus what it takes to write safely.
#[derive(Clone)]
pub struct Database {
    conn: DatabaseConnection,
    backend: Backend,
    /// SQLite has one writer at a time; queueing writers here, in order
    /// (background work giving way), is fairer and faster than letting them
    /// spin in SQLite's busy handler.
    sqlite_writer: Arc<WriteGate>,
    stats: Arc<WriteCounters>,
}

/// Where write transactions spend their time, since the process started:
/// on SQLite, `held` is how long the one writer's lock was taken, so `held`
/// against wall-clock time says how busy the critical path is, and
/// `committing` how much of that is the commit (the fsync).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    pub committed: u64,
    pub held: Duration,
    pub committing: Duration,
}

#[derive(Debug, Default)]
struct WriteCounters {
    committed: AtomicU64,
    held_micros: AtomicU64,
    committing_micros: AtomicU64,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Connects by URL scheme: `sqlite://path?mode=rwc` or `postgres://…`.
    /// SQLite runs in WAL mode with foreign keys on and a busy timeout; the
    /// parent directory of the file is created if missing.
    ///
    /// # Errors
    /// [`StorageError::Unavailable`] when the database cannot be reached or opened.
    pub async fn connect(url: &str) -> Result<Self, StorageError> {
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            return Err(StorageError::Unavailable(
                "database URL must start with sqlite: or postgres://".to_owned(),
            ));
        };
        if backend == Backend::Sqlite {
            create_parent_dir(url)?;
        }
        let mut options = ConnectOptions::new(url.to_owned());
        options
            .sqlx_logging(false)
            .acquire_timeout(Duration::from_secs(10))
            .max_connections(match backend {
                Backend::Sqlite => 8,
                Backend::Postgres => 32,
            })
            .min_connections(1)
            // A pooled SQLite connection is a handle on a local file and
            // cannot go stale; pinging it before every use cost one more
            // round trip to its worker thread per statement outside a
            // transaction. PostgreSQL connections can break (a restarted
            // server) and keep the check.
            .test_before_acquire(backend == Backend::Postgres)
            .map_sqlx_sqlite_opts(|opts| {
                opts.journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Full)
                    .foreign_keys(true)
                    .busy_timeout(Duration::from_secs(15))
                    .create_if_missing(true)
                    // Reads of lists over thousands of proposals were mostly
                    // page copies out of the OS cache (pread) into a 2 MiB
                    // page cache per connection: the file is mapped instead
                    // (up to 1 GiB, shared by every connection through the OS
                    // cache) and each connection keeps 16 MiB of pages.
                    .pragma("mmap_size", "1073741824")
                    .pragma("cache_size", "-16384")
                    // The planner's statistics (see `migrate`): refreshed
                    // when a connection closes, each ANALYZE reading at most
                    // about 400 rows per index, so it costs milliseconds.
                    .pragma("analysis_limit", "400")
                    .optimize_on_close(true, 400)
            });
        let conn = sea_orm::Database::connect(options)
            .await
            .map_err(|e| StorageError::Unavailable(e.to_string()))?;
        Ok(Database {
            conn,
            backend,
            sqlite_writer: Arc::default(),
            stats: Arc::default(),
        })
    }

    /// Applies every pending migration.
    ///
    /// # Errors
    /// Any migration failure.
    pub async fn migrate(&self) -> Result<(), StorageError> {
        match self.backend {
            // sea-orm-migration runs SQLite's migrations statement by
            // statement on whichever pooled connection is free, and a pooled
            // connection was seen to plan later queries on the schema from
            // before the migrations (an index since dropped). On one
            // connection, in one transaction, every migration lands whole
            // and every connection reads the new schema afterwards.
            Backend::Sqlite => {
                let transaction = self.conn.begin().await?;
                Migrator::up(&transaction, None).await?;
                transaction.commit().await?;
                // Without statistics SQLite picks an index by its shape
                // alone, and once walked the status index through every
                // waiting proposal where the order index found the few it
                // wanted (10 ms a queue page at 10,000 waiting). At each
                // start the tables whose statistics are missing or stale
                // are analysed.
                self.conn
                    .execute_unprepared("PRAGMA optimize=0x10002")
                    .await?;
            }
            // Each migration runs in a transaction of its own.
            Backend::Postgres => Migrator::up(&self.conn, None).await?,
        }
        Ok(())
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The pool, for reads outside a transaction.
    pub fn conn(&self) -> &DatabaseConnection {
        &self.conn
    }

    /// Starts a write transaction that already holds the write lock on SQLite
    /// (the effect of `BEGIN IMMEDIATE`), so it can only wait, never fail
    /// later on a lock upgrade. On PostgreSQL it is an ordinary transaction;
    /// claims there rely on conditional updates and row locks.
    ///
    /// # Errors
    /// [`StorageError::Unavailable`] when no connection or lock can be had.
    pub async fn begin_write(&self) -> Result<WriteTx, StorageError> {
        let guard = match self.backend {
            Backend::Sqlite => Some(self.sqlite_writer.enter().await),
            Backend::Postgres => None,
        };
        let started = Instant::now();
        let txn = self.conn.begin().await?;
        if self.backend == Backend::Sqlite {
            txn.execute(Statement::from_string(
                DbBackend::Sqlite,
                "DELETE FROM write_gate WHERE 0",
            ))
            .await?;
        }
        Ok(WriteTx {
            txn,
            _guard: guard,
            started,
            stats: self.stats.clone(),
        })
    }

    /// Totals over this process's committed write transactions.
    pub fn write_stats(&self) -> WriteStats {
        let micros = |counter: &AtomicU64| Duration::from_micros(counter.load(Ordering::Relaxed));
        WriteStats {
            committed: self.stats.committed.load(Ordering::Relaxed),
            held: micros(&self.stats.held_micros),
            committing: micros(&self.stats.committing_micros),
        }
    }

    /// Checks that the database answers (for `/readyz`).
    ///
    /// # Errors
    /// [`StorageError::Unavailable`] when it does not.
    pub async fn ping(&self) -> Result<(), StorageError> {
        self.conn
            .ping()
            .await
            .map_err(|e| StorageError::Unavailable(e.to_string()))
    }

    /// The SQLite pool, for the session store that shares it.
    pub fn sqlite_pool(&self) -> Option<&sqlx::SqlitePool> {
        (self.backend == Backend::Sqlite).then(|| self.conn.get_sqlite_connection_pool())
    }

    /// The PostgreSQL pool, for the session store that shares it.
    pub fn postgres_pool(&self) -> Option<&sqlx::PgPool> {
        (self.backend == Backend::Postgres).then(|| self.conn.get_postgres_connection_pool())
    }
}

fn create_parent_dir(url: &str) -> Result<(), StorageError> {
    let path = url
        .trim_start_matches("sqlite:")
        .trim_start_matches("//")
        .split('?')
        .next()
        .unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        return Ok(());
    }
    if let Some(parent) = std::path::Path::new(path).parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)
            .map_err(|e| StorageError::Unavailable(format!("cannot create {parent:?}: {e}")))?;
    }
    Ok(())
}

/// A write transaction; dropping it without [`WriteTx::commit`] rolls back.
pub struct WriteTx {
    txn: DatabaseTransaction,
    _guard: Option<Held>,
    started: Instant,
    stats: Arc<WriteCounters>,
}

impl WriteTx {
    /// # Errors
    /// The commit failed; nothing was written.
    pub async fn commit(self) -> Result<(), StorageError> {
        let committing = Instant::now();
        self.txn.commit().await?;
        let micros =
            |since: Instant| u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX);
        let stats = &self.stats;
        stats.committed.fetch_add(1, Ordering::Relaxed);
        stats
            .held_micros
            .fetch_add(micros(self.started), Ordering::Relaxed);
        stats
            .committing_micros
            .fetch_add(micros(committing), Ordering::Relaxed);
        Ok(())
    }

    /// Ends the transaction without writing anything. Dropping it does the
    /// same, but only queues the rollback; this waits for it, so the write
    /// lock is free when it returns.
    ///
    /// # Errors
    /// The rollback failed (the connection is then discarded by the pool).
    pub async fn rollback(self) -> Result<(), StorageError> {
        self.txn.rollback().await?;
        Ok(())
    }
}

impl Deref for WriteTx {
    type Target = DatabaseTransaction;
    fn deref(&self) -> &Self::Target {
        &self.txn
    }
}
