//! How the bundled SQLite is compiled (`LIBSQLITE3_FLAGS` in
//! `.cargo/config.toml`): the pool's connections must not queue on
//! process-wide locks that nothing here needs.

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use storage::testing::TestDatabase;

#[tokio::test]
async fn sqlite_connections_keep_their_own_page_cache_and_count_no_memory_under_a_global_lock() {
    let test = TestDatabase::new_sqlite().await;
    let options: Vec<String> = test
        .db
        .conn()
        .query_all(Statement::from_string(
            DbBackend::Sqlite,
            "PRAGMA compile_options",
        ))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get_by_index::<String>(0).unwrap())
        .collect();
    // With it, every connection's pages sit in one cache behind one mutex.
    assert!(
        !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
        "{options:?}"
    );
    // With memory status on, every allocation takes a global mutex.
    assert!(
        options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
        "{options:?}"
    );
}
