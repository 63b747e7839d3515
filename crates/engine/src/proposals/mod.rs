//! Proposals: submitted by our agents or by outside agent systems, checked
//! against live records, stored immutably.

pub(crate) mod created;
pub mod queries;
pub mod submit;

pub use submit::{EvidenceRef, SubmitError, SubmitProposal};
