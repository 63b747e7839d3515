//! Approving and rejecting proposals: approval is data, bound to the
//! authenticated person, the proposal and the exact action digest they saw.

pub mod approve;
pub mod decide;

pub use decide::DecisionError;
