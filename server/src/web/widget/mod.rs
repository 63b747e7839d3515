//! The embeddable chat widget over HTTP.
//!
//! - `GET /widget.js`: the loader a host site includes; it adds a launcher
//!   button and an iframe of `/widget/frame`, and hands the frame the host's
//!   signed customer token by `postMessage`.
//! - `GET /widget/frame?site=wst_…`: the chat inside the iframe. Its
//!   `frame-ancestors` names only the site's registered origin.
//! - `POST /widget/sessions`: exchanges a host token for a widget session.
//!
//! These routes sit outside the session, identity and CSRF layers: the frame
//! never uses cookies (a third-party iframe cannot count on them); it sends
//! the widget session as a bearer token, held in the frame's memory and
//! session storage, which carries no ambient authority to forge.

mod frame;
pub(crate) mod sessions;

use crate::startup::AppState;
use axum::Router;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::header;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/widget.js", get(loader))
        .route("/widget/frame", get(frame::page))
        .route("/widget/frame.js", get(frame_script))
        .route("/widget/frame.css", get(frame_style))
        .route("/widget/sessions", post(sessions::open))
}

const LOADER_JS: &str = include_str!("assets/widget.js");
const FRAME_JS: &str = include_str!("assets/frame.js");
const FRAME_CSS: &str = include_str!("assets/frame.css");

async fn loader() -> Response {
    asset("text/javascript; charset=utf-8", LOADER_JS)
}

async fn frame_script() -> Response {
    asset("text/javascript; charset=utf-8", FRAME_JS)
}

async fn frame_style() -> Response {
    asset("text/css; charset=utf-8", FRAME_CSS)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            // Short: a fixed loader must reach host pages within minutes.
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        body,
    )
        .into_response()
}
