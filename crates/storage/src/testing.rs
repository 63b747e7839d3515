//! Throwaway databases for tests (cargo feature `testing`).
//!
//! Tests run on SQLite by default and on PostgreSQL when `TEST_DATABASE_URL`
//! names a server (`postgres://user:pass@host:port/any_db`; the role needs
//! CREATEDB). Each [`TestDatabase`] is its own database: a file in a fresh
//! temporary directory, or `cs_test_<unix seconds>_<random>` created through
//! that URL and dropped with `WITH (FORCE)` when the value is dropped (in
//! the background when that takes more than two seconds).
//! Databases left behind by a killed run are dropped by a later run once they
//! are more than [`LEFTOVER_AGE_SECS`] old (the creation time is in the name).
//!
//! Failures here are test-setup failures, so they panic with a clear message.

use crate::db::Database;
use rand::Rng;
use sqlx::{Connection, Executor, PgConnection};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::OnceCell;

/// The environment variable that switches tests to PostgreSQL.
pub const ENV: &str = "TEST_DATABASE_URL";
/// Prefix of every test database on PostgreSQL.
pub const PREFIX: &str = "cs_test_";
/// Test databases older than this are someone's leftovers, not a running test.
pub const LEFTOVER_AGE_SECS: u64 = 2 * 60 * 60;

/// A fresh database for one test; removed when dropped.
pub struct TestDatabase {
    /// Connected (and, from [`TestDatabase::new`], migrated).
    pub db: Database,
    /// The URL of this database, for a second connection or a child process.
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Sqlite { _dir: tempfile::TempDir },
    Postgres { admin_url: String, name: String },
}

impl std::fmt::Debug for TestDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestDatabase")
            .field("backend", &self.db.backend())
            .finish_non_exhaustive()
    }
}

impl TestDatabase {
    /// A fresh, migrated database on the backend chosen by `TEST_DATABASE_URL`.
    pub async fn new() -> Self {
        let test = Self::unmigrated().await;
        test.db
            .migrate()
            .await
            .unwrap_or_else(|e| panic!("migrating the test database failed: {e}"));
        test
    }

    /// A fresh, migrated SQLite database whatever `TEST_DATABASE_URL` says
    /// (for what only SQLite has, such as its one writer's queue).
    pub async fn new_sqlite() -> Self {
        let test = Self::sqlite().await;
        test.db
            .migrate()
            .await
            .unwrap_or_else(|e| panic!("migrating the test database failed: {e}"));
        test
    }

    /// A fresh, empty database (no tables), connected.
    pub async fn unmigrated() -> Self {
        match admin_url() {
            Some(admin_url) => Self::postgres(admin_url).await,
            None => Self::sqlite().await,
        }
    }

    /// Whether tests run on PostgreSQL in this process.
    pub fn on_postgres() -> bool {
        admin_url().is_some()
    }

