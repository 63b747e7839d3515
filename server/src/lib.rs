//! The countersign server: configuration, wiring of the web application,
//! middleware, and the command line.

pub mod chat_model;
pub mod cli;
pub mod config;
pub mod demo;
pub mod metrics;
pub mod middleware;
pub mod payments;
pub mod session_store;
pub mod site_bundle;
pub mod startup;
pub mod telemetry;
pub mod web;
