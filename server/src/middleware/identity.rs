//! Establishes who is calling: a bearer token (machines) or the session
//! (browsers). A session is honoured only while its user is enabled, its epoch
//! matches the user's (bumped on disable / password change) and it is younger
//! than the absolute lifetime; otherwise it is ended on the spot.

use crate::startup::AppState;
use crate::web::api_error::ApiError;
use app::server::{AuthMethod, ClientAddress, Identity, keys};
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use tower_sessions::Session;

pub async fn identify(
    State(state): State<AppState>,
    session: Session,
    mut request: Request,
    next: Next,
) -> Response {
    let address = client_address(&state, &request);
    request.extensions_mut().insert(ClientAddress(address));

    let identity = match bearer_token(&request) {
        Some(secret) if secret.starts_with(engine::widget::SESSION_PREFIX) => {
            let allowed = widget_may_use(request.method(), request.uri().path());
            match widget_identity(&state, &secret, allowed).await {
                Ok(identity) => Some(identity),
                Err(refusal) => return refusal.into_response(),
            }
        }
        Some(secret) => match state.engine.accounts.authenticate_token(&secret).await {
            Ok(Some(user)) => Some(identity_of(user, AuthMethod::BearerToken)),
            Ok(None) => {
                return ApiError::unauthenticated("the bearer token is invalid or revoked")
                    .into_response();
            }
            Err(error) => return ApiError::internal(&error).into_response(),
        },
        None => match session_identity(&state, &session).await {
            Ok(identity) => identity,
            Err(error) => return ApiError::internal(&error).into_response(),
        },
    };
    if let Some(identity) = identity {
        request.extensions_mut().insert(identity);
    }
    next.run(request).await
}

async fn session_identity(state: &AppState, session: &Session) -> anyhow::Result<Option<Identity>> {
    let Some(user_id) = session.get::<String>(keys::USER_ID).await? else {
        return Ok(None);
    };
    let epoch = session.get::<i64>(keys::EPOCH).await?.unwrap_or(-1);
    let signed_in_at = session.get::<i64>(keys::SIGNED_IN_AT).await?.unwrap_or(0);
    let user = storage::users::find_by_id(state.db.conn(), &user_id).await?;
    let absolute_limit = state.settings.session_absolute_hours * 3600;
    let fresh = engine::now().timestamp() - signed_in_at < absolute_limit;
    match user {
        Some(user) if !user.disabled && user.session_epoch == epoch && fresh => {
            Ok(Some(identity_of(user, AuthMethod::Session)))
        }
        _ => {
            session.flush().await?;
            Ok(None)
        }
    }
}

/// A widget session acts as its customer, and only on the chat: opening and
/// reading its conversations, the proposals they prepared, and their live
/// changes. Everything else a customer could reach stays with a signed-in
/// browser.
async fn widget_identity(
    state: &AppState,
    secret: &str,
    allowed: bool,
) -> Result<Identity, ApiError> {
    if !allowed {
        return Err(ApiError::forbidden(
            "widget_scope",
            "a widget session may only use the chat",
        ));
    }
    match state.engine.widget.authenticate_session(secret).await {
        Ok(Some(widget)) => Ok(Identity {
            widget_session: Some(widget.session_id),
            ..identity_of(widget.customer, AuthMethod::WidgetSession)
        }),
        Ok(None) => Err(ApiError::unauthenticated(
            "the widget session has ended; reload the page to sign in again",
        )),
        Err(error) => Err(ApiError::internal(&error)),
    }
}

pub fn widget_may_use(method: &http::Method, path: &str) -> bool {
    let read = matches!(*method, http::Method::GET | http::Method::HEAD);
    let in_chat = path == "/api/v1/conversations" || path.starts_with("/api/v1/conversations/");
    let proposal_read = read
        && path
            .strip_prefix("/api/v1/proposals/")
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'));
    let reads = read && matches!(path, "/api/v1/me" | "/api/live/proposals");
    in_chat || proposal_read || reads
}

fn identity_of(user: storage::users::UserRecord, via: AuthMethod) -> Identity {
    Identity {
        user_id: user.id,
        name: user.name,
        display_name: user.display_name,
        roles: user.roles,
        via,
        widget_session: None,
    }
}

pub fn bearer_token(request: &Request) -> Option<String> {
    let value = request
        .headers()
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_owned())
}

fn client_address(state: &AppState, request: &Request) -> String {
    if state.settings.trust_forwarded_for
        && let Some(appended) = request
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            // The last entry is the one our proxy appended; everything to its
            // left came from the client and could be forged.
            .and_then(|v| v.rsplit(',').next())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    {
        return appended.to_owned();
    }
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip().to_string())
        .unwrap_or_else(|| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::widget_may_use;
    use http::Method;

    #[test]
    fn widget_sessions_reach_the_chat_and_their_proposals_only() {
        assert!(widget_may_use(&Method::POST, "/api/v1/conversations"));
        assert!(widget_may_use(
            &Method::POST,
            "/api/v1/conversations/cnv_1/messages"
        ));
        assert!(widget_may_use(&Method::GET, "/api/v1/proposals/prp_1"));
        assert!(widget_may_use(&Method::GET, "/api/live/proposals"));
        assert!(!widget_may_use(&Method::GET, "/api/v1/proposals"));
        assert!(!widget_may_use(&Method::POST, "/api/v1/proposals"));
        assert!(!widget_may_use(
            &Method::POST,
            "/api/v1/proposals/prp_1/approve"
        ));
        assert!(!widget_may_use(
            &Method::GET,
            "/api/v1/proposals/prp_1/events"
        ));
        assert!(!widget_may_use(&Method::GET, "/api/v1/audit/events.csv"));
        assert!(!widget_may_use(&Method::GET, "/chat"));
        assert!(!widget_may_use(&Method::POST, "/fn/send_message"));
    }
}
