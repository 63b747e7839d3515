//! The server's integration tests: the real router on a free port, a fresh
//! database per test (SQLite by default, PostgreSQL when `TEST_DATABASE_URL`
//! is set) seeded with the demo users, and a cookie-keeping HTTP client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod a2a;
mod access;
mod answers;
mod api;
mod audit;
mod chains;
mod cli;
mod csrf;
mod gateway_trust;
mod groups;
mod handover;
mod headers;
mod input_edges;
mod live;
mod malformed_input;
mod metrics;
mod money_edge;
mod ops;
mod order_import;
mod orders;
mod plain_peers;
mod proposal_authority;
mod queue;
#[path = "../common/refund.rs"]
mod refund;
mod sessions;
mod settings_audit;
mod shipments;
mod sign_in;
mod support;
mod unavailable;
mod vault;
mod visitor_chat;
mod widget;
