//! Refunds through the Stripe connector, end to end: the real engine and
//! database, and a mock server playing one Stripe account by Stripe's
//! documented API (`POST /v1/refunds` under an `Idempotency-Key`, `GET
//! /v1/refunds?payment_intent=…`, `GET /v1/payment_intents/{id}` with
//! `expand[]=latest_charge`). An order imported with a `pi_` reference is
//! refunded once and verified; a status query that fails in any way leaves
//! the outcome unknown, never failed; a replayed stored error and a refused
//! key go to a person, with no resend and nothing booked.

use crate::support::{PASSWORD, fast_settings, refund_request, submit_as};
use connectors::HttpTimeouts;
use connectors::stripe::{STRIPE_VERSION, StripeConfig, StripeProvider};
use domain::proposal::{ProposalState, ProposalStatus};
use engine::orders::Feeder;
use engine::orders::import::{self, Format};
use engine::{Engine, EngineSettings};
use secrecy::SecretString;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use storage::journal::JournalEvent;
use storage::testing::TestDatabase;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const SECRET: &str = "sk_test_51CountersignEngineTests";
/// The imported order: the shop's id, its PaymentIntent and its total
/// (2 × 12.50 + 45.00 lantern + 4.90 shipping − 5.00 discount).
const ORDER: &str = "shop-7001";
const PAYMENT_INTENT: &str = "pi_3QshopOrder7001";
const CHARGE: &str = "ch_3QshopOrder7001";
const TOTAL_MINOR: i64 = 6990;
/// The client gives up on a call after this long: the outcome is unknown.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(500);
/// How long Stripe takes to answer a refund in the timeout tests: long
/// after the client gave up (the refund is made all the same).
const LATE_ANSWER: Duration = Duration::from_secs(3);
/// Stripe's real answers rank below any failure a test mounts on top.
const STRIPE_PRIORITY: u8 = 10;
/// How long a test waits for the engine before it fails.
const LIMIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------
// One Stripe account: a PaymentIntent and the refunds made on it.
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Ledger {
    /// Refund objects, oldest first.
    refunds: Vec<Value>,
    /// The answer stored under each idempotency key.
    answers: HashMap<String, Value>,
}

/// What the mock Stripe holds, shared by its endpoints.
#[derive(Clone, Default)]
struct Account(Arc<Mutex<Ledger>>);

impl Account {
    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Refunds Stripe made (a replayed answer makes none).
    fn refunds_made(&self) -> usize {
        self.ledger().refunds.len()
    }

    /// What Stripe counts as refunded: every refund not failed or canceled.
    fn refunded_minor(&self) -> i64 {
        self.ledger()
            .refunds
            .iter()
            .filter(|r| !matches!(r["status"].as_str(), Some("failed" | "canceled")))
            .filter_map(|r| r["amount"].as_i64())
            .sum()
    }
}

/// `POST /v1/refunds` as Stripe runs it: the first request under a key
/// makes the refund and stores the answer; a repeat of the key gets the
/// stored answer back (`Idempotent-Replayed: true`) and makes nothing.
/// The answer leaves after `delay`, so a client with a shorter timeout
/// never sees it although the refund exists.
struct CreateRefund {
    account: Account,
    delay: Duration,
}

impl Respond for CreateRefund {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let Some(key) = request
            .headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
        else {
            return stripe_error(400, "invalid_request_error", "", "no Idempotency-Key");
        };
        let form: HashMap<String, String> = url::form_urlencoded::parse(&request.body)
            .into_owned()
            .collect();
        if form.get("payment_intent").map(String::as_str) != Some(PAYMENT_INTENT) {
            return stripe_error(
                404,
                "invalid_request_error",
                "resource_missing",
                "No such payment_intent",
            );
        }
        let Some(amount) = form.get("amount").and_then(|a| a.parse::<i64>().ok()) else {
            return stripe_error(400, "invalid_request_error", "", "amount is required");
        };
        let mut ledger = self.account.ledger();
        if let Some(stored) = ledger.answers.get(&key) {
            return ResponseTemplate::new(200)
                .set_body_json(stored)
                .insert_header("Idempotent-Replayed", "true")
                .set_delay(self.delay);
        }
        let metadata: serde_json::Map<String, Value> = form
            .iter()
            .filter_map(|(field, value)| {
                let name = field.strip_prefix("metadata[")?.strip_suffix(']')?;
                Some((name.to_owned(), Value::String(value.clone())))
            })
            .collect();
        let refund = json!({
            "id": format!("re_3Qshop{}", ledger.refunds.len() + 1),
            "object": "refund",
            "amount": amount,
            "balance_transaction": "txn_3Qshop",
            "charge": CHARGE,
            "created": chrono::Utc::now().timestamp(),
            "currency": "eur",
            "metadata": metadata,
            "payment_intent": PAYMENT_INTENT,
            "reason": null,
            "receipt_number": null,
            "status": "succeeded",
        });
        ledger.refunds.push(refund.clone());
        ledger.answers.insert(key, refund.clone());
        ResponseTemplate::new(200)
            .set_body_json(refund)
            .set_delay(self.delay)
    }
}

