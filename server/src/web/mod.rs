//! HTTP endpoints outside the Leptos pages: the JSON API, probes and the
//! embeddable widget.

pub mod a2a;
pub mod api;
pub mod api_error;
pub mod audit_csv;
pub mod health;
pub mod listener;
pub mod live;
pub mod server_fns;
pub mod widget;
