//! SeaORM entities, one table per file.

pub mod api_token;
pub mod approval;
pub mod approval_limit;
pub mod conversation;
pub mod conversation_event;
pub mod conversation_message;
pub mod four_eyes_threshold;
pub mod journal_checkpoint;
pub mod journal_event;
pub mod journal_stream;
pub mod login_failure;
pub mod order;
pub mod order_event;
pub mod order_line;
pub mod order_refund;
pub mod policy_document;
pub mod policy_version;
pub mod proposal;
pub mod receipt;
pub mod user;
pub mod user_role;
pub mod widget_key;
pub mod widget_session;
pub mod widget_site;
pub mod widget_site_customer;
