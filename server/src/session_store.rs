//! Sessions live in the application database, sharing its pool: SQLite's or
//! PostgreSQL's store, chosen at start.

use async_trait::async_trait;
use storage::Database;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

/// How far a session's idle expiry must have moved before it is written:
/// an idle timeout ends up to this much earlier than exactly idle minutes.
const EXPIRY_REFRESH: time::Duration = time::Duration::minutes(1);

#[derive(Debug, Clone)]
pub enum AnyStore {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
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
            return Ok(AnyStore::Sqlite(store));
        }
        if let Some(pool) = db.postgres_pool() {
            let store = PostgresStore::new(pool.clone());
            store.migrate().await?;
            return Ok(AnyStore::Postgres(store));
        }
        anyhow::bail!("no pool for the session store")
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
        match self {
            AnyStore::Sqlite(store) => store.create(record).await,
            AnyStore::Postgres(store) => store.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        // Every session is saved after each request (sliding idle expiry), and
        // the stores' save is an upsert: a slow request that loaded the session
        // before a concurrent sign-out would bring it back. The session layer
        // only calls `save` for sessions it found in the store, so one that is
        // gone now was ended meanwhile and must stay gone.
        let Some(stored) = self.load(&record.id).await? else {
            return Ok(());
        };
        // A request that changed nothing but the sliding expiry writes it at
        // most once a minute: reading pages writes nothing to the database.
        if stored.data == record.data && record.expiry_date - stored.expiry_date < EXPIRY_REFRESH {
            return Ok(());
        }
        match self {
            AnyStore::Sqlite(store) => store.save(record).await,
            AnyStore::Postgres(store) => store.save(record).await,
        }
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self {
            AnyStore::Sqlite(store) => store.load(id).await,
            AnyStore::Postgres(store) => store.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match self {
            AnyStore::Sqlite(store) => store.delete(id).await,
            AnyStore::Postgres(store) => store.delete(id).await,
        }
    }
}

#[async_trait]
impl ExpiredDeletion for AnyStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match self {
            AnyStore::Sqlite(store) => store.delete_expired().await,
            AnyStore::Postgres(store) => store.delete_expired().await,
        }
    }
}
