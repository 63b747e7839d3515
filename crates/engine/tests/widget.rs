//! The embeddable widget's trust chain against a real database: an admin
//! registers a host site and gets a key; the host signs a short-lived customer
//! token; the widget opens a session with it once. SQLite by default,
//! PostgreSQL when `TEST_DATABASE_URL` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Duration;
use domain::{Role, RoleSet, Timestamp};
use engine::Actor;
use engine::Clock;
use engine::accounts::{Accounts, CreateUser, ThrottlePolicy};
use engine::widget::{
    HostTokenClaims, NewSigningKey, OpenedSession, SiteAdminError, SiteCustomerError,
    TOKEN_AUDIENCE, Widget, WidgetTokenError, sign_host_token,
};
use storage::testing::TestDatabase;

/// The widget service with its clock standing at `now`.
fn widget_at(db: &storage::Database, now: Timestamp) -> Widget {
    Widget::new(db.clone(), Clock::fixed(now))
}

struct World {
    test: TestDatabase,
    admin: Actor,
    customer: String,
    other_customer: String,
    approver: String,
    site: NewSigningKey,
}

async fn user(test: &TestDatabase, name: &str, role: Role) -> Actor {
    let record = Accounts::new(
        test.db.clone(),
        Clock::fixed(engine::now()),
        ThrottlePolicy::default(),
    )
    .create_user(
        &engine::settings::ChangedBy::console(),
        CreateUser {
            name,
            display_name: None,
            password: "correct horse battery",
            roles: RoleSet::new([role]),
        },
    )
    .await
    .unwrap();
    Actor {
        user_id: record.id,
        name: record.name,
        roles: record.roles,
        widget_session: None,
    }
}

async fn world() -> World {
    let test = TestDatabase::new().await;
    let admin = user(&test, "admin", Role::Admin).await;
    let customer = user(&test, "customer", Role::Customer).await.user_id;
    let other_customer = user(&test, "customer2", Role::Customer).await.user_id;
    let approver = user(&test, "approver", Role::Approver).await.user_id;
    let site = widget_at(&test.db, engine::now())
        .register_site(&admin, "Demo shop", "https://shop.example")
        .await
        .unwrap();
    for name in ["customer", "customer2"] {
        widget_at(&test.db, engine::now())
            .bind_customer(&admin, &site.site_id, name)
            .await
            .unwrap();
    }
    World {
        test,
        admin,
        customer,
        other_customer,
        approver,
        site,
    }
}

fn claims(site_id: &str, customer: &str, now: Timestamp) -> HostTokenClaims {
    HostTokenClaims {
        iss: site_id.to_owned(),
        sub: customer.to_owned(),
        aud: TOKEN_AUDIENCE.to_owned(),
        iat: now.timestamp(),
        exp: (now + Duration::minutes(5)).timestamp(),
        jti: storage::ids::new_id("jti"),
    }
}

fn token(key: &NewSigningKey, claims: &HostTokenClaims) -> String {
    sign_host_token(&key.private_key_pem, &key.key_id, claims).unwrap()
}

/// Opens a session at the world's site with a fresh token signed by `key`
/// for `customer`.
async fn open_as(
    w: &World,
    key: &NewSigningKey,
    customer: &str,
    now: Timestamp,
) -> Result<OpenedSession, WidgetTokenError> {
    let t = token(key, &claims(&w.site.site_id, customer, now));
    widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &t)
        .await
}

#[tokio::test]
async fn a_valid_host_token_opens_a_session_that_acts_as_its_customer() {
    let w = world().await;
    let now = engine::now();
    let t = token(&w.site, &claims(&w.site.site_id, &w.customer, now));
    let opened = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &t)
        .await
        .unwrap();
    assert_eq!(opened.customer.id, w.customer);
    assert!(opened.secret.starts_with("cwt_"));
    let who = widget_at(&w.test.db, now)
        .authenticate_session(&opened.secret)
        .await
        .unwrap()
        .expect("the session is recognised");
    assert_eq!(who.customer.id, w.customer);
    assert_eq!(who.site_id, w.site.site_id);
}

