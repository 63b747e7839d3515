//! The chat through the real agent runtime and real storage (SQLite, or
//! PostgreSQL with TEST_DATABASE_URL): scripted models drive the coordinator
//! and the refund specialist turn by turn; the offline rules model is used
//! where the flow itself is under test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod access;
mod answers;
mod browser_lane;
mod evidence;
mod flagship;
mod handover;
mod model_path;
mod one_live;
mod runtime;
mod sign_in;
mod status;
mod subagents;
mod support;