/// `GET /v1/refunds?payment_intent=…`: every refund, newest first.
struct ListRefunds(Account);

impl Respond for ListRefunds {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let data: Vec<Value> = self.0.ledger().refunds.iter().rev().cloned().collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "object": "list", "url": "/v1/refunds", "has_more": false, "data": data
        }))
    }
}

/// `GET /v1/payment_intents/{id}?expand[]=latest_charge`: what was paid and
/// what is refunded so far.
struct RetrievePaymentIntent(Account);

impl Respond for RetrievePaymentIntent {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let refunded = self.0.refunded_minor();
        ResponseTemplate::new(200).set_body_json(json!({
            "id": PAYMENT_INTENT, "object": "payment_intent", "amount": TOTAL_MINOR,
            "amount_received": TOTAL_MINOR, "currency": "eur", "status": "succeeded",
            "latest_charge": {
                "id": CHARGE, "object": "charge", "amount": TOTAL_MINOR,
                "amount_captured": TOTAL_MINOR, "amount_refunded": refunded,
                "currency": "eur", "payment_intent": PAYMENT_INTENT,
                "refunded": refunded >= TOTAL_MINOR, "status": "succeeded"
            }
        }))
    }
}

/// Stripe's error envelope.
fn stripe_error(status: u16, kind: &str, code: &str, message: &str) -> ResponseTemplate {
    let mut error = json!({ "type": kind, "message": message });
    if !code.is_empty() {
        error["code"] = json!(code);
    }
    ResponseTemplate::new(status).set_body_json(json!({ "error": error }))
}

/// The refund listing as a key Stripe no longer accepts sees it.
fn listing_refused() -> ResponseTemplate {
    stripe_error(
        401,
        "invalid_request_error",
        "",
        "Invalid API Key provided: sk_test_****ests",
    )
}

// ---------------------------------------------------------------------------
// The harness: demo data, the imported order, an engine on Stripe.
// ---------------------------------------------------------------------------

struct StripeHarness {
    engine: Engine,
    stripe: MockServer,
    account: Account,
    _db: TestDatabase,
}

impl StripeHarness {
    /// A fresh database with the demo seeded for Stripe, an engine whose
    /// provider is the mock Stripe, and the shop's order imported. Stripe
    /// answers retrievals and listings truthfully; each test decides how it
    /// answers refunds.
    async fn start(settings: EngineSettings) -> StripeHarness {
        let db = TestDatabase::new().await;
        engine::demo::seed_demo(
            &db.db,
            PASSWORD,
            engine::demo::ReferenceStyle::Stripe,
            engine::now(),
        )
        .await
        .unwrap();
        let stripe = MockServer::start().await;
        let account = Account::default();
        let bearer = format!("Bearer {SECRET}");
        Mock::given(method("GET"))
            .and(path(format!("/v1/payment_intents/{PAYMENT_INTENT}")))
            .and(query_param("expand[]", "latest_charge"))
            .and(header("authorization", bearer.as_str()))
            .respond_with(RetrievePaymentIntent(account.clone()))
            .with_priority(STRIPE_PRIORITY)
            .mount(&stripe)
            .await;
        Mock::given(method("GET"))
            .and(path("/v1/refunds"))
            .and(query_param("payment_intent", PAYMENT_INTENT))
            .and(header("authorization", bearer.as_str()))
            .respond_with(ListRefunds(account.clone()))
            .with_priority(STRIPE_PRIORITY)
            .mount(&stripe)
            .await;
        let provider = StripeProvider::new(StripeConfig {
            base_url: stripe.uri(),
            secret_key: SecretString::from(SECRET),
            timeouts: HttpTimeouts {
                connect: Duration::from_secs(2),
                request: REQUEST_TIMEOUT,
            },
        })
        .unwrap();
        let policies = engine::policies::PolicyLibrary::load(db.db.clone())
            .await
            .unwrap();
        let engine = Engine::new(db.db.clone(), Arc::new(provider), policies, settings);
        // Sends and checks run on the work runner, as in the server; the
        // tests drive the sweeps themselves (`reconcile_once`).
        engine
            .work
            .runner(&engine::work::WorkSchedule {
                sweeps: false,
                ..engine::work::WorkSchedule::default()
            })
            .start()
            .await
            .unwrap();
        let h = StripeHarness {
            engine,
            stripe,
            account,
            _db: db,
        };
        h.import_order().await;
        h
    }