    async fn sqlite() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("countersign-test-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temporary directory: {e}"));
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("test.db").display());
        let db = Database::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("cannot open the SQLite test database: {e}"));
        TestDatabase {
            db,
            url,
            cleanup: Cleanup::Sqlite { _dir: dir },
        }
    }

    async fn postgres(admin_url: String) -> Self {
        static LEFTOVERS: OnceCell<()> = OnceCell::const_new();
        LEFTOVERS.get_or_init(|| drop_leftovers(&admin_url)).await;
        let mut admin = PgConnection::connect(&admin_url)
            .await
            .unwrap_or_else(|e| panic!("cannot reach PostgreSQL at {ENV}: {e}"));
        let mut attempt = 0;
        let name = loop {
            attempt += 1;
            let name = fresh_name();
            // Concurrent CREATE DATABASE from the same template can fail
            // transiently; a taken name is simply replaced by another.
            match admin.execute(&*format!("CREATE DATABASE \"{name}\"")).await {
                Ok(_) => break name,
                Err(e) if attempt < 5 => {
                    tracing::warn!(error = %e, "CREATE DATABASE failed; retrying");
                    tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
                }
                Err(e) => panic!("cannot create a PostgreSQL test database: {e}"),
            }
        };
        let _ = admin.close().await;
        let url = with_database(&admin_url, &name);
        let db = Database::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to the test database {name}: {e}"));
        TestDatabase {
            db,
            url,
            cleanup: Cleanup::Postgres { admin_url, name },
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Cleanup::Postgres { admin_url, name } = &self.cleanup else {
            // The temporary directory removes itself.
            return;
        };
        let (admin_url, name) = (admin_url.clone(), name.clone());
        // Drop runs inside the test's runtime, which must not be blocked on;
        // a short-lived thread with its own runtime does the async work.
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            // The timer must be made inside the runtime, hence the block.
            let dropped = runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(60), drop_database(&admin_url, &name))
                    .await
            });
            if !matches!(dropped, Ok(Ok(()))) {
                // Left for the leftover sweep of a later run.
                eprintln!("note: could not drop test database {name}");
            }
            let _ = done.send(());
        });
        // Usually done in milliseconds. But DROP DATABASE waits until every
        // backend in the cluster has taken note of it, and we have seen a
        // backend of this very test's connections hold it up until the test
        // went away (PostgreSQL logs "still waiting for backend with PID … to
        // accept ProcSignalBarrier"): its client is this test's runtime,
        // blocked right here. So wait briefly, then let the test end; its
        // runtime closes the connections and the drop finishes behind it.
        let _ = finished.recv_timeout(Duration::from_secs(2));
    }
}

fn admin_url() -> Option<String> {
    std::env::var(ENV)
        .ok()
        .map(|url| url.trim().to_owned())
        .filter(|url| !url.is_empty())
        .inspect(|url| {
            assert!(
                url.starts_with("postgres://") || url.starts_with("postgresql://"),
                "{ENV} must be a postgres:// URL (unset it to test on SQLite)"
            );
        })
}

fn fresh_name() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let random: u32 = rand::thread_rng().r#gen();
    format!("{PREFIX}{secs}_{random:08x}")
}

/// The creation time encoded in a test database's name.
fn created_at(name: &str) -> Option<u64> {
    name.strip_prefix(PREFIX)?.split('_').next()?.parse().ok()
}

async fn drop_database(admin_url: &str, name: &str) -> Result<(), sqlx::Error> {
    let mut admin = PgConnection::connect(admin_url).await?;
    let result = admin
        .execute(&*format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            name.replace('"', "\"\"")
        ))
        .await;
    let _ = admin.close().await;
    result.map(|_| ())
}

/// Best effort: drops test databases old enough to be leftovers of killed runs.
async fn drop_leftovers(admin_url: &str) {
    let Ok(mut admin) = PgConnection::connect(admin_url).await else {
        return;
    };
    let names: Vec<(String,)> =
        sqlx::query_as("SELECT datname FROM pg_database WHERE datname LIKE 'cs\\_test\\_%'")
            .fetch_all(&mut admin)
            .await
            .unwrap_or_default();
    let _ = admin.close().await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    for (name,) in names {
        if created_at(&name).is_some_and(|at| now.saturating_sub(at) > LEFTOVER_AGE_SECS) {
            let _ = drop_database(admin_url, &name).await;
        }
    }
}

/// `url` with its database name replaced (user, host, port and query kept).
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{name}", &base[..authority_end]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_in_a_url_is_replaced() {
        assert_eq!(
            with_database("postgres://u:p@127.0.0.1:5432/countersign", "cs_test_1_a"),
            "postgres://u:p@127.0.0.1:5432/cs_test_1_a"
        );
        assert_eq!(
            with_database("postgres://u:p@host/db?sslmode=disable", "x"),
            "postgres://u:p@host/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://host", "x"), "postgres://host/x");
    }

    #[test]
    fn test_database_names_carry_their_creation_time() {
        let name = fresh_name();
        assert!(name.starts_with(PREFIX) && name.len() < 63, "{name}");
        assert!(created_at(&name).is_some_and(|at| at > 1_700_000_000));
        assert_eq!(created_at("countersign"), None);
    }
}
