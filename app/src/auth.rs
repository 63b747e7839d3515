//! Signing in and out, and who is signed in.

use crate::error::AppError;
use domain::UserSummary;
use leptos::prelude::*;
use leptos::server_fn;

/// Only local paths may be redirected to after sign-in (no open redirects).
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.starts_with("/\\")
                && !path.starts_with("/login")
                // Browsers drop tabs and newlines from URLs ("/\t/x" means
                // "//x"), and a newline cannot go into a Location header.
                && !path.chars().any(char::is_control) =>
        {
            path.to_owned()
        }
        _ => "/".to_owned(),
    }
}

#[server(prefix = "/fn", endpoint = "login")]
pub async fn login(
    csrf_token: String,
    username: String,
    password: String,
    next: Option<String>,
) -> Result<(), AppError> {
    use crate::server::{self, keys};
    use engine::accounts::LoginError;

    server::check_csrf(&csrf_token)?;
    let ctx = server::context()?;
    let now = ctx.engine.now();
    let user = ctx
        .engine
        .accounts
        .login(&username, &password, &server::client_address())
        .await
        .map_err(|e| match e {
            LoginError::InvalidCredentials => server::fail(AppError::Invalid(e.to_string())),
            LoginError::Disabled => server::fail(AppError::Forbidden(e.to_string())),
            LoginError::AccountThrottled { .. }
            | LoginError::AddressThrottled { .. }
            | LoginError::AccountSlowed { .. } => server::fail(AppError::Throttled(e.to_string())),
            LoginError::Storage(inner) => server::internal(&inner),
        })?;
    let session = server::session().await?;
    // A new session id at sign-in defeats session fixation.
    session.cycle_id().await.map_err(|e| server::internal(&e))?;
    session
        .insert(keys::USER_ID, &user.id)
        .await
        .map_err(|e| server::internal(&e))?;
    session
        .insert(keys::EPOCH, user.session_epoch)
        .await
        .map_err(|e| server::internal(&e))?;
    session
        .insert(keys::SIGNED_IN_AT, now.timestamp())
        .await
        .map_err(|e| server::internal(&e))?;
    session
        .insert(keys::CSRF, server::random_token())
        .await
        .map_err(|e| server::internal(&e))?;
    tracing::info!(user.id = %user.id, user.name = %user.name, "signed in");
    // A visitor who chatted before signing in: their conversations become
    // this customer's, and a turn waiting for the sign-in goes on.
    if let Some(guest_id) = session
        .get::<String>(keys::GUEST_ID)
        .await
        .map_err(|e| server::internal(&e))?
    {
        let actor = engine::Actor::from(user.clone());
        // The sign-in itself succeeded; a binding that failed leaves the
        // visitor's conversation as it was (its wait ends unanswered) and is
        // tried again at the next sign-in from this browser.
        match ctx.engine.chat.visitor_signed_in(&guest_id, &actor).await {
            Ok(_) if actor.roles.contains(domain::Role::Customer) => {
                session
                    .remove::<String>(keys::GUEST_ID)
                    .await
                    .map_err(|e| server::internal(&e))?;
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(%error, user.id = %user.id, "the visitor's conversations could not be bound at sign-in");
            }
        }
    }
    leptos_axum::redirect(&safe_next(next.as_deref()));
    Ok(())
}

#[server(prefix = "/fn", endpoint = "logout")]
pub async fn logout(csrf_token: String) -> Result<(), AppError> {
    use crate::server;
    server::check_csrf(&csrf_token)?;
    let session = server::session().await?;
    session.flush().await.map_err(|e| server::internal(&e))?;
    leptos_axum::redirect("/login");
    Ok(())
}

/// The signed-in user, or None.
#[server(prefix = "/fn", endpoint = "whoami", input = server_fn::codec::GetUrl)]
pub async fn whoami() -> Result<Option<UserSummary>, AppError> {
    Ok(crate::server::identity().map(|identity| identity.summary()))
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn only_local_paths_are_redirected_to_after_sign_in() {
        assert_eq!(safe_next(Some("/queue?tab=mine")), "/queue?tab=mine");
        for unsafe_next in [
            None,
            Some(""),
            Some("https://evil.example"),
            Some("//evil.example"),
            Some("/\\evil.example"),
            Some("/\t/evil.example"),
            Some("/\n/evil.example"),
            Some("/login?next=/"),
        ] {
            assert_eq!(safe_next(unsafe_next), "/", "{unsafe_next:?}");
        }
    }
}
