//! Server-side helpers for server functions: the shared context, the caller's
//! identity, CSRF and role checks. Only compiled with the `ssr` feature.

use crate::csrf::CsrfToken;
use crate::error::AppError;
use domain::{Role, RoleSet, UserSummary};
use leptos::prelude::*;
use leptos_axum::ResponseOptions;
use storage::Database;

/// Session keys.
pub mod keys {
    pub const USER_ID: &str = "user_id";
    pub const EPOCH: &str = "session_epoch";
    pub const SIGNED_IN_AT: &str = "signed_in_at";
    pub const CSRF: &str = "csrf_token";
    /// The visitor this browser is while it chats before signing in.
    pub const GUEST_ID: &str = "guest_id";
}

/// What server functions need from the running server; the binary builds it
/// once and provides it to both Leptos handlers. Every page render and
/// server function clones it (Leptos hands contexts out by value), so it is
/// one shared pointer: cloning the engine itself, a tree of services each
/// holding its own database handle, was the largest cost of a small API
/// answer at 64 connections (README, Benchmarks).
#[derive(Clone, Debug)]
pub struct ServerContext(std::sync::Arc<ServerParts>);

/// The parts a [`ServerContext`] shares.
#[derive(Debug)]
pub struct ServerParts {
    pub db: Database,
    pub engine: engine::Engine,
    /// Tells `/ops` pages that background work changed.
    pub ops_hints: crate::ops::backend::OpsHints,
}

impl ServerContext {
    pub fn new(parts: ServerParts) -> Self {
        ServerContext(std::sync::Arc::new(parts))
    }
}

impl std::ops::Deref for ServerContext {
    type Target = ServerParts;

    fn deref(&self) -> &ServerParts {
        &self.0
    }
}

/// How the caller proved who they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    Session,
    BearerToken,
    /// The embeddable widget's session, opened with a host site's signed
    /// customer token; it may only use the chat.
    WidgetSession,
}

/// The authenticated caller, placed in request extensions by the server's
/// identity middleware after checking the session or bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub user_id: String,
    pub name: String,
    pub display_name: String,
    pub roles: RoleSet,
    pub via: AuthMethod,
    /// The widget session this request came through (with
    /// [`AuthMethod::WidgetSession`]): the engine keeps it to what it opened.
    pub widget_session: Option<String>,
}

impl Identity {
    /// The caller as the engine's use cases see them.
    pub fn actor(&self) -> engine::Actor {
        engine::Actor {
            user_id: self.user_id.clone(),
            name: self.name.clone(),
            roles: self.roles.clone(),
            widget_session: self.widget_session.clone(),
        }
    }

    /// A visitor chatting before signing in (see `engine::Actor::guest`).
    pub fn guest(guest_id: &str) -> Identity {
        let actor = engine::Actor::guest(guest_id);
        Identity {
            user_id: actor.user_id,
            name: actor.name,
            display_name: "Visitor".to_owned(),
            roles: actor.roles,
            via: AuthMethod::Session,
            widget_session: None,
        }
    }

    /// Whether this is a visitor who has not signed in.
    pub fn is_guest(&self) -> bool {
        self.actor().is_guest()
    }

    pub fn summary(&self) -> UserSummary {
        UserSummary {
            id: self.user_id.clone(),
            name: self.name.clone(),
            display_name: self.display_name.clone(),
            roles: self.roles.clone(),
        }
    }
}

/// The client's network address as the server determined it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAddress(pub String);

/// # Errors
/// [`AppError::Internal`] when the server did not provide its context.
pub fn context() -> Result<ServerContext, AppError> {
    use_context::<ServerContext>().ok_or_else(|| {
        let path = use_context::<http::request::Parts>().map(|parts| parts.uri.to_string());
        tracing::error!(?path, "ServerContext missing from the Leptos context");
        fail(AppError::Internal)
    })
}

fn request_extension<T: Clone + Send + Sync + 'static>() -> Option<T> {
    use_context::<http::request::Parts>().and_then(|parts| parts.extensions.get::<T>().cloned())
}

pub fn identity() -> Option<Identity> {
    request_extension::<Identity>()
}

pub fn client_address() -> String {
    request_extension::<ClientAddress>()
        .map(|a| a.0)
        .unwrap_or_else(|| "unknown".to_owned())
}

/// # Errors
/// [`AppError::Unauthenticated`].
pub fn require_user() -> Result<Identity, AppError> {
    identity().ok_or_else(|| fail(AppError::Unauthenticated))
}

