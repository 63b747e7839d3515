//! The core contract (BRIEF steps 5–11) through the real engine, a real
//! database (SQLite, or PostgreSQL with TEST_DATABASE_URL) and the sandbox
//! payment provider over real HTTP on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approvals;
mod authority;
mod batches;
mod execution;
mod faults;
mod handover;
mod journal;
mod provider_view;
mod resolution;
mod stripe;
mod submission;
mod support;
mod work;
