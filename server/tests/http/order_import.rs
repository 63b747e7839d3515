//! `countersign orders import`, the real binary: good orders are stored
//! whole, bad ones refused whole with their line and reason, and the exit
//! status says whether anything was refused.

use chrono::{Duration, Utc};
use serde_json::json;
use std::path::Path;
use std::process::Output;
use storage::testing::TestDatabase;

async fn seeded() -> TestDatabase {
    let test = TestDatabase::new().await;
    engine::demo::seed_demo(
        &test.db,
        "import-demo-password",
        engine::demo::ReferenceStyle::Sandbox,
        engine::now(),
    )
    .await
    .unwrap();
    test
}

async fn import(url: &str, workdir: &Path, file: &str) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"))
        .args(["orders", "import", file])
        .current_dir(workdir)
        .env("COUNTERSIGN_DATABASE_URL", url)
        .env("COUNTERSIGN_CONFIG", workdir.join("absent.toml"))
        .env_remove("COUNTERSIGN_SEED_DEMO")
        .output()
        .await
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The report line for a file line, e.g. `line 3: order 9002: refused: …`.
fn report_line(report: &str, line: usize) -> &str {
    let prefix = format!("line {line}: ");
    report
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no report for line {line} in:\n{report}"))
}

fn upsert(id: &str, total_minor: i64) -> String {
    json!({
        "external_id": id,
        "source_version": 1,
        "customer": "customer3",
        "placed_at": (Utc::now() - Duration::days(6)).to_rfc3339(),
        "currency": "EUR",
        "lines": [{"sku": "TENT-1P", "description": "One-person tent", "quantity": 1, "unit_price_minor": 15900}],
        "total_minor": total_minor,
        "payment_reference": format!("pay_import_{id}"),
        "events": [{"kind": "delivered", "at": (Utc::now() - Duration::days(2)).to_rfc3339()}]
    })
    .to_string()
}

#[tokio::test]
async fn a_json_lines_import_stores_the_good_orders_and_names_each_refused_line_and_why() {
    let test = seeded().await;
    let workdir = tempfile::tempdir().unwrap();
    let file = workdir.path().join("orders.jsonl");
    let mut unknown_customer: serde_json::Value =
        serde_json::from_str(&upsert("9004", 15900)).unwrap();
    unknown_customer["customer"] = json!("nobody");
    let lines = [
        upsert("9001", 15900),
        upsert("9002", 15000),
        r#"{"external_id": "9003", "source_version": "one"}"#.to_owned(),
        String::new(),
        unknown_customer.to_string(),
        upsert("9005", 15900),
        "{not json".to_owned(),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();

    let output = import(&test.url, workdir.path(), "orders.jsonl").await;

    let report = stdout(&output);
    assert!(
        !output.status.success(),
        "refusals fail the command: {report}"
    );
    assert_eq!(report_line(&report, 1), "line 1: order 9001: created");
    assert!(
        report_line(&report, 2)
            .starts_with("line 2: order 9002: refused: total_minor 15000 does not match"),
        "{report}"
    );
    assert!(
        report_line(&report, 3).starts_with("line 3: order 9003: refused: not a valid order"),
        "{report}"
    );
    assert_eq!(
        report_line(&report, 5),
        "line 5: order 9004: refused: no customer named \"nobody\""
    );
    assert_eq!(report_line(&report, 6), "line 6: order 9005: created");
    assert!(
        report_line(&report, 7).starts_with("line 7: (no external_id): refused: not a valid order"),
        "{report}"
    );
    assert!(
        report.ends_with("6 orders: 2 created, 0 updated, 0 unchanged, 4 refused\n"),
        "{report}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("4 of 6 orders"), "{stderr}");
    for (id, stored) in [
        ("9001", true),
        ("9002", false),
        ("9003", false),
        ("9004", false),
        ("9005", true),
    ] {
        let order = storage::orders::get(test.db.conn(), id).await.unwrap();
        assert_eq!(order.is_some(), stored, "order {id}");
    }
    let delivered = storage::orders::get(test.db.conn(), "9001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(delivered.status, "delivered");
}

const CSV_HEADER: &str = "external_id,source_version,customer,placed_at,currency,total_minor,shipping_minor,payment_reference,delivered_at,sku,description,quantity,unit_price_minor";

#[tokio::test]
async fn a_csv_import_never_stores_part_of_an_order_and_a_second_run_changes_nothing() {
    let test = seeded().await;
    let workdir = tempfile::tempdir().unwrap();
    let placed = (Utc::now() - Duration::days(8)).to_rfc3339();
    let delivered = (Utc::now() - Duration::days(3)).to_rfc3339();
    let rows = [
        CSV_HEADER.to_owned(),
        format!(
            "9101,1,customer3,{placed},EUR,5470,490,pay_csv_9101,{delivered},MUG,Enamel mug,2,1250"
        ),
        format!("9102,1,customer3,{placed},EUR,3000,0,pay_csv_9102,,CAP,Cap,1,1500"),
        format!(
            "9101,1,customer3,{placed},EUR,5470,490,pay_csv_9101,{delivered},SOCK,\"Socks, merino\",1,2480"
        ),
        format!("9102,1,customer3,{placed},EUR,3000,0,pay_csv_9102,,GLOVE,Gloves,two,750"),
    ];
    std::fs::write(workdir.path().join("orders.csv"), rows.join("\n")).unwrap();

    let output = import(&test.url, workdir.path(), "orders.csv").await;

    let report = stdout(&output);
    assert!(!output.status.success(), "{report}");
    assert_eq!(report_line(&report, 2), "line 2: order 9101: created");
    assert_eq!(
        report_line(&report, 3),
        "line 3: order 9102: refused: line 5: quantity must be a whole number, got \"two\""
    );
    assert!(report.ends_with("2 orders: 1 created, 0 updated, 0 unchanged, 1 refused\n"));
    let stored = storage::orders::get(test.db.conn(), "9101")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.lines.len(), 2);
    assert_eq!(stored.lines[1].description, "Socks, merino");
    assert_eq!(stored.total.amount_minor, 5470);
    assert!(
        storage::orders::get(test.db.conn(), "9102")
            .await
            .unwrap()
            .is_none(),
        "not even its good row"
    );

    // The same file again: the stored order is a repeat, nothing changes.
    let again = import(&test.url, workdir.path(), "orders.csv").await;
    assert!(
        stdout(&again).contains("line 2: order 9101: unchanged"),
        "{}",
        stdout(&again)
    );
    let (events, _) = storage::journal::list(
        test.db.conn(),
        &storage::journal::JournalFilter {
            order_id: Some("9101".into()),
            ..Default::default()
        },
        0,
        10,
    )
    .await
    .unwrap();
    assert_eq!(events.len(), 1, "one order.created, no second write");
    assert_eq!(events[0].actor, "cli:orders-import");
}

#[tokio::test]
async fn an_import_of_only_good_orders_succeeds() {
    let test = seeded().await;
    let workdir = tempfile::tempdir().unwrap();
    std::fs::write(
        workdir.path().join("batch.ndjson"),
        format!("{}\n{}\n", upsert("9201", 15900), upsert("9202", 15900)),
    )
    .unwrap();

    let output = import(&test.url, workdir.path(), "batch.ndjson").await;

    assert!(output.status.success(), "{}", stdout(&output));
    assert!(stdout(&output).ends_with("2 orders: 2 created, 0 updated, 0 unchanged, 0 refused\n"));
}
