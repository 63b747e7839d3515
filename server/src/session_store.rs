//! Sessions live in the application database, sharing its pool: SQLite's or
//! PostgreSQL's store, chosen at start.

use async_trait::async_trait;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use storage::Database;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

/// How far a session's idle expiry must have moved before it is written:
/// an idle timeout ends up to this much earlier than exactly idle minutes.
const EXPIRY_REFRESH: time::Duration = time::Duration::minutes(1);

/// The most ended sessions remembered between a save and its response
/// (a response that fails sets no cookie, so its id is never taken back).
const MAX_ENDED_REMEMBERED: usize = 10_000;

#[derive(Debug, Clone)]
pub struct AnyStore {
    backend: Backend,
    ended: EndedSessions,
}

#[derive(Debug, Clone)]
enum Backend {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

/// Sessions a request found ended (signed out, or replaced by a sign-in)
/// when it came to save them. The session layer still sets the request's
/// cookie on the response; [`crate::middleware::sessions::keep_ended_sessions_ended`]
/// takes it off, so a slow request (a chat turn that waited for the
/// visitor to sign in in another tab) never puts the ended session's
/// cookie back over the new one.
#[derive(Debug, Clone, Default)]
pub struct EndedSessions(Arc<Mutex<HashSet<String>>>);

impl EndedSessions {
    fn remember(&self, id: &Id) {
        let mut ended = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if ended.len() >= MAX_ENDED_REMEMBERED {
            ended.clear();
        }
        ended.insert(id.to_string());
    }

    /// Whether the session with cookie value `id` had ended when its
    /// request saved it (forgotten once asked).
    pub fn take(&self, id: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
    }
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
        AnyStore {
            backend,
            ended: EndedSessions::default(),
        }
    }

    /// The sessions requests found ended when saving them.
    pub fn ended(&self) -> EndedSessions {
        self.ended.clone()
    }

    /// Writes the record as it is, past the skipping of expiry-only saves
    /// and of ended sessions (tests age a stored session this way).
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
        // gone now was ended meanwhile and must stay gone.
        let Some(stored) = self.load(&record.id).await? else {
            self.ended.remember(&record.id);
            return Ok(());
        };
        // A request that changed nothing but the sliding expiry writes it at
        // most once a minute: reading pages writes nothing to the database.
        if stored.data == record.data && record.expiry_date - stored.expiry_date < EXPIRY_REFRESH {
            return Ok(());
        }
        match &self.backend {
            Backend::Sqlite(store) => store.save(record).await,
            Backend::Postgres(store) => store.save(record).await,
        }
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match &self.backend {
            Backend::Sqlite(store) => store.load(id).await,
            Backend::Postgres(store) => store.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match &self.backend {
            Backend::Sqlite(store) => store.delete(id).await,
            Backend::Postgres(store) => store.delete(id).await,
        }
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
