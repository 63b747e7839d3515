//! A sandbox carrier: tracking pages for the embedded default, served over
//! real HTTP like the sandbox payment provider, so the browser lane reads a
//! real page in a real browser. Each parcel can be slow (the page answers
//! only after a delay, as carrier sites do), and a test can hold every page
//! until it lets them go, to catch a browser in the middle of a read.
//!
//! The page marks its answer for machines (`data-tracking-status`,
//! `data-delivered-on`) and shows it for people; the browser keeps both the
//! text and a screenshot.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::NaiveDate;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The name the sandbox carrier trades under.
pub const SANDBOX_CARRIER: &str = "parcelway";

/// One parcel as the carrier tracks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarrierParcel {
    pub tracking_number: String,
    /// `delivered`, `in_transit`, `out_for_delivery` or `exception`.
    pub status: String,
    pub delivered_on: Option<NaiveDate>,
    /// Where the parcel is or was left, shown to the reader.
    pub detail: String,
    /// How long the page takes to answer.
    pub delay: Duration,
}

/// The carrier's parcels and its page gate.
#[derive(Debug, Clone)]
pub struct CarrierSandbox {
    parcels: Arc<RwLock<HashMap<String, CarrierParcel>>>,
    /// While true, every page waits before answering.
    held: watch::Sender<bool>,
    /// Pages being answered right now (a held or slow page counts).
    answering: watch::Sender<usize>,
    /// Pages answered since the start.
    answered: watch::Sender<usize>,
    /// The most pages ever answered at once.
    most_at_once: Arc<std::sync::atomic::AtomicUsize>,
}

impl Default for CarrierSandbox {
    fn default() -> Self {
        CarrierSandbox {
            parcels: Arc::default(),
            held: watch::Sender::new(false),
            answering: watch::Sender::new(0),
            answered: watch::Sender::new(0),
            most_at_once: Arc::default(),
        }
    }
}

impl CarrierSandbox {
    pub fn new(parcels: impl IntoIterator<Item = CarrierParcel>) -> Self {
        let sandbox = CarrierSandbox::default();
        for parcel in parcels {
            sandbox.track(parcel);
        }
        sandbox
    }

    /// Starts (or corrects) tracking `parcel`.
    pub fn track(&self, parcel: CarrierParcel) {
        self.parcels
            .write()
            .insert(parcel.tracking_number.clone(), parcel);
    }

    /// Holds every page until [`Self::release`]: a browser reading one
    /// stays in the middle of its read.
    pub fn hold(&self) {
        self.held.send_replace(true);
    }

    pub fn release(&self) {
        self.held.send_replace(false);
    }

    /// Waits until `count` pages are being answered at once.
    pub async fn answering(&self, count: usize) {
        let mut seen = self.answering.subscribe();
        let _reached = seen.wait_for(|now| *now >= count).await;
    }

    /// Waits until no page is being answered (a reader that went away has
    /// been noticed).
    pub async fn idle(&self) {
        let mut seen = self.answering.subscribe();
        let _reached = seen.wait_for(|now| *now == 0).await;
    }

    /// The most pages ever answered at once.
    pub fn most_answering_at_once(&self) -> usize {
        self.most_at_once.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many pages are being answered right now.
    pub fn answering_now(&self) -> usize {
        *self.answering.borrow()
    }

    async fn page(&self, tracking_number: &str) -> Response {
        let parcel = self.parcels.read().get(tracking_number).cloned();
        let _answering = Answering::start(&self.answering);
        self.most_at_once.fetch_max(
            *self.answering.borrow(),
            std::sync::atomic::Ordering::SeqCst,
        );
        let mut held = self.held.subscribe();
        // The borrowed value must not live across the awaits below.
        drop(held.wait_for(|held| !*held).await);
        if let Some(parcel) = &parcel {
            // The carrier's own slowness, which the browser lane must
            // tolerate; not a synchronisation.
            tokio::time::sleep(parcel.delay).await;
        }
        self.answered.send_modify(|count| *count += 1);
        match parcel {
            Some(parcel) => html(StatusCode::OK, &tracking_html(&parcel)),
            None => html(
                StatusCode::NOT_FOUND,
                &page_html(
                    "Parcel not found",
                    &format!(
                        "<p>No parcel with tracking number <b>{}</b>.</p>",
                        escape(tracking_number)
                    ),
                ),
            ),
        }
    }
}

/// Counts a page as being answered until dropped (also when the browser
/// goes away mid-answer).
struct Answering<'a>(&'a watch::Sender<usize>);