    /// The shop's order arrives the way `countersign orders import` reads a
    /// JSON Lines file: delivered three days ago, paid with a PaymentIntent.
    async fn import_order(&self) {
        let now = engine::now();
        let line = json!({
            "external_id": ORDER, "source_version": 1, "customer": "customer",
            "placed_at": now - chrono::Duration::days(8), "currency": "EUR",
            "lines": [
                {"sku": "LANTERN", "description": "Camping lantern", "quantity": 1, "unit_price_minor": 4500},
                {"sku": "MUG", "description": "Enamel mug", "quantity": 2, "unit_price_minor": 1250}
            ],
            "shipping_minor": 490, "discount_minor": 500, "total_minor": TOTAL_MINOR,
            "payment_reference": PAYMENT_INTENT,
            "events": [
                {"kind": "shipped", "at": now - chrono::Duration::days(6)},
                {"kind": "delivered", "at": now - chrono::Duration::days(3)}
            ]
        });
        let parsed = import::parse(&line.to_string(), Format::JsonLines).unwrap();
        let report = self
            .engine
            .orders
            .import_orders(&Feeder::command_line(), parsed)
            .await;
        assert_eq!(
            (report.created(), report.refused()),
            (1, 0),
            "the order is imported: {report:?}"
        );
    }

    /// Stripe answers `POST /v1/refunds` as Stripe does, after `delay`.
    async fn refunds_made_after(&self, delay: Duration) {
        Mock::given(method("POST"))
            .and(path("/v1/refunds"))
            .and(header("authorization", format!("Bearer {SECRET}").as_str()))
            .respond_with(CreateRefund {
                account: self.account.clone(),
                delay,
            })
            .with_priority(STRIPE_PRIORITY)
            .mount(&self.stripe)
            .await;
    }

    /// Stripe answers every `POST /v1/refunds` with `template`.
    async fn refunds_answered(&self, template: ResponseTemplate) {
        Mock::given(method("POST"))
            .and(path("/v1/refunds"))
            .respond_with(template)
            .mount(&self.stripe)
            .await;
    }

    /// The customer asks for a full refund of the imported order and the
    /// approver approves it; returns the proposal id. The approval reads
    /// the PaymentIntent and its refunds at Stripe before the send.
    async fn approved_refund(&self) -> String {
        let customer = self.actor("customer").await;
        let stored = submit_as(&self.engine, &customer, refund_request(ORDER))
            .await
            .unwrap();
        assert_eq!(stored.proposal.payment_reference, PAYMENT_INTENT);
        assert_eq!(stored.proposal.amount.amount_minor, TOTAL_MINOR);
        self.engine
            .approvals
            .approve(
                &self.actor("approver").await,
                &stored.proposal.id,
                &stored.proposal.action_digest,
            )
            .await
            .unwrap();
        stored.proposal.id
    }

    async fn actor(&self, name: &str) -> engine::Actor {
        let user = storage::users::find_by_name(self.engine.db.conn(), name)
            .await
            .unwrap()
            .unwrap();
        engine::Actor::from(user)
    }

    async fn state(&self, id: &str) -> ProposalState {
        storage::proposals::get(self.engine.db.conn(), id)
            .await
            .unwrap()
            .unwrap()
            .state
    }

