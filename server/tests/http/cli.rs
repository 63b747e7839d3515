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

/// Runs the binary against `url` and returns its stdout (asserting success).
async fn countersign(url: &str, workdir: &std::path::Path, args: &[&str]) -> String {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"))
        .args(args)
        .current_dir(workdir)
        .env("COUNTERSIGN_DATABASE_URL", url)
        .env("COUNTERSIGN_CONFIG", workdir.join("absent.toml"))
        .env_remove("COUNTERSIGN_SEED_DEMO")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{args:?} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn field<'a>(stdout: &'a str, label: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|line| line.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} in {stdout}"))
        .trim()
}

#[tokio::test]
async fn the_widget_commands_register_a_site_and_sign_a_token_that_opens_a_session() {
    let test = TestDatabase::new().await;
    engine::demo::seed_demo(
        &test.db,
        "cli-demo-password",
        engine::demo::ReferenceStyle::Sandbox,
        engine::now(),
    )
    .await
    .unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let key_file = workdir.path().join("site.pem");
    let key_path = key_file.to_str().unwrap();

    let registered = countersign(
        &test.url,
        workdir.path(),
        &[
            "widget",
            "register",
            "--name",
            "Shop",
            "--origin",
            "https://shop.example",
            "--admin",
            "admin",
            "--key-out",
            key_path,
        ],
    )
    .await;
    let site = field(&registered, "site id:").to_owned();
    let key = field(&registered, "key id:").to_owned();
    assert!(
        !registered.contains("BEGIN PRIVATE KEY"),
        "written to the file only"
    );
    let pem = std::fs::read_to_string(&key_file).unwrap();
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let listed = countersign(&test.url, workdir.path(), &["widget", "sites"]).await;
    assert!(listed.contains(&site) && listed.contains(&key) && listed.contains("active"));
    assert!(listed.contains("signs in no customer yet"), "{listed}");

    let sign = [
        "widget",
        "token",
        "--site",
        &site,
        "--key-id",
        &key,
        "--key-file",
        key_path,
        "--customer",
        "customer3",
    ];
    // A new site may sign in nobody.
    let token = countersign(&test.url, workdir.path(), &sign).await;
    let refused = engine::widget::Widget::new(test.db.clone(), engine::Clock::system())
        .open_session(&site, token.trim())
        .await;
    assert!(
        matches!(
            refused,
            Err(engine::widget::WidgetTokenError::UnknownCustomer)
        ),
        "{refused:?}"
    );

    let allowed = countersign(
        &test.url,
        workdir.path(),
        &[
            "widget",
            "allow-customer",
            "--site",
            &site,
            "--customer",
            "customer3",
            "--admin",
            "admin",
        ],
    )
    .await;
    assert!(allowed.contains("may sign in customer3"), "{allowed}");
    let listed = countersign(&test.url, workdir.path(), &["widget", "sites"]).await;
    assert!(listed.contains("may sign in: customer3"), "{listed}");

    let token = countersign(&test.url, workdir.path(), &sign).await;
    let opened = engine::widget::Widget::new(test.db.clone(), engine::Clock::system())
        .open_session(&site, token.trim())
        .await
        .unwrap();
    assert_eq!(opened.customer.name, "customer3");
}

#[tokio::test]
async fn accounts_made_or_disabled_at_the_console_are_in_the_audit_trail_as_the_console() {
    let fresh = TestDatabase::new().await;
    let workdir = tempfile::tempdir().unwrap();
    countersign(
        &fresh.url,
        workdir.path(),
        &["user", "add", "root", "--role", "admin"],
    )
    .await;
    countersign(&fresh.url, workdir.path(), &["user", "disable", "root"]).await;

    let filter = storage::journal::JournalFilter {
        stream: Some(storage::journal::SETTINGS_STREAM.to_owned()),
        ..Default::default()
    };
    let (events, _) = storage::journal::list(fresh.db.conn(), &filter, 0, 10)
        .await
        .unwrap();
    let seen: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e.actor.as_str(), e.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("system:cli", "user_created"),
            ("system:cli", "user_disabled")
        ]
    );
    let disabled: serde_json::Value = serde_json::from_str(&events[1].payload).unwrap();
    assert_eq!(disabled["subject"], "user:root");
    assert_eq!(disabled["before"], "enabled");
    assert_eq!(disabled["after"], "disabled");
}
