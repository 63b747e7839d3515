//! Accounts use cases against a real database: sign-in with throttling per
//! account and address, per address and (progressively) per account, and
//! API tokens. SQLite by default, PostgreSQL
//! when `TEST_DATABASE_URL` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Duration;
use domain::{Role, RoleSet, Timestamp};
use engine::Clock;
use engine::accounts::{AccountError, Accounts, CreateUser, LoginError, ThrottlePolicy};
use engine::settings::ChangedBy;
use storage::testing::TestDatabase;

const PASSWORD: &str = "correct horse battery";
const ADDRESS: &str = "192.0.2.10";

async fn with_user(name: &str, roles: &[Role]) -> TestDatabase {
    let test = TestDatabase::new().await;
    Accounts::new(
        test.db.clone(),
        Clock::fixed(engine::now()),
        ThrottlePolicy::default(),
    )
    .create_user(
        &ChangedBy::console(),
        CreateUser {
            name,
            display_name: None,
            password: PASSWORD,
            roles: RoleSet::new(roles.iter().copied()),
        },
    )
    .await
    .unwrap();
    test
}

async fn sign_in(
    test: &TestDatabase,
    policy: &ThrottlePolicy,
    name: &str,
    password: &str,
    address: &str,
    now: Timestamp,
) -> Result<storage::users::UserRecord, LoginError> {
    Accounts::new(test.db.clone(), Clock::fixed(now), *policy)
        .login(name, password, address)
        .await
}

async fn failures(test: &TestDatabase, scope: &str) -> u64 {
    storage::throttle::failures_since(test.db.conn(), scope, engine::now() - Duration::hours(1))
        .await
        .unwrap()
        .0
}

#[tokio::test]
async fn the_right_password_signs_in_with_a_normalised_name() {
    let test = with_user("ada", &[Role::Approver]).await;
    let user = sign_in(
        &test,
        &ThrottlePolicy::default(),
        "  ADA ",
        PASSWORD,
        ADDRESS,
        engine::now(),
    )
    .await
    .unwrap();
    assert_eq!(user.name, "ada");
    assert!(user.roles.contains(Role::Approver));
}

#[tokio::test]
async fn a_wrong_password_is_refused_and_counted_for_account_and_address() {
    let test = with_user("ada", &[Role::Approver]).await;
    let result = sign_in(
        &test,
        &ThrottlePolicy::default(),
        "ada",
        "wrong password",
        ADDRESS,
        engine::now(),
    )
    .await;
    assert!(
        matches!(result, Err(LoginError::InvalidCredentials)),
        "{result:?}"
    );
    assert_eq!(failures(&test, "account:ada").await, 1);
    assert_eq!(failures(&test, &format!("address:{ADDRESS}")).await, 1);
}

#[tokio::test]
async fn an_unknown_user_is_refused_exactly_like_a_wrong_password() {
    let test = with_user("ada", &[Role::Approver]).await;
    let result = sign_in(
        &test,
        &ThrottlePolicy::default(),
        "nobody",
        PASSWORD,
        ADDRESS,
        engine::now(),
    )
    .await;
    let Err(error) = result else {
        panic!("an unknown user signed in");
    };
    assert!(matches!(error, LoginError::InvalidCredentials));
    assert_eq!(error.to_string(), "wrong user name or password");
    // Unknown names are throttled too, so probing them costs the same.
    assert_eq!(failures(&test, "account:nobody").await, 1);
}

#[tokio::test]
async fn five_failures_lock_the_account_from_that_address_even_against_the_right_password() {
    let test = with_user("ada", &[Role::Approver]).await;
    let policy = ThrottlePolicy::default();
    let now = engine::now();
    for _ in 0..5 {
        let result = sign_in(&test, &policy, "ada", "wrong password", ADDRESS, now).await;
        assert!(matches!(result, Err(LoginError::InvalidCredentials)));
    }

    let locked = sign_in(&test, &policy, "ada", PASSWORD, ADDRESS, now).await;

    let Err(error) = locked else {
        panic!("a locked account signed in");
    };
    // PostgreSQL keeps microseconds, so the window may end a fraction early.
    assert!(
        matches!(error, LoginError::AccountThrottled { retry_after_secs } if (899..=900).contains(&retry_after_secs)),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "too many failed sign-ins for this account from your network address; try again in 15 minute(s)"
    );
    // A locked attempt is not counted again and does not touch other accounts.
    assert_eq!(failures(&test, "account:ada").await, 5);
    assert_eq!(
        failures(&test, &format!("account-address:ada|{ADDRESS}")).await,
        5
    );
}

