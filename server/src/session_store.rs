//! Sessions live in the application database, sharing its pool: SQLite's or
//! PostgreSQL's store, chosen at start.

use async_trait::async_trait;
use std::cell::Cell;
use std::future::Future;
use storage::Database;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

/// How far a session's idle expiry must have moved before it is written:
/// an idle timeout ends up to this much earlier than exactly idle minutes.
const EXPIRY_REFRESH: time::Duration = time::Duration::minutes(1);

/// How long an ended session is remembered as ended: longer than a request
/// sent with its cookie takes to arrive after the browser took the new one
/// (slow requests that loaded it before are caught when they save instead).
const ENDED_REMEMBERED_FOR: time::Duration = time::Duration::minutes(1);

/// The data of an ended session's tombstone; no session the application
/// writes has this key.
const ENDED_MARK: &str = "__countersign_session_ended";

#[derive(Debug, Clone)]
pub struct AnyStore {
    backend: Backend,
}

#[derive(Debug, Clone)]
enum Backend {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

tokio::task_local! {
    /// Whether the request being answered carried a session that was ended
    /// elsewhere (signed out, or replaced by a sign-in in another tab).
    static CAME_WITH_AN_ENDED_SESSION: Cell<bool>;
}

/// Runs a request, saying whether it came with a session that had been
/// ended (signed out, or replaced by a sign-in in another tab) by the time
/// the session layer loaded or saved it. Such a request was sent before its
/// browser took the cookie that replaced the session: any session cookie it
/// answers with (the ended one again, its removal, or a new visitor's) would
/// land over that newer cookie and sign the browser out.
pub async fn noting_ended_sessions<F: Future>(request: F) -> (F::Output, bool) {
    CAME_WITH_AN_ENDED_SESSION
        .scope(Cell::new(false), async {
            let output = request.await;
            (output, CAME_WITH_AN_ENDED_SESSION.with(Cell::get))
        })
        .await
}

fn note_an_ended_session() {
    // Outside a request (tests, tools) there is nobody to tell.
    let _ = CAME_WITH_AN_ENDED_SESSION.try_with(|ended| ended.set(true));
}

fn has_ended(record: &Record) -> bool {
    record.data.contains_key(ENDED_MARK)
}

impl AnyStore {
    /// Creates the store on the database's own pool and its table.
    ///
    /// # Errors
    /// The session table could not be created.
    pub async fn for_database(db: &Database) -> anyhow::Result<Self> {
        if let Some(pool) = db.sqlite_pool() {
            let store = SqliteStore::new(pool.clone());
            store.migrate().await?;
            return Ok(AnyStore::with(Backend::Sqlite(store)));
        }
        if let Some(pool) = db.postgres_pool() {
            let store = PostgresStore::new(pool.clone());
            store.migrate().await?;
            return Ok(AnyStore::with(Backend::Postgres(store)));
        }
        anyhow::bail!("no pool for the session store")
    }

    fn with(backend: Backend) -> Self {
        AnyStore { backend }
    }

    /// The record as stored: a live session or an ended one's tombstone.
    async fn load_stored(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match &self.backend {
            Backend::Sqlite(store) => store.load(id).await,
            Backend::Postgres(store) => store.load(id).await,
        }
    }

    /// Writes the record as it is, past the skipping of expiry-only saves
    /// and of ended sessions: the real writes of `save`, tombstones, and
    /// tests that age a stored session.
    ///
    /// # Errors
    /// Store failures.
    pub async fn save_as_is(&self, record: &Record) -> session_store::Result<()> {
        match &self.backend {
            Backend::Sqlite(store) => store.save(record).await,
            Backend::Postgres(store) => store.save(record).await,
        }
    }

    /// Deletes expired sessions now and then, until shutdown.
    pub fn spawn_expired_cleanup(&self, tasks: &runner::Supervisor) {
        let store = self.clone();
        let stopping = tasks.stopping();
        tasks.spawn("expired sessions", async move {
            let mut every = tokio::time::interval(std::time::Duration::from_secs(600));
            loop {
                tokio::select! {
                    _ = every.tick() => {}
                    () = stopping.cancelled() => return,
                }
                if let Err(error) = store.delete_expired().await {
                    tracing::warn!(%error, "could not delete expired sessions");
                }
            }
        });
    }
}

#[async_trait]
impl SessionStore for AnyStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        match &self.backend {
            Backend::Sqlite(store) => store.create(record).await,
            Backend::Postgres(store) => store.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        // Every session is saved after each request (sliding idle expiry), and
        // the stores' save is an upsert: a slow request that loaded the session
        // before a concurrent sign-out would bring it back. The session layer
        // only calls `save` for sessions it found in the store, so one that is
        // gone or ended now was ended meanwhile and must stay so.
        let stored = match self.load_stored(&record.id).await? {
            Some(stored) if !has_ended(&stored) => stored,
            _ => {
                note_an_ended_session();
                return Ok(());
            }
        };
        // A request that changed nothing but the sliding expiry writes it at
        // most once a minute: reading pages writes nothing to the database.
        if stored.data == record.data && record.expiry_date - stored.expiry_date < EXPIRY_REFRESH {
            return Ok(());
        }
        self.save_as_is(record).await
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self.load_stored(id).await? {
            Some(record) if has_ended(&record) => {
                note_an_ended_session();
                Ok(None)
            }
            record => Ok(record),
        }
    }

    /// Ends the session, leaving a tombstone for a minute instead of nothing:
    /// on any replica, a request already on its way with this cookie then
    /// knows the session was ended rather than never existed or expired.
    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        let tombstone = Record {
            id: *id,
            data: [(ENDED_MARK.to_owned(), serde_json::Value::Bool(true))].into(),
            expiry_date: time::OffsetDateTime::now_utc() + ENDED_REMEMBERED_FOR,
        };
        self.save_as_is(&tombstone).await
    }
}

#[async_trait]
impl ExpiredDeletion for AnyStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match &self.backend {
            Backend::Sqlite(store) => store.delete_expired().await,
            Backend::Postgres(store) => store.delete_expired().await,
        }
    }
}