impl<'a> Answering<'a> {
    fn start(counter: &'a watch::Sender<usize>) -> Self {
        counter.send_modify(|count| *count += 1);
        Answering(counter)
    }
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|count| *count = count.saturating_sub(1));
    }
}

/// What `GET /control` shows and `PUT /control` sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    /// Pages wait while held.
    pub held: bool,
    /// Pages being answered now (read only).
    #[serde(default)]
    pub answering: usize,
    /// Pages answered since the start (read only).
    #[serde(default)]
    pub answered: usize,
}

impl CarrierSandbox {
    fn control(&self) -> Control {
        Control {
            held: *self.held.borrow(),
            answering: *self.answering.borrow(),
            answered: *self.answered.borrow(),
        }
    }
}

/// The carrier's site: `GET /track/{tracking_number}`; and the sandbox's
/// own control, `GET`/`PUT /control` (`{"held": true}` holds every page,
/// so a browser test can catch a read in the middle; it changes nothing
/// but this sandbox's timing).
pub fn router(sandbox: CarrierSandbox) -> Router {
    Router::new()
        .route(
            "/control",
            get(|State(sandbox): State<CarrierSandbox>| async move {
                axum::Json(sandbox.control())
            })
            .put(
                |State(sandbox): State<CarrierSandbox>, axum::Json(wanted): axum::Json<Control>| async move {
                    if wanted.held {
                        sandbox.hold();
                    } else {
                        sandbox.release();
                    }
                    axum::Json(sandbox.control())
                },
            ),
        )
        .route(
            "/track/{tracking_number}",
            get(
                |State(sandbox): State<CarrierSandbox>, Path(number): Path<String>| async move {
                    sandbox.page(&number).await
                },
            ),
        )
        .with_state(sandbox)
}

fn html(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body.to_owned(),
    )
        .into_response()
}

fn tracking_html(parcel: &CarrierParcel) -> String {
    let said = match parcel.status.as_str() {
        "delivered" => "Delivered",
        "in_transit" => "In transit",
        "out_for_delivery" => "Out for delivery",
        "exception" => "Delivery problem",
        _ => "Status not available",
    };
    let date = parcel
        .delivered_on
        .map(|date| {
            format!(
                "<p>Delivered on <time datetime=\"{date}\">{}</time></p>",
                date.format("%-d %B %Y")
            )
        })
        .unwrap_or_default();
    let marked_date = parcel
        .delivered_on
        .map(|date| format!(" data-delivered-on=\"{date}\""))
        .unwrap_or_default();
    page_html(
        &format!("Tracking {}", escape(&parcel.tracking_number)),
        &format!(
            "<section data-tracking-status=\"{}\"{marked_date}>\
             <h2>{said}</h2>{date}<p>{}</p></section>",
            escape(&parcel.status),
            escape(&parcel.detail)
        ),
    )
}

fn page_html(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title} · Parcelway</title>\
         <style>body{{font-family:sans-serif;margin:2rem;max-width:40rem}}\
         header{{border-bottom:3px solid #d35400;margin-bottom:1rem}}</style></head>\
         <body><header><h1>Parcelway tracking</h1></header><main><h2>{title}</h2>{body}</main>\
         <footer><small>Parcelway (sandbox carrier)</small></footer></body></html>"
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Serves the carrier's site on `listener` (bind `127.0.0.1:0` in tests)
/// until the task is dropped.
///
/// # Errors
/// When the server fails to accept connections.
pub async fn serve_standalone(
    listener: tokio::net::TcpListener,
    sandbox: CarrierSandbox,
) -> std::io::Result<()> {
    axum::serve(listener, router(sandbox)).await
}