/// The chat's caller: the signed-in user, else the visitor this browser
/// session is. With `start` (sending the first message), a browser that is
/// not one yet becomes one; the visitor's id stays in the server-side
/// session, never in the browser. None: signed out and not a visitor.
///
/// # Errors
/// Session storage failures.
pub async fn chat_caller(start: bool) -> Result<Option<Identity>, AppError> {
    if let Some(me) = identity() {
        return Ok(Some(me));
    }
    let session = session().await?;
    let known = session
        .get::<String>(keys::GUEST_ID)
        .await
        .map_err(|e| internal(&e))?;
    let guest_id = match known {
        Some(id) if id.starts_with(engine::core::GUEST_PREFIX) => id,
        _ if start => {
            let id = storage::ids::new_id(engine::core::GUEST_PREFIX.trim_end_matches('_'));
            session
                .insert(keys::GUEST_ID, &id)
                .await
                .map_err(|e| internal(&e))?;
            id
        }
        _ => return Ok(None),
    };
    Ok(Some(Identity::guest(&guest_id)))
}

/// As [`chat_caller`], for a chat that must already have a caller.
///
/// # Errors
/// [`AppError::Unauthenticated`] for a browser that is neither signed in
/// nor a visitor with a conversation; session storage failures.
pub async fn require_chat_caller() -> Result<Identity, AppError> {
    chat_caller(false)
        .await?
        .ok_or_else(|| fail(AppError::Unauthenticated))
}

/// The engine's context and the caller, if the caller administers: the
/// opening of every admin server function.
///
/// # Errors
/// As [`require_role`]; [`context`]'s when the server has no engine.
pub fn require_admin() -> Result<(ServerContext, Identity), AppError> {
    let me = require_role(crate::access::ADMIN_ROLES)?;
    Ok((context()?, me))
}

/// The caller, if they hold at least one of `roles`.
///
/// # Errors
/// [`AppError::Unauthenticated`] or [`AppError::Forbidden`].
pub fn require_role(roles: &[Role]) -> Result<Identity, AppError> {
    let user = require_user()?;
    if user.roles.any_of(roles) {
        Ok(user)
    } else {
        let names: Vec<&str> = roles.iter().map(Role::as_str).collect();
        Err(fail(AppError::Forbidden(format!(
            "this needs the {} role",
            names.join(" or ")
        ))))
    }
}

/// Defence in depth: the CSRF middleware already compared the submitted token
/// with the session's; the server function checks it again.
///
/// # Errors
/// [`AppError::Forbidden`] when the token is missing or wrong.
pub fn check_csrf(submitted: &str) -> Result<(), AppError> {
    use subtle::ConstantTimeEq;
    let expected = request_extension::<CsrfToken>()
        .map(|t| t.0)
        .unwrap_or_default();
    if !expected.is_empty() && bool::from(expected.as_bytes().ct_eq(submitted.as_bytes())) {
        Ok(())
    } else {
        Err(fail(AppError::Forbidden(
            "the form has expired; reload the page and try again".to_owned(),
        )))
    }
}

/// The session of this request.
///
/// # Errors
/// [`AppError::Internal`] when the session layer is missing.
pub async fn session() -> Result<tower_sessions::Session, AppError> {
    leptos_axum::extract::<tower_sessions::Session>()
        .await
        .map_err(|e| internal(&e))
}

/// Sets the HTTP status for the error (and `Retry-After` when the same
/// request may simply be sent again) and returns it.
pub fn fail(error: AppError) -> AppError {
    if let Some(response) = use_context::<ResponseOptions>() {
        response.set_status(
            http::StatusCode::from_u16(error.status())
                .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR),
        );
        if matches!(error, AppError::Unavailable(_)) {
            response.insert_header(
                http::header::RETRY_AFTER,
                http::HeaderValue::from(crate::error::RETRY_AFTER_SECONDS),
            );
        }
    }
    error
}

/// Logs a failure on our side once and hides it from the client. A database
/// that is briefly unavailable (no connection to be had, locked, shutting
/// down) is not such a failure: the same request will likely succeed in a
/// moment, so the client is told so (503 with `Retry-After`). Every server
/// function's storage errors pass through here, so none can forget it.
pub fn internal<E: std::fmt::Display + 'static>(error: &E) -> AppError {
    let any: &dyn std::any::Any = error;
    match any.downcast_ref::<storage::StorageError>() {
        Some(storage::StorageError::Unavailable(reason)) => {
            tracing::warn!(%reason, "database unavailable in a server function");
            fail(AppError::Unavailable(
                crate::error::DATABASE_UNAVAILABLE.to_owned(),
            ))
        }
        Some(storage::StorageError::OutOfRange(message)) => {
            fail(AppError::Invalid(message.clone()))
        }
        _ => {
            tracing::error!(%error, "internal error in a server function");
            fail(AppError::Internal)
        }
    }
}

/// A fresh random token (CSRF).
pub fn random_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}