    /// Waits while the send is in flight (no reconciliation); returns the
    /// state the send left. Woken by the engine's announcement of each
    /// committed change, subscribed to before the state is first read so
    /// none is missed.
    async fn after_send(&self, id: &str) -> ProposalState {
        let mut changes = self.engine.live.subscribe();
        let waiting = async {
            loop {
                let state = self.state(id).await;
                if state.status() != ProposalStatus::Executing {
                    return state;
                }
                match changes.recv().await {
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(closed) => panic!("the live channel closed: {closed}"),
                }
            }
        };
        tokio::time::timeout(LIMIT, waiting)
            .await
            .unwrap_or_else(|_| panic!("proposal {id} stayed executing"))
    }

    /// Runs reconciliation passes until the proposal's state is `wanted`;
    /// panics on a state it cannot leave by itself, or after [`LIMIT`].
    async fn settle(&self, id: &str, wanted: impl Fn(&ProposalState) -> bool) -> ProposalState {
        let deadline = tokio::time::Instant::now() + LIMIT;
        loop {
            let state = self.state(id).await;
            if wanted(&state) {
                return state;
            }
            let stuck = matches!(
                state.status(),
                ProposalStatus::Verified
                    | ProposalStatus::Failed
                    | ProposalStatus::NeedsAttention
                    | ProposalStatus::Invalidated
            );
            assert!(!stuck, "proposal {id} ended {state:?}");
            assert!(
                tokio::time::Instant::now() < deadline,
                "proposal {id} stayed {state:?}"
            );
            self.engine.execution.reconcile_once().await.unwrap();
            // Not synchronisation: the next status check falls due on the
            // engine's clock (`first_check_after`, tens of milliseconds).
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The proposal's journal, oldest first.
    async fn events(&self, id: &str) -> Vec<JournalEvent> {
        let filter = storage::journal::JournalFilter {
            proposal_id: Some(id.to_owned()),
            ..Default::default()
        };
        storage::journal::list(self.engine.db.conn(), &filter, 0, 1000)
            .await
            .unwrap()
            .0
    }

    /// Every status the proposal's journal says it moved to.
    async fn statuses_reached(&self, id: &str) -> Vec<String> {
        self.events(id)
            .await
            .into_iter()
            .filter_map(|event| event.to_status)
            .collect()
    }

    async fn requests(&self) -> Vec<Request> {
        self.stripe.received_requests().await.unwrap()
    }

    /// The refund requests Stripe received.
    async fn refund_posts(&self) -> Vec<Request> {
        self.requests()
            .await
            .into_iter()
            .filter(|r| r.method == wiremock::http::Method::POST && r.url.path() == "/v1/refunds")
            .collect()
    }

    /// Every call Stripe received, reads included, pinned the API version.
    async fn assert_api_version_pinned(&self) {
        let requests = self.requests().await;
        assert!(!requests.is_empty());
        for request in &requests {
            assert_eq!(
                header_of(request, "stripe-version"),
                Some(STRIPE_VERSION),
                "{} {}",
                request.method,
                request.url
            );
        }
    }

    /// The order as Countersign holds it.
    async fn order(&self) -> domain::OrderSnapshot {
        storage::orders::get(self.engine.db.conn(), ORDER)
            .await
            .unwrap()
            .unwrap()
    }
}

fn header_of<'r>(request: &'r Request, name: &str) -> Option<&'r str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

fn form_of(request: &Request) -> HashMap<String, String> {
    url::form_urlencoded::parse(&request.body)
        .into_owned()
        .collect()
}

fn assert_never_failed(statuses: &[String]) {
    assert!(
        !statuses
            .iter()
            .any(|s| s == ProposalStatus::Failed.as_str()),
        "the proposal was marked failed on the way: {statuses:?}"
    );
}

// ---------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn an_order_imported_with_a_stripe_payment_intent_is_refunded_once_at_stripe_and_verified() {
    let h = StripeHarness::start(fast_settings("executor-stripe")).await;
    h.refunds_made_after(Duration::ZERO).await;

    let id = h.approved_refund().await;
    let state = h
        .settle(&id, |s| s.status() == ProposalStatus::Verified)
        .await;

