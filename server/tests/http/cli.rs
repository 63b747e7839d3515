//! The real binary.

use storage::testing::TestDatabase;

#[tokio::test]
async fn countersign_migrate_prepares_a_fresh_database() {
    let fresh = TestDatabase::unmigrated().await;
    let workdir = tempfile::tempdir().unwrap();

    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"))
        .arg("migrate")
        .current_dir(workdir.path())
        .env("COUNTERSIGN_DATABASE_URL", &fresh.url)
        .env("COUNTERSIGN_CONFIG", workdir.path().join("absent.toml"))
        .env_remove("COUNTERSIGN_SEED_DEMO")
        .output()
        .await
        .unwrap();

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "migrate failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("migrations applied"), "{stdout}");
    assert!(
        !stdout.contains(":countersign@"),
        "the password must not be printed: {stdout}"
    );
    // The schema is there and empty: migrate seeds nothing.
    assert_eq!(storage::users::count(fresh.db.conn()).await.unwrap(), 0);
    // Running it again is harmless.
    fresh.db.migrate().await.unwrap();
}
