//! The exclusive browser lane: the specialist reads the carrier's tracking
//! page in a real headless Chromium (Debian's, installed by the scripts)
//! when the order record shows no delivery. One page at a time, in this
//! process and across replicas; Stop during a read kills it and frees the
//! lane; no browser means "unknown", never a guess. The carrier is the
//! sandbox carrier served over real HTTP; a test holds its pages to catch
//! the browser mid-read.

use crate::support::Chat;
use connectors::carrier_sandbox::CarrierSandbox;
use domain::proposal::EvidenceKind;
use engine::assistant::team::TeamOptions;
use engine::assistant::{Assistant, OfflineRules, Priority, TurnControl, TurnEnd, TurnResult};
use engine::{Actor, CarrierParts, Engine};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

const RETURN_4824: &str = "I'd like to return my head lamp, order 4824";

fn carrier_team() -> Assistant {
    Assistant::for_team(
        Arc::new(OfflineRules::new()),
        TeamOptions {
            carrier: true,
            ..TeamOptions::default()
        },
    )
    .unwrap()
}

/// The sandbox carrier with the demo's parcels, on its own port.
async fn carrier() -> (CarrierSandbox, String) {
    let sandbox = CarrierSandbox::new(
        engine::demo::carrier_parcels(engine::now())
            .into_iter()
            // The demo's slow page is for people watching; tests hold pages instead.
            .map(|parcel| connectors::carrier_sandbox::CarrierParcel {
                delay: Duration::ZERO,
                ..parcel
            }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(connectors::carrier_sandbox::serve_standalone(
        listener,
        sandbox.clone(),
    ));
    (
        sandbox,
        format!("http://{address}/track/{{tracking_number}}"),
    )
}

fn parts(tracking_url: &str, browser: &str) -> CarrierParts {
    CarrierParts {
        carrier: connectors::carrier_sandbox::SANDBOX_CARRIER.to_owned(),
        browser: browser.into(),
        timeout: Duration::from_secs(30),
        tracking_url: tracking_url.to_owned(),
    }
}

async fn chat_with_carrier(browser: &str) -> (Chat, CarrierSandbox, String) {
    let (sandbox, url) = carrier().await;
    let mut chat = Chat::with(|_| carrier_team()).await;
    chat.engine = chat.engine.clone().with_carrier(parts(&url, browser));
    (chat, sandbox, url)
}

/// The shop's record of how `order_id` went out.
async fn shipped_with(chat: &Chat, order_id: &str, carrier: &str, tracking_number: &str) {
    chat.engine
        .orders
        .record_shipment(
            &engine::orders::Feeder::command_line(),
            order_id,
            engine::orders::ShipmentInput {
                carrier: carrier.into(),
                tracking_number: tracking_number.into(),
            },
        )
        .await
        .unwrap();
}

/// The reply says the carrier's page could not be read, and why.
fn assert_unknown_because(result: &TurnResult, reason: &str) {
    assert!(
        result
            .reply
            .contains("couldn't read the carrier's tracking page")
            && result.reply.contains(reason),
        "{}",
        result.reply
    );
}

fn turn(engine: &Engine, actor: &Actor, id: &str, text: &str) -> JoinHandle<TurnResult> {
    let engine = engine.clone();
    let actor = actor.clone();
    let id = id.to_owned();
    let text = text.to_owned();
    tokio::spawn(async move {
        engine
            .chat
            .chat_turn(&actor, &id, &text, Priority::Later, TurnControl::new())
            .await
            .unwrap()
            .answered()
            .expect("the message got its own turn")
    })
}

async fn ended(turn: JoinHandle<TurnResult>) -> TurnResult {
    tokio::time::timeout(Duration::from_secs(60), turn)
        .await
        .expect("the turn never ended")
        .unwrap()
}

async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), future)
        .await
        .unwrap_or_else(|_| panic!("{what} never happened"))
}

#[tokio::test]
async fn a_shipped_order_the_carrier_delivered_is_read_in_a_real_browser_and_the_refund_cites_the_screenshot()
 {
    let (chat, sandbox, _) = chat_with_carrier(connectors::browser::DEBIAN_CHROMIUM).await;
    let (customer, id) = chat.open("customer2").await;

    let asked = chat.say(&customer, &id, RETURN_4824).await;
    assert_eq!(asked.end, TurnEnd::Answered);
    assert!(
        asked.reply.contains("delivered 1 days ago") && asked.reply.contains("[browser-check:brc_"),
        "{}",
        asked.reply
    );
    assert!(
        asked.reply.contains("was the item opened"),
        "{}",
        asked.reply
    );
    assert_eq!(sandbox.most_answering_at_once(), 1);

    let answered = chat.say(&customer, &id, "No, it is still sealed").await;
    let proposals = chat.proposals_for("4824").await;
    assert_eq!(proposals.len(), 1, "{}", answered.reply);
    let page = proposals[0]
        .proposal
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::BrowserCapture)
        .expect("the proposal cites the page read in the browser")
        .clone();
    assert_eq!(
        page.quote,
        format!(
            "status: delivered; delivered on {}",
            (engine::now() - chrono::Duration::days(1)).date_naive()
        )
    );
    let check_id = page.reference.strip_prefix("browser-check:").unwrap();
    let check = storage::browser::checks::get(chat.engine.db.conn(), check_id)
        .await
        .unwrap()
        .unwrap();
    // The picture is a PNG, and the citation's version is its hash.
    assert!(check.screenshot.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(page.version, hex::encode(Sha256::digest(&check.screenshot)));
    assert!(check.url.ends_with("/track/PW4824DE"), "{}", check.url);
    assert!(
        check.page_text.contains("Left with a neighbour"),
        "{}",
        check.page_text
    );
    assert!(page.section.unwrap().contains(&check.url));
}