    let ProposalState::Verified { receipt, .. } = &state else {
        unreachable!()
    };
    assert_eq!(receipt.provider, "stripe");
    assert_eq!(receipt.provider_refund_id, "re_3Qshop1");
    assert_eq!(receipt.amount.amount_minor, TOTAL_MINOR);
    assert_eq!(receipt.amount.currency.code(), "EUR");
    // Exactly one refund request, as Stripe documents it.
    let posts = h.refund_posts().await;
    assert_eq!(posts.len(), 1, "one refund request");
    let post = &posts[0];
    assert_eq!(header_of(post, "idempotency-key"), Some(id.as_str()));
    assert_eq!(
        header_of(post, "content-type"),
        Some("application/x-www-form-urlencoded")
    );
    let form = form_of(post);
    assert_eq!(
        form.get("payment_intent").map(String::as_str),
        Some(PAYMENT_INTENT)
    );
    assert_eq!(
        form.get("amount").map(String::as_str),
        Some(TOTAL_MINOR.to_string().as_str())
    );
    assert_eq!(form.get("metadata[idempotency_key]"), Some(&id));
    assert_eq!(form.get("metadata[proposal_id]"), Some(&id));
    assert!(
        !form.contains_key("currency"),
        "a refund takes its charge's currency"
    );
    assert_eq!(h.account.refunds_made(), 1);
    assert!(
        h.requests()
            .await
            .iter()
            .any(|r| r.url.path() == format!("/v1/payment_intents/{PAYMENT_INTENT}")),
        "the PaymentIntent was read before the send"
    );
    h.assert_api_version_pinned().await;
    // Booked once on the imported order, and journaled.
    let order = h.order().await;
    assert_eq!(order.refunds.len(), 1);
    assert_eq!(order.refunds[0].amount.amount_minor, TOTAL_MINOR);
    assert_eq!(order.refunds[0].channel, "countersign");
    let statuses = h.statuses_reached(&id).await;
    assert_eq!(statuses.last().map(String::as_str), Some("verified"));
    assert_never_failed(&statuses);
}

#[tokio::test]
async fn a_refund_stripe_made_is_never_marked_failed_while_its_status_query_is_refused_or_unreadable()
 {
    let h = StripeHarness::start(fast_settings("executor-stripe-unknown")).await;
    // Stripe makes the refund but its answer arrives after the client gave up.
    h.refunds_made_after(LATE_ANSWER).await;

    let id = h.approved_refund().await;
    // After the approval's checks Stripe's listing fails, one way per status
    // query, in turn: 401 (a rolled key), 403 (a restricted key), 404, 500,
    // and a 200 that is not JSON (a proxy's page).
    let failures = [
        listing_refused(),
        stripe_error(
            403,
            "invalid_request_error",
            "",
            "The provided key does not have the required permissions for this endpoint",
        ),
        stripe_error(
            404,
            "invalid_request_error",
            "resource_missing",
            "Unrecognized request URL (GET: /v1/refunds)",
        ),
        stripe_error(500, "api_error", "", "An unknown error occurred"),
        ResponseTemplate::new(200).set_body_string("<html>upstream proxy</html>"),
    ];
    let count = failures.len();
    for (priority, template) in (1u8..).zip(failures) {
        Mock::given(method("GET"))
            .and(path("/v1/refunds"))
            .respond_with(template)
            .up_to_n_times(1)
            .expect(1)
            .with_priority(priority)
            .mount(&h.stripe)
            .await;
    }
    let unknown = h.after_send(&id).await;
    assert_eq!(
        unknown.status(),
        ProposalStatus::OutcomeUnknown,
        "a timed-out send is unknown: {unknown:?}"
    );

    let state = h
        .settle(&id, |s| s.status() == ProposalStatus::Verified)
        .await;

    let ProposalState::Verified { receipt, .. } = &state else {
        unreachable!()
    };
    assert_eq!(receipt.provider_refund_id, "re_3Qshop1");
    let statuses = h.statuses_reached(&id).await;
    assert_never_failed(&statuses);
    let unknowns = statuses.iter().filter(|s| *s == "outcome_unknown").count();
    assert!(
        unknowns > count,
        "the timeout and each failed query left it unknown: {statuses:?}"
    );
    let events = h.events(&id).await;
    for status in ["401", "403", "404", "500"] {
        assert!(
            events
                .iter()
                .any(|e| e.kind == "outcome_unknown"
                    && e.payload.contains(&format!("HTTP {status}"))),
            "the journal says the query got HTTP {status}"
        );
    }
    assert!(
        events
            .iter()
            .any(|e| e.kind == "outcome_unknown" && e.payload.contains("unreadable body")),
        "the journal says the 200 was unreadable"
    );
    h.stripe.verify().await;
    // One refund request and one refund: nothing was sent again.
    let posts = h.refund_posts().await;
    assert_eq!(posts.len(), 1, "no resend");
    assert_eq!(header_of(&posts[0], "idempotency-key"), Some(id.as_str()));
    assert_eq!(h.account.refunds_made(), 1);
    assert_eq!(h.order().await.refunds.len(), 1, "booked once");
    h.assert_api_version_pinned().await;
}

