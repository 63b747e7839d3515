//! Stripe, by its documented wire format.

mod client;
mod errors;
mod wire;

pub use client::{STRIPE_API_BASE, StripeConfig, StripeProvider};
