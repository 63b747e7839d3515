//! Proposals: submitted by our agents or by outside agent systems, checked
//! against live records, stored immutably.

mod answers;
pub mod authority;
pub(crate) mod created;
pub(crate) mod one_live;
pub mod queries;
pub mod submit;
pub mod visibility;

pub use authority::{Proposer, SubmissionLimit};
pub use one_live::LiveProposal;
pub use submit::{EvidenceRef, SubmitError, SubmitProposal};