#[tokio::test]
async fn the_lock_reports_when_the_oldest_failure_leaves_the_window_and_then_lifts() {
    let test = with_user("ada", &[Role::Approver]).await;
    let policy = ThrottlePolicy::default();
    let start = engine::now() - Duration::minutes(10);
    for _ in 0..5 {
        let _ = sign_in(&test, &policy, "ada", "wrong password", ADDRESS, start).await;
    }
    let now = engine::now();

    let locked = sign_in(&test, &policy, "ada", PASSWORD, ADDRESS, now)
        .await
        .unwrap_err();
    assert!(
        locked.to_string().ends_with("try again in 5 minute(s)"),
        "{locked}"
    );

    let later = start + policy.window + Duration::seconds(1);
    let user = sign_in(&test, &policy, "ada", PASSWORD, ADDRESS, later)
        .await
        .unwrap();
    assert_eq!(user.name, "ada");
}

#[tokio::test]
async fn too_many_failures_from_one_address_lock_every_account_from_it() {
    let test = with_user("ada", &[Role::Approver]).await;
    let policy = ThrottlePolicy {
        max_failures_per_address: 3,
        ..ThrottlePolicy::default()
    };
    let now = engine::now();
    for name in ["bob", "cy", "dee"] {
        let _ = sign_in(&test, &policy, name, "guess", ADDRESS, now).await;
    }

    let from_there = sign_in(&test, &policy, "ada", PASSWORD, ADDRESS, now).await;
    let Err(error) = from_there else {
        panic!("a locked address signed in");
    };
    assert!(
        matches!(error, LoginError::AddressThrottled { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "too many failed sign-ins from your network address; try again in 15 minute(s)"
    );

    let elsewhere = sign_in(&test, &policy, "ada", PASSWORD, "198.51.100.7", now).await;
    assert_eq!(elsewhere.unwrap().name, "ada");
}

#[tokio::test]
async fn a_successful_sign_in_clears_the_counter_for_that_account_and_address() {
    let test = with_user("ada", &[Role::Approver]).await;
    let policy = ThrottlePolicy::default();
    let now = engine::now();
    for _ in 0..4 {
        let _ = sign_in(&test, &policy, "ada", "wrong password", ADDRESS, now).await;
    }
    sign_in(&test, &policy, "ada", PASSWORD, ADDRESS, now)
        .await
        .unwrap();
    assert_eq!(
        failures(&test, &format!("account-address:ada|{ADDRESS}")).await,
        0
    );
    // The account's own count (all addresses) only ages out: signing in
    // must not hand a guesser elsewhere a fresh allowance. The successful
    // attempt itself is not counted.
    assert_eq!(failures(&test, "account:ada").await, 4);

    for _ in 0..4 {
        let _ = sign_in(&test, &policy, "ada", "wrong password", ADDRESS, now).await;
    }
    let user = sign_in(&test, &policy, "ada", PASSWORD, ADDRESS, now).await;
    assert!(user.is_ok(), "{user:?}");
}

#[tokio::test]
async fn a_disabled_user_cannot_sign_in() {
    let test = with_user("ada", &[Role::Approver]).await;
    Accounts::new(
        test.db.clone(),
        Clock::fixed(engine::now()),
        ThrottlePolicy::default(),
    )
    .disable_user(&ChangedBy::console(), "ada")
    .await
    .unwrap();
    let result = sign_in(
        &test,
        &ThrottlePolicy::default(),
        "ada",
        PASSWORD,
        ADDRESS,
        engine::now(),
    )
    .await;
    assert!(matches!(result, Err(LoginError::Disabled)), "{result:?}");
}

#[tokio::test]
async fn a_user_name_can_be_taken_only_once() {
    let test = with_user("ada", &[Role::Approver]).await;
    let again = Accounts::new(
        test.db.clone(),
        Clock::fixed(engine::now()),
        ThrottlePolicy::default(),
    )
    .create_user(
        &ChangedBy::console(),
        CreateUser {
            name: "Ada",
            display_name: None,
            password: PASSWORD,
            roles: RoleSet::new([Role::Customer]),
        },
    )
    .await;
    assert!(
        matches!(again, Err(AccountError::NameTaken(ref name)) if name == "ada"),
        "{again:?}"
    );
}

#[tokio::test]
async fn a_bearer_token_authenticates_its_user_until_revoked() {
    let test = with_user("agent", &[Role::Agent]).await;
    let now = engine::now();
    let token = Accounts::new(
        test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .create_token("agent", "ci")
    .await
    .unwrap();
    assert!(token.secret.starts_with("cst_"));

    let user = Accounts::new(
        test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .authenticate_token(&token.secret)
    .await
    .unwrap()
    .unwrap();
    assert_eq!(user.name, "agent");

    assert!(
        Accounts::new(
            test.db.clone(),
            Clock::fixed(now),
            ThrottlePolicy::default()
        )
        .revoke_token(&token.id)
        .await
        .unwrap()
    );
    assert_eq!(
        Accounts::new(
            test.db.clone(),
            Clock::fixed(now),
            ThrottlePolicy::default()
        )
        .authenticate_token(&token.secret)
        .await
        .unwrap(),
        None
    );
}

#[tokio::test]
async fn malformed_or_unknown_secrets_and_disabled_users_get_no_identity() {
    let test = with_user("agent", &[Role::Agent]).await;
    let now = engine::now();
    let token = Accounts::new(
        test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .create_token("agent", "ci")
    .await
    .unwrap();
    for secret in ["", "cst_", "nonsense", &format!("cst_{}", "0".repeat(64))] {
        assert_eq!(
            Accounts::new(
                test.db.clone(),
                Clock::fixed(now),
                ThrottlePolicy::default()
            )
            .authenticate_token(secret)
            .await
            .unwrap(),
            None,
            "{secret:?}"
        );
    }
    Accounts::new(
        test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .disable_user(&ChangedBy::console(), "agent")
    .await
    .unwrap();
    assert_eq!(
        Accounts::new(
            test.db.clone(),
            Clock::fixed(now),
            ThrottlePolicy::default()
        )
        .authenticate_token(&token.secret)
        .await
        .unwrap(),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_guesses_cannot_get_past_the_account_limit() {
    const GUESSES: usize = 20;
    let test = std::sync::Arc::new(with_user("ada", &[Role::Approver]).await);
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(GUESSES));
    let now = engine::now();
    let guesses: Vec<_> = (0..GUESSES)
        .map(|i| {
            let (test, barrier) = (test.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let password = format!("guess number {i}");
                let policy = ThrottlePolicy::default();
                sign_in(&test, &policy, "ada", &password, ADDRESS, now).await
            })
        })
        .collect();
    let (mut checked, mut throttled) = (0, 0);
    for guess in guesses {
        match guess.await.unwrap() {
            Err(LoginError::InvalidCredentials) => checked += 1,
            Err(LoginError::AccountThrottled { .. }) => throttled += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        (checked, throttled),
        (5, GUESSES - 5),
        "only five passwords may be tried"
    );
    assert_eq!(failures(&test, "account:ada").await, 5);
}

#[tokio::test]
async fn a_successful_sign_in_does_not_count_against_the_address() {
    let test = with_user("ada", &[Role::Approver]).await;
    let policy = ThrottlePolicy {
        max_failures_per_address: 2,
        ..ThrottlePolicy::default()
    };
    let now = engine::now();
    for _ in 0..3 {
        sign_in(&test, &policy, "ada", PASSWORD, ADDRESS, now)
            .await
            .unwrap();
    }
    assert_eq!(failures(&test, &format!("address:{ADDRESS}")).await, 0);
}

const STRANGER: &str = "203.0.113.66";

#[tokio::test]
async fn a_stranger_guessing_from_their_address_cannot_lock_the_owner_out_of_theirs() {
    let test = with_user("ada", &[Role::Approver]).await;
    let policy = ThrottlePolicy::default();
    let now = engine::now();
    for _ in 0..20 {
        let _ = sign_in(&test, &policy, "ada", "guess", STRANGER, now).await;
    }
    let stranger = sign_in(&test, &policy, "ada", PASSWORD, STRANGER, now).await;
    assert!(
        matches!(stranger, Err(LoginError::AccountThrottled { .. })),
        "{stranger:?}"
    );

    // Ada, at her own address, a moment later.
    let owner = sign_in(
        &test,
        &policy,
        "ada",
        PASSWORD,
        ADDRESS,
        now + Duration::seconds(1),
    )
    .await;
    assert_eq!(owner.unwrap().name, "ada");
}

#[tokio::test]
async fn guesses_from_rotating_addresses_are_spaced_out_but_the_owner_waits_at_most_the_cap() {
    let test = with_user("ada", &[Role::Approver]).await;
    let policy = ThrottlePolicy::default();
    let start = engine::now();
    // Ten addresses, one guess each: the free allowance is used up.
    for n in 0..10 {
        let address = format!("198.51.100.{n}");
        let result = sign_in(&test, &policy, "ada", "guess", &address, start).await;
        assert!(
            matches!(result, Err(LoginError::InvalidCredentials)),
            "{result:?}"
        );
    }
    // The next guess, from a fresh address, must wait a second...
    let too_soon = sign_in(&test, &policy, "ada", "guess", "198.51.100.10", start).await;
    let Err(error) = too_soon else {
        panic!("a guess got through without waiting");
    };
    assert!(
        matches!(
            error,
            LoginError::AccountSlowed {
                retry_after_secs: 1
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "this account has had many failed sign-ins; wait 1 second(s) and try again"
    );
    // ...and is not counted, so waiting is not made longer by asking.
    assert_eq!(failures(&test, "account:ada").await, 10);

    // After the wait it is checked; each failure doubles the next wait.
    let mut at = start;
    let mut waits = Vec::new();
    for n in 10..20 {
        let address = format!("198.51.100.{n}");
        let wait = match sign_in(&test, &policy, "ada", "guess", &address, at).await {
            Err(LoginError::AccountSlowed { retry_after_secs }) => retry_after_secs,
            other => panic!("expected a wait, got {other:?}"),
        };
        waits.push(wait);
        at += Duration::seconds(i64::try_from(wait).unwrap());
        let checked = sign_in(&test, &policy, "ada", "guess", &address, at).await;
        assert!(
            matches!(checked, Err(LoginError::InvalidCredentials)),
            "{checked:?}"
        );
    }
    assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30, 30, 30]);

    // The owner, however many guesses came before, waits at most the cap.
    let owner = sign_in(
        &test,
        &policy,
        "ada",
        PASSWORD,
        ADDRESS,
        at + policy.account_delay_cap,
    )
    .await;
    assert_eq!(owner.unwrap().name, "ada");
}

#[tokio::test]
async fn re_enabling_a_user_does_not_bring_back_the_tokens_issued_before_the_disable() {
    let test = with_user("ada", &[Role::Approver]).await;
    let now = engine::now();
    let console = ChangedBy::console();
    let before = Accounts::new(
        test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .create_token("ada", "ci")
    .await
    .unwrap();
    Accounts::new(
        test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .disable_user(&console, "ada")
    .await
    .unwrap();
    Accounts::new(
        test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .enable_user(&console, "ada")
    .await
    .unwrap();
    assert!(
        Accounts::new(
            test.db.clone(),
            Clock::fixed(now),
            ThrottlePolicy::default()
        )
        .authenticate_token(&before.secret)
        .await
        .unwrap()
        .is_none(),
        "a token from before the disable works again"
    );
    let after = Accounts::new(
        test.db.clone(),
        Clock::fixed(now),
        ThrottlePolicy::default(),
    )
    .create_token("ada", "ci")
    .await
    .unwrap();
    assert!(
        Accounts::new(
            test.db.clone(),
            Clock::fixed(now),
            ThrottlePolicy::default()
        )
        .authenticate_token(&after.secret)
        .await
        .unwrap()
        .is_some()
    );
}

#[tokio::test]
async fn reading_with_a_bearer_token_records_its_use_to_the_minute_not_on_every_request() {
    use chrono::SubsecRound;
    let test = with_user("agent", &[Role::Agent]).await;
    let start = engine::now().trunc_subsecs(6);
    let at = |time: Timestamp| {
        Accounts::new(
            test.db.clone(),
            Clock::fixed(time),
            ThrottlePolicy::default(),
        )
    };
    let token = at(start).create_token("agent", "ci").await.unwrap();
    let agent = storage::users::find_by_name(test.db.conn(), "agent")
        .await
        .unwrap()
        .unwrap();
    let last_used = || async {
        storage::tokens::list_for_user(test.db.conn(), &agent.id)
            .await
            .unwrap()
            .into_iter()
            .find(|t| t.id == token.id)
            .unwrap()
            .last_used_at
    };
    assert_eq!(last_used().await, None);

    let authenticate = |time: Timestamp| {
        let secret = token.secret.clone();
        let accounts = at(time);
        async move { accounts.authenticate_token(&secret).await.unwrap() }
    };
    assert!(authenticate(start).await.is_some());
    assert_eq!(last_used().await, Some(start), "the first use is recorded");
    assert!(authenticate(start + Duration::seconds(30)).await.is_some());
    assert_eq!(
        last_used().await,
        Some(start),
        "a use within the minute writes nothing"
    );
    let later = start + Duration::seconds(61);
    assert!(authenticate(later).await.is_some());
    assert_eq!(last_used().await, Some(later), "recorded to the minute");
}
