//! Stripe, by its documented wire format.

mod client;
mod errors;
mod payments;
mod wire;

pub use client::{STRIPE_API_BASE, STRIPE_VERSION, StripeConfig, StripeProvider};
