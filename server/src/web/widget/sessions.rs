//! `POST /widget/sessions`: a host site's signed customer token in, a widget
//! session out.

use crate::startup::AppState;
use crate::web::api::extract::ApiJson;
use crate::web::api::openapi::ErrorBody;
use crate::web::api_error::ApiError;
use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use engine::widget::WidgetTokenError;
use http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenBody {
    pub site_id: String,
    /// The host's token: a JWT signed with EdDSA.
    pub token: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OpenedView {
    /// Send as `Authorization: Bearer …` to the chat API.
    pub session_token: String,
    pub expires_at: DateTime<Utc>,
    pub customer: CustomerView,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CustomerView {
    pub id: String,
    pub display_name: String,
}

/// Exchange a host site's signed customer token (EdDSA JWT, used once) for a
/// widget session, sent as a bearer token to the chat API.
#[utoipa::path(post, path = "/widget/sessions", tag = "widget", security(()), request_body = OpenBody,
    responses((status = 201, body = OpenedView),
        (status = 401, description = "The token is invalid, expired, used before, or for an unknown site (`invalid_token`, `token_expired`, `token_used`, `unknown_site`)", body = ErrorBody),
        (status = 503, description = "The database is briefly unavailable; send a fresh token after `Retry-After` seconds", body = ErrorBody)))]
pub async fn open(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<OpenBody>,
) -> Result<(StatusCode, Json<OpenedView>), ApiError> {
    let opened = state
        .engine
        .widget
        .open_session(&body.site_id, &body.token)
        .await
        .map_err(token_error)?;
    tracing::info!(site.id = %opened.site_id, customer.id = %opened.customer.id, "widget session opened");
    Ok((
        StatusCode::CREATED,
        Json(OpenedView {
            session_token: opened.secret,
            expires_at: opened.expires_at,
            customer: CustomerView {
                id: opened.customer.id,
                display_name: opened.customer.display_name,
            },
        }),
    ))
}

fn token_error(error: WidgetTokenError) -> ApiError {
    match error {
        WidgetTokenError::Storage(storage::StorageError::Unavailable(reason)) => {
            tracing::error!(%reason, "widget session: database unavailable");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "the chat is unavailable right now; try again shortly",
            )
        }
        WidgetTokenError::Storage(error) => ApiError::internal(&error),
        refused => {
            let code = match refused {
                WidgetTokenError::Expired => "token_expired",
                WidgetTokenError::Replayed => "token_used",
                WidgetTokenError::UnknownSite => "unknown_site",
                _ => "invalid_token",
            };
            tracing::info!(reason = %refused, "widget token refused");
            ApiError::new(StatusCode::UNAUTHORIZED, code, refused.to_string())
        }
    }
}