#[tokio::test]
async fn two_conversations_that_need_the_browser_at_once_read_their_pages_one_after_the_other() {
    let (chat, sandbox, _) = chat_with_carrier(connectors::browser::DEBIAN_CHROMIUM).await;
    let lane = chat.engine.chat.browser_lane().unwrap().clone();
    let (customer, first) = chat.open("customer2").await;
    let (_, second) = chat.open("customer2").await;
    sandbox.hold();

    let first_turn = turn(&chat.engine, &customer, &first, RETURN_4824);
    within("the first page load", sandbox.answering(1)).await;
    let second_turn = turn(&chat.engine, &customer, &second, RETURN_4824);
    within(
        "the second conversation waiting for the lane",
        lane.waiting(1),
    )
    .await;
    // The first browser is mid-read; the second waits for the lane, not
    // for a page.
    assert_eq!(sandbox.answering_now(), 1);

    sandbox.release();
    let (first_done, second_done) = (ended(first_turn).await, ended(second_turn).await);
    for done in [&first_done, &second_done] {
        assert!(done.reply.contains("[browser-check:brc_"), "{}", done.reply);
    }
    assert_eq!(sandbox.most_answering_at_once(), 1);
    assert_eq!(
        storage::browser::checks::count_for_order(chat.engine.db.conn(), "4824")
            .await
            .unwrap(),
        2
    );
}

#[tokio::test]
async fn two_replicas_sharing_a_database_never_drive_the_browser_at_once() {
    let (chat, sandbox, url) = chat_with_carrier(connectors::browser::DEBIAN_CHROMIUM).await;
    let replica = chat
        .another_engine(carrier_team())
        .await
        .with_carrier(parts(&url, connectors::browser::DEBIAN_CHROMIUM));
    let (customer, first) = chat.open("customer2").await;
    let (_, second) = chat.open("customer2").await;
    sandbox.hold();

    let first_turn = turn(&chat.engine, &customer, &first, RETURN_4824);
    within("the first page load", sandbox.answering(1)).await;
    let second_turn = turn(&replica, &customer, &second, RETURN_4824);
    // The other replica's lane is free in its own process; the lease on
    // the database is what keeps it waiting.
    within(
        "the replica waiting for the lease",
        replica.chat.browser_lane().unwrap().waiting(1),
    )
    .await;
    assert_eq!(sandbox.answering_now(), 1);

    sandbox.release();
    ended(first_turn).await;
    let second_done = ended(second_turn).await;
    assert!(
        second_done.reply.contains("[browser-check:brc_"),
        "{}",
        second_done.reply
    );
    assert_eq!(sandbox.most_answering_at_once(), 1);
}

#[tokio::test]
async fn a_customer_waiting_on_the_carriers_page_is_told_it_is_being_read_until_the_read_ends() {
    let (chat, sandbox, _) = chat_with_carrier(connectors::browser::DEBIAN_CHROMIUM).await;
    let (customer, id) = chat.open("customer2").await;
    assert!(!chat.reload(&customer, &id).await.reading_carrier_page);
    sandbox.hold();

    let reading = turn(&chat.engine, &customer, &id, RETURN_4824);
    within("the page load", sandbox.answering(1)).await;
    assert!(
        chat.reload(&customer, &id).await.reading_carrier_page,
        "the conversation says the carrier's page is being read"
    );
    sandbox.release();
    let done = ended(reading).await;
    assert!(done.reply.contains("[browser-check:brc_"), "{}", done.reply);
    assert!(!chat.reload(&customer, &id).await.reading_carrier_page);
    // Ended by the read itself, not only hidden because the turn ended.
    let stored = storage::conversations::get(chat.engine.db.conn(), &id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.carrier_read_until, None);
}

