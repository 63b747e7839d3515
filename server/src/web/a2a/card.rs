//! The agent card: who this group is, where it is reached, the extension its
//! tasks travel in with the key versions peers may pin, and its skills (the
//! task kinds it accepts, each with its input and result schemas); signed
//! by each of those key versions (`gateway::card`).

use super::{A2aState, EXTENSION, VERSION};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

/// The group's key versions peers may pin now, for the extension's params.
async fn published_keys(state: &A2aState) -> Result<Value, String> {
    let Some(own_keys) = &state.gateway.own_keys else {
        return Ok(json!([]));
    };
    let published = own_keys.published().await.map_err(|e| e.to_string())?;
    Ok(published
        .into_iter()
        .map(|(key, pinned)| {
            json!({
                "kid": key.to_string(),
                "alg": "EdDSA",
                "publicKey": URL_SAFE_NO_PAD.encode(pinned.public_key),
                "validFrom": pinned.valid_from.to_rfc3339(),
                "usableUntil": pinned.usable_until.map(|u| u.to_rfc3339()),
            })
        })
        .collect())
}

pub(super) async fn agent_card(State(state): State<A2aState>) -> Response {
    let keys = match published_keys(&state).await {
        Ok(keys) => keys,
        Err(error) => {
            // A card without the keys would send peers away believing
            // there are none: say the card is unavailable instead.
            tracing::error!(%error, "the group's keys could not be read for its agent card");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "error": "the agent card is unavailable: this group's keys cannot be read" })),
            )
                .into_response();
        }
    };
    let skills: Vec<Value> = state
        .gateway
        .kinds
        .describe()
        .map(|(kind, description, input, result)| {
            json!({
                "id": kind,
                "name": kind,
                "description": description,
                "tags": ["countersign-task"],
                "inputModes": ["application/json"],
                "outputModes": ["application/json"],
                "metadata": { "inputSchema": input, "resultSchema": result },
            })
        })
        .collect();
    let card = json!({
        "name": format!("Countersign {}", state.gateway.group),
        "description": format!(
            "The {} agent group of a Countersign deployment. It accepts signed, structured \
             tasks from the groups its admin allowed.",
            state.gateway.group
        ),
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [{
            "url": format!("{}/a2a", state.public_url.trim_end_matches('/')),
            "protocolBinding": "JSONRPC",
            "protocolVersion": VERSION,
        }],
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extensions": [{
                "uri": EXTENSION,
                "description": "Tasks travel as Countersign task envelopes: JWS (EdDSA) over the \
                                RFC 8785 form, route, depth and budget signed, parents embedded. \
                                A plain A2A peer an admin issued a secret to may send without it \
                                (a data part, metadata.kind); its tasks are taken unsigned.",
                // Not required: a plain peer an admin allowed talks without it.
                "required": false,
                // For a peer's admin to pin (from /admin, with the CLI, or
                // by hand); nothing here is trusted without that.
                "params": { "keys": keys },
            }],
        },
        // Reading a task (GetTask, ListTasks, CancelTask) needs the sending
        // group's proof: a short-lived JWT signed with its pinned gateway
        // key, or a plain peer's secret.
        "securitySchemes": {
            "countersignPeer": {
                "httpAuthSecurityScheme": {
                    "scheme": "Bearer",
                    "bearerFormat": "JWT",
                    "description": "EdDSA JWT signed with the calling group's gateway key \
                                    (kid group/key_id/vN), aud = this group, at most 300 s long. \
                                    Or a plain A2A peer's secret (cspk_…) issued by this \
                                    group's admin. Required for GetTask, ListTasks, CancelTask \
                                    and a plain peer's SendMessage; a signed SendMessage is \
                                    proven by its envelope.",
                },
            },
        },
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": skills,
    });
    // Signed by every key version it lists (A2A `signatures`): proof that
    // whoever serves the card holds them, and, for a peer that pinned one
    // version, a voucher for the others.
    let Some(own_keys) = &state.gateway.own_keys else {
        return Json(card).into_response();
    };
    match own_keys.sign_card(&card).await {
        Ok(signed) => Json(signed).into_response(),
        Err(error) => {
            tracing::error!(%error, "the group's keys could not sign its agent card");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "error": "the agent card is unavailable: this group's keys cannot sign it" })),
            )
                .into_response()
        }
    }
}