#[tokio::test]
async fn a_refund_whose_status_stripe_keeps_refusing_is_escalated_to_a_person_and_never_marked_failed()
 {
    let mut settings = fast_settings("executor-stripe-escalate");
    settings.max_unknown_checks = 2;
    let h = StripeHarness::start(settings).await;
    h.refunds_made_after(LATE_ANSWER).await;

    let id = h.approved_refund().await;
    // Three status queries refused: with the timed-out send, four unknown
    // checks, two past the limit. (The reconciler runs only in `settle`,
    // so the fourth check is the first to reach the working listing.)
    Mock::given(method("GET"))
        .and(path("/v1/refunds"))
        .respond_with(listing_refused())
        .up_to_n_times(3)
        .expect(3)
        .with_priority(1)
        .mount(&h.stripe)
        .await;

    let state = h
        .settle(
            &id,
            |s| matches!(s, ProposalState::OutcomeUnknown { checks, .. } if *checks >= 4),
        )
        .await;

    let ProposalState::OutcomeUnknown {
        escalated, reason, ..
    } = &state
    else {
        unreachable!()
    };
    assert!(*escalated, "a person is told: {state:?}");
    assert!(reason.contains("HTTP 401"), "{reason}");
    assert_never_failed(&h.statuses_reached(&id).await);
    assert!(
        h.order().await.refunds.is_empty(),
        "an unknown outcome is not booked"
    );

    // Checks continue after the escalation: once Stripe answers again, the
    // refund it made is found and verified, and nothing was sent twice.
    let state = h
        .settle(&id, |s| s.status() == ProposalStatus::Verified)
        .await;
    assert_eq!(state.status(), ProposalStatus::Verified);
    h.stripe.verify().await;
    assert_never_failed(&h.statuses_reached(&id).await);
    assert_eq!(h.refund_posts().await.len(), 1, "no resend");
    assert_eq!(h.account.refunds_made(), 1);
    assert_eq!(h.order().await.refunds.len(), 1, "booked once");
    h.assert_api_version_pinned().await;
}

#[tokio::test]
async fn a_stored_stripe_error_replayed_under_the_key_goes_to_a_person_at_once_without_a_resend() {
    let h = StripeHarness::start(fast_settings("executor-stripe-replayed")).await;
    h.refunds_answered(
        stripe_error(500, "api_error", "", "An unknown error occurred")
            .insert_header("Idempotent-Replayed", "true"),
    )
    .await;

    let id = h.approved_refund().await;
    let state = h.after_send(&id).await;

    let ProposalState::NeedsAttention { reason, receipt } = &state else {
        panic!("expected needs_attention at once, got {state:?}");
    };
    assert!(reason.contains("HTTP 500"), "{reason}");
    assert!(receipt.is_none());
    let statuses = h.statuses_reached(&id).await;
    assert!(
        !statuses.iter().any(|s| s == "outcome_unknown"),
        "escalated at once, not after status checks: {statuses:?}"
    );
    // The reconciler leaves it to the person: no resend.
    for _ in 0..3 {
        h.engine.execution.reconcile_once().await.unwrap();
    }
    assert_eq!(h.state(&id).await.status(), ProposalStatus::NeedsAttention);
    assert_eq!(h.refund_posts().await.len(), 1, "sent once, never again");
    assert_never_failed(&h.statuses_reached(&id).await);
    assert!(h.order().await.refunds.is_empty(), "nothing booked");
    h.assert_api_version_pinned().await;
}

