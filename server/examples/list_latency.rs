//! Benchmark: the lists people and API clients read, against 10,000
//! proposals waiting for a decision.
//!
//! A real server (the same router as `countersign serve`) on a test
//! database seeded with the demo users and `BENCH_PROPOSALS` waiting
//! proposals (on orders of their own, submitted through the engine as the
//! assistant would). Signed in as an approver with a browser session, each
//! case is requested `BENCH_REQUESTS` times at 1 and at 64 connections;
//! p50 and p99 latency are printed per case.
//!
//! ```sh
//! cargo run --release -p server --example list_latency                  # SQLite
//! TEST_DATABASE_URL=postgres://countersign:countersign@127.0.0.1:5432/countersign \
//!   cargo run --release -p server --example list_latency                # PostgreSQL
//! ```
//! Options (environment): BENCH_PROPOSALS (10000), BENCH_REQUESTS (640),
//! BENCH_CASES (only the cases whose path contains one of these
//! comma-separated words).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use engine::Actor;
use engine::proposals::Proposer;
use server::config::Settings;
use server::startup::Application;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use storage::testing::TestDatabase;

// The allocator `countersign serve` runs with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PASSWORD: &str = "bench-password";

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn actor(db: &storage::Database, name: &str) -> Actor {
    let user = storage::users::find_by_name(db.conn(), name)
        .await
        .unwrap()
        .unwrap();
    Actor::from(user)
}

/// `count` proposals awaiting approval, each on an order of its own.
async fn waiting_proposals(engine: &engine::Engine, customer: &Actor, count: usize) {
    let now = engine::now();
    let tx = engine.db.begin_write().await.unwrap();
    for n in 0..count {
        let order =
            engine::demo::delivered_cap_order(&format!("bench-{n}"), &customer.user_id, now);
        storage::orders::insert(&*tx, &order).await.unwrap();
    }
    tx.commit().await.unwrap();
    for n in 0..count {
        engine
            .proposals
            .submit(
                Proposer::Assistant {
                    agent: "bench",
                    sender: customer,
                    customer_id: &customer.user_id,
                },
                engine::demo::whole_order_refund(&format!("bench-{n}")),
            )
            .await
            .unwrap();
    }
}

/// A client signed in as `user` through the login page, as a browser is.
async fn signed_in(base: &str, user: &str) -> reqwest::Client {
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(128)
        .build()
        .unwrap();
    let page = client.get(format!("{base}/login")).send().await.unwrap();
    let html = page.text().await.unwrap();
    let marker = "name=\"csrf-token\" content=\"";
    let start = html.find(marker).unwrap() + marker.len();
    let token = &html[start..start + html[start..].find('"').unwrap()];
    let response = client
        .post(format!("{base}/fn/login"))
        .form(&[
            ("csrf_token", token),
            ("username", user),
            ("password", PASSWORD),
            ("next", "/"),
        ])
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "sign-in: {}",
        response.status()
    );
    client
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

/// `requests` GETs of `url` over `connections` concurrent connections:
/// (p50, p99) in milliseconds, and the size of the last answer.
async fn measure(
    client: &reqwest::Client,
    url: &str,
    connections: usize,
    requests: usize,
) -> (f64, f64, usize) {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (client, url, next) = (client.clone(), url.to_owned(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut size = 0;
            while next.fetch_add(1, Ordering::Relaxed) < requests {
                let started = Instant::now();
                let response = client.get(&url).send().await.unwrap();
                assert!(
                    response.status().is_success(),
                    "{url}: {}",
                    response.status()
                );
                size = response.bytes().await.unwrap().len();
                samples.push(started.elapsed());
            }
            (samples, size)
        }));
    }
    let mut samples = Vec::new();
    let mut size = 0;
    for task in tasks {
        let (mine, last) = task.await.unwrap();
        samples.extend(mine);
        size = size.max(last);
    }
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.99), size)
}

#[tokio::main]
async fn main() {
    let proposals = env_or("BENCH_PROPOSALS", 10_000);
    let requests = env_or("BENCH_REQUESTS", 640);
    let database = TestDatabase::new().await;
    engine::demo::seed_demo(
        &database.db,
        PASSWORD,
        engine::demo::ReferenceStyle::Sandbox,
        engine::now(),
    )
    .await
    .unwrap();
    let settings = Arc::new(Settings {
        listen: "127.0.0.1:0".parse().unwrap(),
        database_url: database.url.clone(),
        seed_demo: Some(false),
        // The seeding submits far more than a person may in an hour.
        max_proposals_per_submitter: u64::MAX / 2,
        ..Settings::default()
    });
    let app = Application::build(settings, database.db.clone())
        .await
        .unwrap();
    let base = format!("http://{}", app.local_addr().unwrap());
    let engine = app.engine().clone();
    let seeding = Instant::now();
    let customer = actor(&database.db, "customer").await;
    waiting_proposals(&engine, &customer, proposals).await;
    println!(
        "backend {}, {proposals} waiting proposals seeded in {:.0} s, {requests} requests per case",
        if database.url.starts_with("postgres") {
            "PostgreSQL"
        } else {
            "SQLite"
        },
        seeding.elapsed().as_secs_f64()
    );
    tokio::spawn(async move { app.run_until(std::future::pending()).await.unwrap() });

    let approver = signed_in(&base, "approver").await;
    let cases = [
        "/queue",
        "/queue?sort=newest",
        "/queue?sort=largest_amount",
        "/queue?tab=waiting",
        "/api/v1/proposals?limit=50",
        "/api/v1/proposals?status=awaiting_approval&limit=50",
        "/api/v1/proposals?status=verified&limit=50",
        "/api/v1/proposals?order_id=bench-4321",
        "/api/v1/proposals?limit=50&offset=5000",
    ];
    println!(
        "{:<55} {:>8} {:>12} {:>12} {:>12} {:>12}",
        "case", "KiB", "p50 @1 ms", "p99 @1 ms", "p50 @64 ms", "p99 @64 ms"
    );
    let only = std::env::var("BENCH_CASES").unwrap_or_default();
    let chosen = |case: &str| only.is_empty() || only.split(',').any(|word| case.contains(word));
    for case in cases.into_iter().filter(|case| chosen(case)) {
        let url = format!("{base}{case}");
        // Warm the caches the way a running server's are.
        measure(&approver, &url, 1, 20).await;
        let (p50_one, p99_one, size) = measure(&approver, &url, 1, requests / 4).await;
        let (p50_many, p99_many, _) = measure(&approver, &url, 64, requests).await;
        println!(
            "{case:<55} {:>8.1} {p50_one:>12.1} {p99_one:>12.1} {p50_many:>12.1} {p99_many:>12.1}",
            size as f64 / 1024.0
        );
    }
}
