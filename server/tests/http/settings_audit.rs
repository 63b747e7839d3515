//! Admin changes through the server functions reach the audit trail (the
//! `/audit` page's data and the CSV export) with who made them and the
//! values before and after.

use crate::support::{TestApp, json};
use reqwest::StatusCode;
use serde_json::Value;

/// The change an event records, from its JSON payload.
fn before_after(row: &Value) -> (Value, Value) {
    let payload: Value = serde_json::from_str(row["payload"].as_str().unwrap()).unwrap();
    (payload["before"].clone(), payload["after"].clone())
}

async fn admin_form(app: &TestApp, path: &str, fields: &[(&str, &str)]) -> Value {
    let csrf = app.csrf_token().await;
    let mut with_token = vec![("csrf_token", csrf.as_str())];
    with_token.extend_from_slice(fields);
    let response = app.post_form(path, &with_token).await;
    let status = response.status();
    let body = json(response).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

#[tokio::test]
async fn an_approval_limit_an_admin_raises_is_in_the_audit_trail_and_its_export_with_who_before_and_after()
 {
    let app = TestApp::spawn().await;
    let approver = storage::users::find_by_name(app.db().conn(), "approver")
        .await
        .unwrap()
        .unwrap();
    app.login_ok("admin").await;
    for amount in ["250.00", "4000.00"] {
        admin_form(
            &app,
            "/fn/admin_set_limit",
            &[
                ("user_id", &approver.id),
                ("currency", "EUR"),
                ("amount", amount),
            ],
        )
        .await;
    }
    admin_form(
        &app,
        "/fn/admin_set_roles",
        &[("name", "approver2"), ("roles", "approver, manager")],
    )
    .await;
    let site = admin_form(
        &app,
        "/fn/admin_register_widget_site",
        &[("name", "Shop"), ("origin", "https://shop.example")],
    )
    .await;
    let site_id = site["site_id"].as_str().unwrap();
    admin_form(
        &app,
        "/fn/admin_set_widget_site_enabled",
        &[("site_id", site_id), ("enabled", "false")],
    )
    .await;
    app.logout().await;

    app.login_ok("manager").await;
    let response = app
        .get("/fn/audit_events?query[action]=approval_limit_set&query[user]=admin&page=0")
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let page = json(response).await;
    let rows = page["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{page}");
    assert!(rows.iter().all(|r| r["actor"] == "user:admin"), "{page}");
    assert_eq!(
        before_after(&rows[0]),
        (Value::Null, Value::from("250.00 EUR"))
    );
    assert_eq!(
        before_after(&rows[1]),
        (Value::from("250.00 EUR"), Value::from("4000.00 EUR"))
    );

    // "All settings changes" holds the roles and the widget site too, and
    // nothing that is not a settings change.
    let all = json(
        app.get("/fn/audit_events?query[action]=settings&page=0")
            .await,
    )
    .await;
    let kinds: Vec<&str> = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["actor"] == "user:admin")
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "approval_limit_set",
            "approval_limit_set",
            "roles_changed",
            "widget_site_added",
            "widget_site_changed"
        ]
    );
    let roles = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "roles_changed")
        .unwrap();
    assert_eq!(
        before_after(roles),
        (Value::from("approver"), Value::from("approver,manager"))
    );
    assert!(
        all["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| domain::SettingKind::parse(r["kind"].as_str().unwrap()).is_some()),
        "{all}"
    );

    let csv = app
        .get("/api/v1/audit/events.csv?action=approval_limit_set")
        .await
        .text()
        .await
        .unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let exported: Vec<(String, String, String)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[2].to_owned(), r[3].to_owned(), r[8].to_owned())
        })
        .collect();
    assert_eq!(exported.len(), 2, "{csv}");
    assert_eq!(exported[1].0, "user:admin");
    assert_eq!(exported[1].1, "approval_limit_set");
    let payload: Value = serde_json::from_str(&exported[1].2).unwrap();
    assert_eq!(payload["subject"], "user:approver");
    assert_eq!(payload["before"], "250.00 EUR");
    assert_eq!(payload["after"], "4000.00 EUR");

    let chain = json(app.get("/fn/audit_chain_status").await).await;
    assert_eq!(chain["intact"], true, "{chain}");
}
