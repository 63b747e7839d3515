//! The gateway's trust changed from `/admin` (its server functions, as the
//! forms post them): two real groups set up from nothing by their admins'
//! forms alone, the pair and key then withdrawn, and every mistake
//! answered with what is wrong and nothing stored.

use crate::groups::{answered, group, inspection, sender};
use crate::support::TestApp;
use reqwest::StatusCode;
use storage::gateway::{peers, trust};

/// `app`'s admin posts `fields` (with a CSRF token) to server function
/// `name`: the status and what it said (the sentence, or the error's
/// message).
async fn admin_posts(app: &TestApp, name: &str, fields: &[(&str, &str)]) -> (StatusCode, String) {
    let csrf = app.csrf_token().await;
    let mut all = vec![("csrf_token", csrf.as_str())];
    all.extend_from_slice(fields);
    let response = app.post_form(&format!("/fn/{name}"), &all).await;
    let status = response.status();
    let body = response.text().await.unwrap();
    let said = match serde_json::from_str::<serde_json::Value>(&body) {
        Ok(serde_json::Value::String(sentence)) => sentence,
        Ok(error) => error["error"]["message"]
            .as_str()
            .map_or(body.clone(), str::to_owned),
        Err(_) => body,
    };
    (status, said)
}

/// The fingerprint the first-contact refusal names for the admin to
/// confirm (what the peer's admin would read out).
fn fingerprint_in(body: &str) -> String {
    let start = body.find("has the fingerprint ").unwrap() + "has the fingerprint ".len();
    body[start..].split_whitespace().next().unwrap().to_owned()
}