#[tokio::test]
async fn stop_during_a_browser_step_ends_the_read_records_nothing_and_frees_the_lane_for_the_next_turn()
 {
    let (chat, sandbox, _) = chat_with_carrier(connectors::browser::DEBIAN_CHROMIUM).await;
    let (customer, stopped) = chat.open("customer2").await;
    sandbox.hold();

    let stopped_turn = turn(&chat.engine, &customer, &stopped, RETURN_4824);
    within("the page load", sandbox.answering(1)).await;
    let receipt = chat
        .engine
        .chat
        .stop_turn(&customer, &stopped)
        .await
        .unwrap();
    assert!(receipt.turn_stopping);
    let result = ended(stopped_turn).await;
    assert!(
        matches!(result.end, TurnEnd::Stopped { .. }),
        "{:?}",
        result.end
    );
    let conversation = chat.reload(&customer, &stopped).await;
    let cut = conversation
        .state
        .messages()
        .iter()
        .find(|m| m.role == agents::Role::Tool && m.outcome == Some(agents::OutcomeKind::Cancelled))
        .expect("the browser step has a recorded cancelled result");
    assert!(cut.result_json().is_some());
    assert_eq!(
        storage::browser::checks::count_for_order(chat.engine.db.conn(), "4824")
            .await
            .unwrap(),
        0,
        "a stopped read records nothing"
    );

    // The next turn reads the page again (the cut read says nothing) and
    // gets the lane at once: with the page still held, it waits for the
    // carrier, not for the stopped read.
    within("the stopped read's page going away", sandbox.idle()).await;
    let next_turn = turn(&chat.engine, &customer, &stopped, RETURN_4824);
    within("the next turn's page load", sandbox.answering(1)).await;
    sandbox.release();
    let done = ended(next_turn).await;
    assert!(done.reply.contains("[browser-check:brc_"), "{}", done.reply);
}

#[tokio::test]
async fn without_a_browser_installed_the_carrier_check_is_unknown_with_the_reason_and_nothing_is_proposed()
 {
    let (chat, sandbox, _) = chat_with_carrier("/nonexistent/chromium").await;
    let (customer, id) = chat.open("customer2").await;

    let result = chat.say(&customer, &id, RETURN_4824).await;
    assert_unknown_because(&result, "no browser is installed at /nonexistent/chromium");
    assert!(chat.proposals_for("4824").await.is_empty());
    assert_eq!(sandbox.most_answering_at_once(), 0);
}

#[tokio::test]
async fn a_parcel_sent_with_another_carrier_is_never_looked_up_on_this_carriers_pages() {
    let (chat, sandbox, _) = chat_with_carrier(connectors::browser::DEBIAN_CHROMIUM).await;
    // The shop says 4824 went out with another carrier, under a number the
    // sandbox carrier also knows: its page would describe someone else's
    // parcel.
    shipped_with(
        &chat,
        "4824",
        "dhl",
        &engine::demo::demo_tracking_number("4824"),
    )
    .await;
    let (customer, id) = chat.open("customer2").await;

    let result = chat.say(&customer, &id, RETURN_4824).await;

    assert_unknown_because(
        &result,
        "went out with dhl, whose tracking pages this team does not read",
    );
    assert_eq!(sandbox.most_answering_at_once(), 0);
    assert!(chat.proposals_for("4824").await.is_empty());
}

#[tokio::test]
async fn investigators_of_two_shipped_orders_read_their_carriers_pages_one_after_the_other() {
    let (chat, sandbox, _) = chat_with_carrier(connectors::browser::DEBIAN_CHROMIUM).await;
    let lane = chat.engine.chat.browser_lane().unwrap().clone();
    // A second order of Cas's still "shipped" in the records, which the
    // carrier delivered three days ago.
    let conn = chat.engine.db.conn();
    let mut second = storage::orders::get(conn, "4824").await.unwrap().unwrap();
    second.id = "4825".into();
    second.payment_reference = "pay_4825".into();
    second.refunds.clear();
    storage::orders::insert(conn, &second).await.unwrap();
    shipped_with(
        &chat,
        "4825",
        connectors::carrier_sandbox::SANDBOX_CARRIER,
        "PW4825DE",
    )
    .await;
    sandbox.track(connectors::carrier_sandbox::CarrierParcel {
        tracking_number: "PW4825DE".into(),
        status: "delivered".into(),
        delivered_on: Some((engine::now() - chrono::Duration::days(3)).date_naive()),
        detail: "Handed to the customer".into(),
        delay: Duration::ZERO,
    });
    let (customer, id) = chat.open("customer2").await;
    sandbox.hold();

    let both = turn(
        &chat.engine,
        &customer,
        &id,
        "I'd like to return orders 4824 and 4825",
    );
    within("the first investigator's page load", sandbox.answering(1)).await;
    within(
        "the other investigator waiting for the browser",
        lane.waiting(1),
    )
    .await;
    assert_eq!(sandbox.answering_now(), 1);

    sandbox.release();
    let done = ended(both).await;
    assert!(
        done.reply.contains("- Order 4824:") && done.reply.contains("- Order 4825:"),
        "{}",
        done.reply
    );
    assert_eq!(sandbox.most_answering_at_once(), 1);
    for order_id in ["4824", "4825"] {
        assert_eq!(
            storage::browser::checks::count_for_order(conn, order_id)
                .await
                .unwrap(),
            1,
            "order {order_id}: {}",
            done.reply
        );
    }
    assert_eq!(
        done.questions,
        ["Was the item opened?", "Was the item opened?"],
        "both deliveries are known, so only the opening is asked: {}",
        done.reply
    );
}
