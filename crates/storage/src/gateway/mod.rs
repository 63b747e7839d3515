//! The gateway's tables. Only the inbox so far: the tasks other agent groups
//! sent here, each recorded once however often it is delivered.

pub mod inbox;
