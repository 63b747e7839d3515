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

/// Runs the binary and returns its whole output, whether it succeeded or not.
async fn countersign_output(
    url: &str,
    workdir: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    countersign_with_env(url, workdir, args, &[]).await
}

/// [`countersign_output`] with more environment variables set.
async fn countersign_with_env(
    url: &str,
    workdir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"))
        .args(args)
        .current_dir(workdir)
        .env("COUNTERSIGN_DATABASE_URL", url)
        .env("COUNTERSIGN_CONFIG", workdir.join("absent.toml"))
        .env_remove("COUNTERSIGN_SEED_DEMO")
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap()
}

/// A dead-lettered notification, as the runner leaves one after its last
/// attempt; returns its id.
async fn dead_letter(db: &storage::Database, item: storage::work::NewWork) -> String {
    let now = engine::now();
    let tx = db.begin_write().await.unwrap();
    storage::work::enqueue(&*tx, std::slice::from_ref(&item), now)
        .await
        .unwrap();
    let claimed = storage::work::claim(
        &*tx,
        &item.lane,
        Some(std::slice::from_ref(&item.kind)),
        "worker-gone",
        now + chrono::Duration::seconds(30),
        now,
        1,
    )
    .await
    .unwrap();
    let id = claimed[0].id.clone();
    let lost = storage::work::finish(
        &*tx,
        &[storage::work::Finish::Dead {
            id: id.clone(),
            error: "the mail relay refused it".to_owned(),
        }],
        "worker-gone",
        now,
    )
    .await
    .unwrap();
    assert!(lost.is_empty());
    tx.commit().await.unwrap();
    id
}

#[tokio::test]
async fn an_operator_without_a_browser_lists_and_retries_dead_letters_and_is_told_what_is_refused()
{
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
    let dir = workdir.path();
    let dead = dead_letter(
        &test.db,
        engine::work::person_notify("prp_cli_dead", "a refund needs a person", engine::now()),
    )
    .await;

    let listed = countersign(&test.url, dir, &["work", "list", "--admin", "manager"]).await;
    let row = listed
        .lines()
        .find(|line| line.starts_with(&dead))
        .unwrap_or_else(|| panic!("the dead letter is listed: {listed}"));
    assert!(row.contains("dead"), "{row}");
    assert!(row.contains("the mail relay refused it"), "{row}");

    let retried = countersign(
        &test.url,
        dir,
        &["work", "retry", &dead, "--admin", "admin"],
    )
    .await;
    assert!(retried.contains("queued"), "{retried}");
    let item = storage::work::get(test.db.conn(), &dead)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item.state, storage::work::QUEUED);
    assert_eq!(item.attempts, 0, "a retry starts from the first attempt");
    let (events, _) = storage::journal::list(
        test.db.conn(),
        &storage::journal::JournalFilter {
            actor: Some("user:admin".to_owned()),
            ..Default::default()
        },
        0,
        50,
    )
    .await
    .unwrap();
    assert!(
        events.iter().any(|event| event.kind == "work_retried"),
        "the retry is journaled with who asked: {events:?}"
    );

    // A second retry of the same item: it is no longer dead.
    let again = countersign_output(
        &test.url,
        dir,
        &["work", "retry", &dead, "--admin", "admin"],
    )
    .await;
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("only dead-lettered work can be retried"),
        "{stderr}"
    );

    // Customers may not act on the operations view.
    let customer =
        countersign_output(&test.url, dir, &["work", "list", "--admin", "customer"]).await;
    assert!(!customer.status.success());
    assert!(
        String::from_utf8_lossy(&customer.stderr).contains("refused"),
        "{}",
        String::from_utf8_lossy(&customer.stderr)
    );
}

#[tokio::test]
async fn an_admin_at_the_console_pins_a_peers_key_and_allows_a_pair_and_an_approver_cannot() {
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
    let dir = workdir.path();
    let key = "CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk";
    let pin = |admin: &'static str| {
        [
            "gateway",
            "pin-key",
            "--group",
            "support",
            "--version",
            "1",
            "--public-key",
            key,
            "--admin",
            admin,
        ]
    };
    let refused = countersign_output(&test.url, dir, &pin("approver")).await;
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("only admins change what the gateway trusts"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let pinned = countersign(&test.url, dir, &pin("admin")).await;
    assert_eq!(pinned.trim(), "pinned support/gateway/v1");
    let allowed = countersign(
        &test.url,
        dir,
        &[
            "gateway",
            "allow",
            "--from",
            "support",
            "--to",
            "returns",
            "--kind",
            "returns.inspection",
            "--admin",
            "admin",
        ],
    )
    .await;
    assert_eq!(
        allowed.trim(),
        "support may send returns.inspection tasks to returns"
    );
    let listed = countersign(&test.url, dir, &["gateway", "trust"]).await;
    assert!(
        listed.contains(&format!("support/gateway/v1  {key}  current")),
        "{listed}"
    );
    assert!(
        listed.contains("support → returns: returns.inspection"),
        "{listed}"
    );
}

