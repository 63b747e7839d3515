//! The embeddable chat widget.
//!
//! An admin registers a host site (a name and the one origin allowed to frame
//! the widget) and gets an Ed25519 signing key: the private half is shown once,
//! only the public half is stored. The host site's server signs a short-lived
//! token (a JWT, `alg: EdDSA`, `kid` = our key id) naming its customer, one
//! of those an admin bound to the site; the widget frame exchanges it once
//! for a widget session, whose secret it sends as a bearer token to the chat
//! API. A widget session acts as that customer, so its conversations see
//! only that customer's orders, and it reaches only the conversations it
//! opened and the proposals they prepared (see `Actor::widget_session`).

mod customers;
mod keys;
mod sessions;
mod sites;

pub use customers::{SiteCustomerError, SiteCustomerView};
pub use keys::{HostTokenClaims, NewSigningKey, TOKEN_AUDIENCE, sign_host_token};
pub use sessions::{
    CLOCK_SKEW, MAX_TOKEN_LIFETIME, OpenedSession, SESSION_LIFETIME, WidgetIdentity,
    WidgetTokenError,
};
pub use sites::{KeyView, SiteAdminError, SiteView, is_strict_origin, normalize_origin};

use crate::clock::Clock;
use storage::Database;

/// Host sites, their keys and customers (an admin's), and the widget
/// sessions their customers open.
#[derive(Debug, Clone)]
pub struct Widget {
    db: Database,
    clock: Clock,
}

impl Widget {
    pub fn new(db: Database, clock: Clock) -> Self {
        Widget { db, clock }
    }
}

/// Prefix of widget session secrets (API tokens use `cst_`).
pub const SESSION_PREFIX: &str = "cwt_";