#[tokio::test]
async fn a_rolled_stripe_key_sends_the_refund_to_a_person_instead_of_failing_it_and_books_nothing()
{
    let h = StripeHarness::start(fast_settings("executor-stripe-rolled")).await;
    // The key was rolled between the approval's checks and the send.
    h.refunds_answered(stripe_error(
        401,
        "invalid_request_error",
        "",
        "Invalid API Key provided: sk_test_****ests",
    ))
    .await;

    let id = h.approved_refund().await;
    let state = h.after_send(&id).await;

    let ProposalState::NeedsAttention { reason, receipt } = &state else {
        panic!("expected needs_attention, got {state:?}");
    };
    assert!(reason.contains("HTTP 401"), "{reason}");
    assert!(reason.contains("configuration"), "{reason}");
    assert!(receipt.is_none());
    assert_never_failed(&h.statuses_reached(&id).await);
    let order = h.order().await;
    assert!(order.refunds.is_empty(), "not booked as refunded");
    assert!(
        storage::receipts::get(h.engine.db.conn(), &id)
            .await
            .unwrap()
            .is_none(),
        "no receipt"
    );
    assert_eq!(h.refund_posts().await.len(), 1);
    assert_eq!(h.account.refunds_made(), 0);
    h.assert_api_version_pinned().await;
}

#[tokio::test]
async fn a_refund_made_in_the_stripe_dashboard_before_approval_invalidates_the_proposal_and_stripe_pays_once()
 {
    let h = StripeHarness::start(fast_settings("executor-stripe-dashboard")).await;
    h.refunds_made_after(Duration::ZERO).await;
    let customer = h.actor("customer").await;
    let stored = submit_as(&h.engine, &customer, refund_request(ORDER))
        .await
        .unwrap();
    // Someone refunds the whole payment in Stripe's dashboard: no key of ours,
    // nothing Countersign was told.
    h.account.ledger().refunds.push(json!({
        "id": "re_3QdashboardRefund", "object": "refund", "amount": TOTAL_MINOR,
        "charge": CHARGE, "created": chrono::Utc::now().timestamp(), "currency": "eur",
        "metadata": {}, "payment_intent": PAYMENT_INTENT, "status": "succeeded"
    }));

    let approved = h
        .engine
        .approvals
        .approve(
            &h.actor("approver").await,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap();

    let ProposalState::Invalidated { reason } = &approved.state else {
        panic!("expected invalidated, got {:?}", approved.state);
    };
    assert!(reason.to_string().contains("fully refunded"), "{reason}");
    assert!(
        h.refund_posts().await.is_empty(),
        "nothing was sent to Stripe"
    );
    assert_eq!(
        h.account.refunds_made(),
        1,
        "only the dashboard's refund exists"
    );
    h.assert_api_version_pinned().await;
}

#[tokio::test]
async fn an_order_whose_payment_stripe_cannot_address_is_refused_at_proposal_time_not_after_approval()
 {
    let h = StripeHarness::start(fast_settings("executor-stripe-reference")).await;
    let customer = h.actor("customer").await;
    // An order stored before the provider was switched to Stripe keeps its
    // sandbox-style reference.
    let mut legacy =
        engine::demo::delivered_cap_order("legacy-1", &customer.user_id, engine::now());
    legacy.payment_reference = "pay_legacy_1".into();
    let tx = h.engine.db.begin_write().await.unwrap();
    storage::orders::insert(&*tx, &legacy).await.unwrap();
    tx.commit().await.unwrap();

    let error = submit_as(&h.engine, &customer, refund_request("legacy-1"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            engine::proposals::SubmitError::UnrefundableReference { .. }
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("pay_legacy_1") || error.to_string().contains("pi_"),
        "{error}"
    );
    let waiting = storage::proposals::list(
        h.engine.db.conn(),
        &storage::proposals::ProposalFilter::default(),
        10,
        0,
    )
    .await
    .unwrap();
    assert!(
        waiting.iter().all(|p| p.proposal.order_id != "legacy-1"),
        "nothing stored"
    );
}