#[tokio::test]
async fn two_groups_set_up_by_their_admins_forms_alone_exchange_a_task_and_stop_when_the_pair_is_withdrawn()
 {
    let support = group("support", None).await;
    let returns = group("returns", None).await;
    engine::demo::seed_returned_parcels(returns.db(), chrono::Utc::now())
        .await
        .unwrap();
    support.login_ok("admin").await;
    returns.login_ok("admin").await;

    // Support reaches returns, and pins its key from its card: the first
    // time only with the fingerprint confirmed out of band.
    let (status, body) = admin_posts(
        &support,
        "admin_gateway_set_peer",
        &[("group", "returns"), ("url", &returns.url("/a2a"))],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("returns is reached at"), "{body}");
    let pin_card = |fingerprint: String| {
        let base = returns.url("");
        let support = &support;
        async move {
            admin_posts(
                support,
                "admin_gateway_pin_card",
                &[
                    ("group", "returns"),
                    ("url", &base),
                    ("fingerprint", &fingerprint),
                ],
            )
            .await
        }
    };
    let first_contact = admin_posts_first_contact(&support, &returns).await;
    assert!(
        first_contact.contains("confirm with its admin that returns/gateway/v1"),
        "{first_contact}"
    );
    assert!(
        trust::pinned_keys(support.db().conn())
            .await
            .unwrap()
            .is_empty()
    );
    let (status, body) = pin_card("0000 0000".to_owned()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains("do not pin it"), "{body}");
    let (status, body) = pin_card(fingerprint_in(&first_contact)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("the fingerprint you confirmed"), "{body}");
    assert!(body.contains("pinned returns/gateway/v1"), "{body}");

    // Returns pins support's key the same way and allows its inspections.
    let support_first = admin_posts_first_contact(&returns, &support).await;
    let (status, body) = admin_posts(
        &returns,
        "admin_gateway_pin_card",
        &[
            ("group", "support"),
            ("url", &support.url("")),
            ("fingerprint", &fingerprint_in(&support_first)),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let allow = [
        ("from", "support"),
        ("to", "returns"),
        ("kind", "returns.inspection"),
    ];
    let (status, body) = admin_posts(&returns, "admin_gateway_allow_pair", &allow).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body.trim_matches('"'),
        "support → returns: returns.inspection is allowed"
    );
    let (_, again) = admin_posts(&returns, "admin_gateway_allow_pair", &allow).await;
    assert!(again.contains("was allowed already"), "{again}");

    let sender = sender(&support);
    let task = answered(&sender, &sender.send(inspection("4821")).await.unwrap()).await;
    assert_eq!(task.state, "completed", "{task:?}");

    // Withdrawn: the next task is refused at returns for its pair.
    let (status, body) = admin_posts(&returns, "admin_gateway_withdraw_pair", &allow).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("refused from now on"), "{body}");
    let refused = answered(&sender, &sender.send(inspection("4821")).await.unwrap()).await;
    assert_eq!(refused.state, "refused", "{refused:?}");
    assert!(refused.error.unwrap().starts_with("pair_not_allowed"));

    // Allowed again, then support's key retired now: refused for its key.
    admin_posts(&returns, "admin_gateway_allow_pair", &allow).await;
    let (status, body) = admin_posts(
        &returns,
        "admin_gateway_retire_key",
        &[("kid", "support/gateway/v1"), ("when", "now")],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let retired = answered(&sender, &sender.send(inspection("4821")).await.unwrap()).await;
    assert_eq!(retired.state, "refused", "{retired:?}");
    assert!(retired.error.unwrap().contains("retired"));

    // Every change is in the settings journal, by the admin.
    let journal = crate::groups::journal_kinds(&returns, storage::journal::SETTINGS_STREAM).await;
    for kind in [
        "gateway_key_pinned",
        "gateway_pair_allowed",
        "gateway_pair_withdrawn",
        "gateway_key_retired",
    ] {
        assert!(journal.iter().any(|k| k == kind), "{kind}: {journal:?}");
    }
}

/// What `at`'s admin is told pinning `of`'s card with no fingerprint.
async fn admin_posts_first_contact(at: &TestApp, of: &TestApp) -> String {
    let name = of.engine.gateway.as_ref().unwrap().group.to_string();
    let (status, body) = admin_posts(
        at,
        "admin_gateway_pin_card",
        &[("group", &name), ("url", &of.url("")), ("fingerprint", "")],
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    body
}

#[tokio::test]
async fn a_pair_allowed_without_signatures_is_listed_apart_and_withdrawn_on_its_own() {
    let returns = group("returns", None).await;
    returns.login_ok("admin").await;
    let unsigned = [
        ("from", "plain-agent"),
        ("to", "returns"),
        ("kind", "returns.inspection"),
        ("unsigned", "on"),
    ];
    let (status, body) = admin_posts(&returns, "admin_gateway_allow_pair", &unsigned).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("without signatures"), "{body}");
    let trust = engine::gateway::GatewayTrust::new(returns.db().clone(), engine::Clock::system());
    assert_eq!(trust.unsigned_pairs().await.unwrap().len(), 1);
    assert!(
        trust::pairs(returns.db().conn()).await.unwrap().is_empty(),
        "no signed pair"
    );

    let (status, body) = admin_posts(&returns, "admin_gateway_withdraw_pair", &unsigned).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(trust.unsigned_pairs().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_mistake_in_a_trust_form_is_answered_with_what_is_wrong_and_nothing_is_stored() {
    let returns = group("returns", None).await;
    returns.login_ok("admin").await;
    for (function, fields, expected) in [
        (
            "admin_gateway_set_peer",
            vec![
                ("group", "Support Team"),
                ("url", "https://support.example/a2a"),
            ],
            "group name \"Support Team\" is not valid: 1–63 characters of a–z",
        ),
        (
            "admin_gateway_set_peer",
            vec![("group", "support"), ("url", "ftp://support.example")],
            "must be an http or https URL",
        ),
        (
            "admin_gateway_allow_pair",
            vec![
                ("from", "support"),
                ("to", "returns"),
                ("kind", "Returns Inspection"),
            ],
            "task kind \"Returns Inspection\" is not valid: 1–64 characters",
        ),
        (
            "admin_gateway_retire_key",
            vec![("kid", "nonsense"), ("when", "now")],
            "is not a key version (group/key/vN)",
        ),
        (
            "admin_gateway_retire_key",
            vec![("kid", "support/gateway/v1"), ("when", "later")],
            "when must be now or overlap",
        ),
        (
            "admin_gateway_pin_card",
            vec![
                ("group", "support"),
                ("url", "http://127.0.0.1:9"),
                ("fingerprint", ""),
            ],
            "the agent card could not be fetched",
        ),
    ] {
        let (status, body) = admin_posts(&returns, function, &fields).await;
        assert!(
            status.is_client_error() || status == StatusCode::SERVICE_UNAVAILABLE,
            "{function}: {status} {body}"
        );
        assert!(body.contains(expected), "{function}: {body}");
    }
    let (status, body) = admin_posts(
        &returns,
        "admin_gateway_retire_key",
        &[("kid", "support/gateway/v1"), ("when", "now")],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body.contains("support/gateway/v1 is not pinned"), "{body}");
    assert!(
        trust::pinned_keys(returns.db().conn())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(trust::pairs(returns.db().conn()).await.unwrap().is_empty());
    assert!(peers::list(returns.db().conn()).await.unwrap().is_empty());
}

#[tokio::test]
async fn only_an_admin_with_the_pages_csrf_token_changes_the_gateways_trust() {
    let returns = group("returns", None).await;
    let allow = [
        ("from", "support"),
        ("to", "returns"),
        ("kind", "returns.inspection"),
    ];
    returns.login_ok("approver").await;
    let (status, body) = admin_posts(&returns, "admin_gateway_allow_pair", &allow).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    returns.login_ok("admin").await;
    let mut forged = vec![("csrf_token", "not-the-token")];
    forged.extend_from_slice(&allow);
    let response = returns
        .post_form("/fn/admin_gateway_allow_pair", &forged)
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(trust::pairs(returns.db().conn()).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_secret_issued_from_the_page_lets_a_plain_peer_send_until_it_is_revoked_from_the_page() {
    let returns = group("returns", None).await;
    returns.login_ok("admin").await;
    let (status, secret) = admin_posts(
        &returns,
        "admin_gateway_issue_peer_secret",
        &[("group", "plain-agent")],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{secret}");
    assert!(secret.starts_with("cspk_"), "{secret}");
    admin_posts(
        &returns,
        "admin_gateway_allow_pair",
        &[
            ("from", "plain-agent"),
            ("to", "returns"),
            ("kind", "returns.inspection"),
            ("unsigned", "on"),
        ],
    )
    .await;
    let send = |id: &'static str| {
        let message = serde_json::json!({ "messageId": id, "role": "ROLE_USER",
            "parts": [{ "data": { "order_id": "4821" } }] });
        crate::groups::send_message(&returns, Some(&secret), message)
    };
    let taken = send("from-page-1").await;
    assert_eq!(
        taken["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
        "{taken}"
    );

    let (status, body) = admin_posts(
        &returns,
        "admin_gateway_revoke_peer_secrets",
        &[("group", "plain-agent")],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        "revoked 1 secret(s) of plain-agent: its requests are refused now"
    );
    let refused = send("from-page-2").await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("revoked"),
        "{refused}"
    );
    let journal = crate::groups::journal_kinds(&returns, storage::journal::SETTINGS_STREAM).await;
    assert!(
        journal.iter().any(|k| k == "gateway_peer_secret_issued"),
        "{journal:?}"
    );
    assert!(
        journal.iter().any(|k| k == "gateway_peer_secrets_revoked"),
        "{journal:?}"
    );
}

#[tokio::test]
async fn an_admin_rotates_the_groups_key_from_the_page_and_a_group_without_one_is_told_why() {
    let returns = group("returns", None).await;
    returns.login_ok("admin").await;
    let (status, body) = admin_posts(&returns, "admin_gateway_rotate_key", &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        "signing with returns/gateway/v2 now; the previous version verifies for 24 hours"
    );
    let keys = crate::groups::own_keys(&returns);
    let published = keys.published().await.unwrap();
    assert_eq!(published.len(), 2);
    assert!(
        published[0].1.usable_until.is_some(),
        "v1 retired with its overlap"
    );

    let keyless = TestApp::spawn_with(|s| s.gateway_group = Some("warehouse".into())).await;
    keyless.login_ok("admin").await;
    let (status, body) = admin_posts(&keyless, "admin_gateway_rotate_key", &[]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains("no signing key to rotate"), "{body}");
}