#[tokio::test]
async fn a_token_opens_at_most_one_session() {
    let w = world().await;
    let now = engine::now();
    let t = token(&w.site, &claims(&w.site.site_id, &w.customer, now));
    widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &t)
        .await
        .unwrap();
    let again = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &t)
        .await;
    assert!(
        matches!(again, Err(WidgetTokenError::Replayed)),
        "{again:?}"
    );
}

#[tokio::test]
async fn an_expired_token_is_refused() {
    let w = world().await;
    let now = engine::now();
    let mut c = claims(&w.site.site_id, &w.customer, now - Duration::minutes(10));
    c.exp = (now - Duration::minutes(2)).timestamp();
    let result = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &token(&w.site, &c))
        .await;
    assert!(
        matches!(result, Err(WidgetTokenError::Expired)),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_token_living_longer_than_fifteen_minutes_is_refused() {
    let w = world().await;
    let now = engine::now();
    let mut c = claims(&w.site.site_id, &w.customer, now);
    c.exp = (now + Duration::hours(1)).timestamp();
    let result = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &token(&w.site, &c))
        .await;
    assert!(
        matches!(result, Err(WidgetTokenError::LifetimeTooLong)),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_token_issued_in_the_future_is_refused() {
    let w = world().await;
    let now = engine::now();
    let c = claims(&w.site.site_id, &w.customer, now + Duration::minutes(5));
    let result = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &token(&w.site, &c))
        .await;
    assert!(
        matches!(result, Err(WidgetTokenError::NotYetValid)),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_signature_from_another_key_under_this_sites_key_id_is_refused() {
    let w = world().await;
    let now = engine::now();
    let other = widget_at(&w.test.db, now)
        .register_site(&w.admin, "Other", "https://other.example")
        .await
        .unwrap();
    let forged = NewSigningKey {
        key_id: w.site.key_id.clone(),
        ..other
    };
    let c = claims(&w.site.site_id, &w.customer, now);
    let result = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &token(&forged, &c))
        .await;
    assert!(
        matches!(result, Err(WidgetTokenError::BadSignature)),
        "{result:?}"
    );
}

#[tokio::test]
async fn another_sites_token_is_refused_at_this_site() {
    let w = world().await;
    let now = engine::now();
    let other = widget_at(&w.test.db, now)
        .register_site(&w.admin, "Other", "https://other.example")
        .await
        .unwrap();
    // Signed by the other site for itself, presented to ours.
    let c = claims(&other.site_id, &w.customer, now);
    let result = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &token(&other, &c))
        .await;
    assert!(
        matches!(result, Err(WidgetTokenError::UnknownKey)),
        "{result:?}"
    );
    // Signed with our key but issued for the other site.
    let c = claims(&other.site_id, &w.customer, now);
    let result = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &token(&w.site, &c))
        .await;
    assert!(
        matches!(result, Err(WidgetTokenError::WrongSite)),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_token_for_the_wrong_audience_is_refused() {
    let w = world().await;
    let now = engine::now();
    let mut c = claims(&w.site.site_id, &w.customer, now);
    c.aud = "someone-else".into();
    let result = widget_at(&w.test.db, now)
        .open_session(&w.site.site_id, &token(&w.site, &c))
        .await;
    assert!(
        matches!(result, Err(WidgetTokenError::WrongAudience)),
        "{result:?}"
    );
}

#[tokio::test]
async fn an_unsigned_or_garbled_token_is_refused() {
    let w = world().await;
    let now = engine::now();
    let unsigned = format!(
        "{}.{}.",
        "eyJhbGciOiJub25lIiwia2lkIjoid3NrIn0", // {"alg":"none","kid":"wsk"}
        "eyJzdWIiOiJ4In0"
    );
    for bad in [unsigned.as_str(), "not-a-token", ""] {
        let result = widget_at(&w.test.db, now)
            .open_session(&w.site.site_id, bad)
            .await;
        assert!(
            matches!(result, Err(WidgetTokenError::Malformed)),
            "{bad}: {result:?}"
        );
    }
}

#[tokio::test]
async fn tokens_naming_staff_or_unknown_users_sign_nobody_in() {
    let w = world().await;
    let now = engine::now();
    for sub in [w.approver.as_str(), "usr_does_not_exist"] {
        let c = claims(&w.site.site_id, sub, now);
        let result = widget_at(&w.test.db, now)
            .open_session(&w.site.site_id, &token(&w.site, &c))
            .await;
        assert!(
            matches!(result, Err(WidgetTokenError::UnknownCustomer)),
            "{sub}: {result:?}"
        );
    }
}

#[tokio::test]
async fn each_session_acts_only_for_the_customer_its_token_named() {
    let w = world().await;
    let now = engine::now();
    let first = open_as(&w, &w.site, &w.customer, now).await.unwrap();
    let second = open_as(&w, &w.site, &w.other_customer, now).await.unwrap();
    let a = widget_at(&w.test.db, now)
        .authenticate_session(&first.secret)
        .await
        .unwrap()
        .unwrap();
    let b = widget_at(&w.test.db, now)
        .authenticate_session(&second.secret)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.customer.id, w.customer);
    assert_eq!(b.customer.id, w.other_customer);
}

#[tokio::test]
async fn revoking_a_key_refuses_its_tokens_and_ends_its_sessions_while_a_new_key_works() {
    let w = world().await;
    let now = engine::now();
    let opened = open_as(&w, &w.site, &w.customer, now).await.unwrap();
    let rotated = widget_at(&w.test.db, now)
        .add_key(&w.admin, &w.site.site_id)
        .await
        .unwrap();
    widget_at(&w.test.db, now)
        .revoke_key(&w.admin, &w.site.site_id, &w.site.key_id)
        .await
        .unwrap();

    assert!(
        widget_at(&w.test.db, now)
            .authenticate_session(&opened.secret)
            .await
            .unwrap()
            .is_none()
    );
    let old = open_as(&w, &w.site, &w.customer, now).await;
    assert!(matches!(old, Err(WidgetTokenError::UnknownKey)), "{old:?}");
    open_as(&w, &rotated, &w.customer, now).await.unwrap();
    let twice = widget_at(&w.test.db, now)
        .revoke_key(&w.admin, &w.site.site_id, &w.site.key_id)
        .await;
    assert!(matches!(twice, Err(SiteAdminError::NoSuchKey { .. })));
}

#[tokio::test]
async fn a_disabled_site_refuses_tokens_and_its_sessions() {
    let w = world().await;
    let now = engine::now();
    let opened = open_as(&w, &w.site, &w.customer, now).await.unwrap();
    widget_at(&w.test.db, now)
        .set_site_enabled(&w.admin, &w.site.site_id, false)
        .await
        .unwrap();
    assert!(
        widget_at(&w.test.db, now)
            .authenticate_session(&opened.secret)
            .await
            .unwrap()
            .is_none()
    );
    let result = open_as(&w, &w.site, &w.customer, now).await;
    assert!(
        matches!(result, Err(WidgetTokenError::UnknownSite)),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_widget_session_ends_after_its_lifetime() {
    let w = world().await;
    let now = engine::now();
    let opened = open_as(&w, &w.site, &w.customer, now).await.unwrap();
    let later = now + engine::widget::SESSION_LIFETIME + Duration::seconds(1);
    assert!(
        widget_at(&w.test.db, later)
            .authenticate_session(&opened.secret)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn only_admins_register_sites_and_each_origin_once() {
    let w = world().await;
    let now = engine::now();
    let customer = Actor {
        user_id: w.customer.clone(),
        name: "customer".into(),
        roles: RoleSet::new([Role::Customer]),
        widget_session: None,
    };
    let refused = widget_at(&w.test.db, now)
        .register_site(&customer, "Mine", "https://mine.example")
        .await;
    assert!(matches!(refused, Err(SiteAdminError::NotAllowed)));
    let taken = widget_at(&w.test.db, now)
        .register_site(&w.admin, "Again", "https://SHOP.example:443/")
        .await;
    assert!(
        matches!(taken, Err(SiteAdminError::OriginTaken(ref o)) if o == "https://shop.example"),
        "{taken:?}"
    );
    let sites = widget_at(&w.test.db, engine::now())
        .list_sites()
        .await
        .unwrap();
    assert_eq!(sites.len(), 1);
    assert_eq!(sites[0].keys.len(), 1);
    assert_eq!(sites[0].keys[0].public_key, w.site.public_key);
}

#[tokio::test]
async fn a_site_origin_that_could_smuggle_a_directive_into_the_frame_policy_is_refused() {
    let w = world().await;
    let now = engine::now();
    for bad in [
        "*",
        "https://*",
        "https://*.example",
        "https://a.example;script-src",
        "https://a.example;script-src 'unsafe-inline'",
        "https://a.example script-src",
        "https://a.exa\tmple",
        "https://a.exa\nmple",
        "https://a%2eexample",
        "https://a.example,https://b.example",
        "https://a.example'",
        "https://a.example/path",
        "https://a.example/?q=1",
        "https://a.example/#top",
        "https://user@a.example",
        "https://user:pw@a.example",
        "http://shop.example",
        "http://10.0.0.1",
        "https://a.example.",
        "https://a..example",
        "data:text/html,x",
        "blob:https://a.example/x",
    ] {
        let result = widget_at(&w.test.db, now)
            .register_site(&w.admin, "Bad", bad)
            .await;
        assert!(
            matches!(result, Err(SiteAdminError::InvalidOrigin(ref why)) if !why.is_empty()),
            "{bad:?} was not refused as an origin: {result:?}"
        );
    }
    for (good, stored) in [
        ("https://Shop2.Example:8443/", "https://shop2.example:8443"),
        ("http://localhost:3211", "http://localhost:3211"),
        ("http://127.0.0.1:3212", "http://127.0.0.1:3212"),
        ("https://[::1]:8443", "https://[::1]:8443"),
    ] {
        widget_at(&w.test.db, now)
            .register_site(&w.admin, "Good", good)
            .await
            .unwrap_or_else(|error| panic!("{good} refused: {error}"));
        let sites = widget_at(&w.test.db, engine::now())
            .list_sites()
            .await
            .unwrap();
        assert!(
            sites.iter().any(|s| s.origin == stored),
            "{stored} not stored"
        );
    }
    assert_eq!(
        widget_at(&w.test.db, engine::now())
            .list_sites()
            .await
            .unwrap()
            .len(),
        5
    );
}

#[tokio::test]
async fn a_token_whose_crit_header_demands_an_extension_we_do_not_understand_is_refused() {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let w = world().await;
    let now = engine::now();
    let claims = claims(&w.site.site_id, &w.customer, now);
    let key = jsonwebtoken::EncodingKey::from_ed_pem(w.site.private_key_pem.as_bytes()).unwrap();
    for crit in [
        serde_json::json!(["exp"]),
        serde_json::json!(["b64"]),
        serde_json::json!([]),
        serde_json::json!("exp"),
    ] {
        let header = serde_json::json!({
            "alg": "EdDSA",
            "typ": "JWT",
            "kid": w.site.key_id,
            "crit": crit,
            "exp": now.timestamp(),
            "b64": true,
        });
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(serde_json::to_string(&claims).unwrap())
        );
        let signature = jsonwebtoken::crypto::sign(
            signing_input.as_bytes(),
            &key,
            jsonwebtoken::Algorithm::EdDSA,
        )
        .unwrap();
        let token = format!("{signing_input}.{signature}");
        let result = widget_at(&w.test.db, now)
            .open_session(&w.site.site_id, &token)
            .await;
        assert!(
            matches!(result, Err(ref e) if e.to_string().contains("crit")),
            "crit {crit}: {result:?}"
        );
    }
    // The same claims without `crit` still open a session.
    open_as(&w, &w.site, &w.customer, now).await.unwrap();
}

#[tokio::test]
async fn a_site_signs_in_only_the_customers_an_admin_bound_to_it() {
    let w = world().await;
    let now = engine::now();
    let other = widget_at(&w.test.db, now)
        .register_site(&w.admin, "Other", "https://other.example")
        .await
        .unwrap();
    let open_at_other = |customer: &str| {
        let t = token(&other, &claims(&other.site_id, customer, now));
        let site_id = other.site_id.clone();
        let db = w.test.db.clone();
        async move { widget_at(&db, now).open_session(&site_id, &t).await }
    };
    // Registered, keyed and enabled, yet it may not sign in our customers.
    let refused = open_at_other(&w.customer).await;
    assert!(
        matches!(refused, Err(WidgetTokenError::UnknownCustomer)),
        "{refused:?}"
    );

    widget_at(&w.test.db, now)
        .bind_customer(&w.admin, &other.site_id, "customer")
        .await
        .unwrap();
    let opened = open_at_other(&w.customer).await.unwrap();
    let still_refused = open_at_other(&w.other_customer).await;
    assert!(
        matches!(still_refused, Err(WidgetTokenError::UnknownCustomer)),
        "{still_refused:?}"
    );

    // Unbinding refuses new tokens and ends the sessions already open.
    widget_at(&w.test.db, now)
        .unbind_customer(&w.admin, &other.site_id, "customer")
        .await
        .unwrap();
    assert!(
        widget_at(&w.test.db, now)
            .authenticate_session(&opened.secret)
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        open_at_other(&w.customer).await,
        Err(WidgetTokenError::UnknownCustomer)
    ));
}

#[tokio::test]
async fn only_admins_bind_customers_and_only_customers_can_be_bound() {
    let w = world().await;
    let now = engine::now();
    let customer = Actor {
        user_id: w.customer.clone(),
        name: "customer".into(),
        roles: RoleSet::new([Role::Customer]),
        widget_session: None,
    };
    let refused = widget_at(&w.test.db, now)
        .bind_customer(&customer, &w.site.site_id, "customer2")
        .await;
    assert!(
        matches!(refused, Err(SiteCustomerError::NotAllowed)),
        "{refused:?}"
    );
    let staff = widget_at(&w.test.db, now)
        .bind_customer(&w.admin, &w.site.site_id, "approver")
        .await;
    assert!(
        matches!(staff, Err(SiteCustomerError::NoSuchCustomer(ref name)) if name == "approver"),
        "{staff:?}"
    );
    let nowhere = widget_at(&w.test.db, now)
        .bind_customer(&w.admin, "wst_nope", "customer")
        .await;
    assert!(
        matches!(nowhere, Err(SiteCustomerError::NoSuchSite(_))),
        "{nowhere:?}"
    );
    let first = widget_at(&w.test.db, now)
        .unbind_customer(&w.admin, &w.site.site_id, "customer")
        .await;
    assert!(first.is_ok(), "{first:?}");
    let twice = widget_at(&w.test.db, now)
        .unbind_customer(&w.admin, &w.site.site_id, "customer")
        .await;
    assert!(
        matches!(twice, Err(SiteCustomerError::NotBound { .. })),
        "{twice:?}"
    );
}

#[tokio::test]
async fn re_enabling_a_disabled_customer_does_not_bring_back_their_widget_sessions() {
    let w = world().await;
    let now = engine::now();
    let opened = open_as(&w, &w.site, &w.customer, now).await.unwrap();
    let console = engine::settings::ChangedBy::console();
    Accounts::new(
        w.test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .disable_user(&console, "customer")
    .await
    .unwrap();
    Accounts::new(
        w.test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .enable_user(&console, "customer")
    .await
    .unwrap();
    assert!(
        widget_at(&w.test.db, now)
            .authenticate_session(&opened.secret)
            .await
            .unwrap()
            .is_none(),
        "a session opened before the disable works again"
    );
    // A new token opens a new session: the customer is enabled again.
    open_as(&w, &w.site, &w.customer, now).await.unwrap();
}
