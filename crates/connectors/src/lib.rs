//! Payment providers behind one async trait, used by the exactly-once refund
//! executor.
//!
//! - [`PaymentProvider`] is the port: issue a refund under an idempotency key,
//!   look it up by that key, list every refund held for that key.
//! - [`sandbox`] is an in-memory payment provider served over real HTTP with
//!   Stripe's idempotency semantics and seeded fault injection, plus
//!   [`sandbox::SandboxProvider`], its HTTP client.
//! - [`stripe::StripeProvider`] speaks Stripe's documented wire format.
//! - [`browser::Chromium`] reads a carrier's tracking page in headless
//!   Chromium; [`carrier_sandbox`] is a carrier whose pages it can read.
//!
//! The proposal id is the idempotency key. A timeout is
//! [`ProviderError::Unknown`], never a failure: the caller queries the status
//! with [`PaymentProvider::lookup`] before deciding anything.

pub mod a2a;
pub mod browser;
pub mod carrier_sandbox;
mod duration_serde;
mod error;
mod http;
mod provider;
pub mod sandbox;
pub mod stripe;
pub mod vault;

pub use error::ProviderError;
pub use http::{ConfigError, HttpTimeouts};
pub use provider::{
    PaymentProvider, ProviderCharge, ProviderRefund, ProviderRefundStatus, RefundLookup,
    RefundOutcome, RefundRequest,
};