#[tokio::test]
async fn an_admin_at_the_console_issues_a_plain_peer_its_secret_once_and_revokes_it() {
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
    let dir = workdir.path();
    let issue = [
        "gateway",
        "issue-peer-secret",
        "--group",
        "plain-agent",
        "--admin",
        "admin",
    ];
    // The secret alone on stdout (for a script to hand on); only its
    // digest is stored.
    let secret = countersign(&test.url, dir, &issue).await;
    let secret = secret.trim();
    assert!(
        secret.starts_with("cspk_") && !secret.contains(' '),
        "{secret}"
    );
    let stored = storage::gateway::peer_secrets::list(test.db.conn())
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(
        stored[0].secret_digest,
        engine::gateway::secret_digest(secret)
    );
    assert_ne!(stored[0].secret_digest, secret);

    let refused = countersign_output(
        &test.url,
        dir,
        &[
            "gateway",
            "issue-peer-secret",
            "--group",
            "plain-agent",
            "--admin",
            "approver",
        ],
    )
    .await;
    assert!(!refused.status.success());
    let revoke = [
        "gateway",
        "revoke-peer-secrets",
        "--group",
        "plain-agent",
        "--admin",
        "admin",
    ];
    let revoked = countersign(&test.url, dir, &revoke).await;
    assert_eq!(
        revoked.trim(),
        "revoked 1 secret(s) of plain-agent: its requests are refused now"
    );
    let again = countersign(&test.url, dir, &revoke).await;
    assert_eq!(again.trim(), "plain-agent had no live secret");
}

#[tokio::test]
async fn an_admin_rotates_the_groups_key_and_the_old_version_stays_published_for_the_overlap() {
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
    let dir = workdir.path();
    let master = countersign(&test.url, dir, &["gateway", "new-master-key"]).await;
    let env = [
        ("COUNTERSIGN_GATEWAY_GROUP", "support"),
        ("COUNTERSIGN_GATEWAY_MASTER_KEY", master.trim()),
    ];
    let run = |args: &'static [&'static str]| {
        let (url, env) = (test.url.clone(), env);
        async move {
            let output = countersign_with_env(&url, dir, args, &env).await;
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8_lossy(&output.stdout).into_owned()
        }
    };
    let first = run(&["gateway", "keys"]).await;
    assert!(first.starts_with("support/gateway/v1  "), "{first}");
    assert!(first.trim_end().ends_with("current"), "{first}");
    let rotated = run(&["gateway", "rotate-key", "--admin", "admin"]).await;
    assert!(
        rotated.starts_with("signing with support/gateway/v2"),
        "{rotated}"
    );
    let keys = run(&["gateway", "keys"]).await;
    let lines: Vec<&str> = keys.lines().collect();
    assert_eq!(lines.len(), 2, "{keys}");
    assert!(
        lines[0].starts_with("support/gateway/v1") && lines[0].contains("verifies until"),
        "{keys}"
    );
    assert!(
        lines[1].starts_with("support/gateway/v2") && lines[1].ends_with("current"),
        "{keys}"
    );

    let without = countersign_output(&test.url, dir, &["gateway", "keys"]).await;
    assert!(!without.status.success());
    assert!(String::from_utf8_lossy(&without.stderr).contains("COUNTERSIGN_GATEWAY_MASTER_KEY"));
}

#[tokio::test]
async fn an_admin_pins_a_peers_keys_from_its_signed_card_first_by_fingerprint_then_by_its_vouching()
{
    let returns = crate::groups::group("returns", None).await;
    let own_keys = crate::groups::own_keys(&returns);
    let (v1, first) = own_keys.published().await.unwrap().remove(0);
    let print = gateway::fingerprint(&first.public_key);
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
    let dir = workdir.path();
    let pin_card = |fingerprint: Option<&str>| {
        let mut args = vec![
            "gateway".to_owned(),
            "pin-card".into(),
            "--group".into(),
            "returns".into(),
            "--url".into(),
            returns.address.clone(),
            "--admin".into(),
            "admin".into(),
        ];
        if let Some(fingerprint) = fingerprint {
            args.extend(["--fingerprint".to_owned(), fingerprint.to_owned()]);
        }
        args
    };
    let run = |args: Vec<String>| {
        let url = test.url.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            countersign_output(&url, dir, &args).await
        }
    };

    // First contact: the card verifies, but only the fingerprint its admin
    // reads out makes it trusted.
    let asked = run(pin_card(None)).await;
    assert!(!asked.status.success());
    let said = String::from_utf8_lossy(&asked.stderr);
    assert!(
        said.contains(&format!("{v1} has the fingerprint {print}")),
        "{said}"
    );
    let pinned = run(pin_card(Some(&print))).await;
    let out = String::from_utf8_lossy(&pinned.stdout);
    assert!(
        pinned.status.success(),
        "{}",
        String::from_utf8_lossy(&pinned.stderr)
    );
    assert!(out.contains("the fingerprint you confirmed"), "{out}");
    assert!(out.contains("pinned returns/gateway/v1"), "{out}");

    // Returns rotates; the card its pinned v1 signed brings v2 along.
    let v2 = own_keys
        .rotate(&engine::settings::ChangedBy::system("test"))
        .await
        .unwrap();
    let learned = run(pin_card(None)).await;
    let out = String::from_utf8_lossy(&learned.stdout);
    assert!(
        learned.status.success(),
        "{}",
        String::from_utf8_lossy(&learned.stderr)
    );
    assert!(out.contains("vouched for by a key pinned before"), "{out}");
    assert!(out.contains(&format!("pinned {v2}")), "{out}");
    assert!(
        out.contains(&format!("retired {v1} (the card says so)")),
        "{out}"
    );
}
