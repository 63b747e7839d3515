pub mod admin;
pub mod audit;
pub mod chat;
pub mod home;
pub mod login;
pub mod not_found;
pub mod proposal;
pub mod queue;
