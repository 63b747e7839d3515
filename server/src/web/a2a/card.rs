//! The agent card: who this group is, where it is reached, the extension its
//! tasks travel in, and its skills (the task kinds it accepts, each with its
//! input and result schemas).

use super::{A2aState, EXTENSION, VERSION};
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

pub(super) async fn agent_card(State(state): State<A2aState>) -> Json<Value> {
    let skills: Vec<Value> = state
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
    Json(json!({
        "name": format!("Countersign {}", state.group),
        "description": format!(
            "The {} agent group of a Countersign deployment. It accepts signed, structured \
             tasks from the groups its admin allowed.",
            state.group
        ),
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [{
            "url": format!("{}/a2a", state.public_url.trim_end_matches('/')),
            "protocolBinding": "JSONRPC",
            "protocolVersion": VERSION,
        }],
        "capabilities": {
            "streaming": false,
            "pushNotifications": false,
            "extensions": [{
                "uri": EXTENSION,
                "description": "Tasks travel as Countersign task envelopes: JWS (EdDSA) over the \
                                RFC 8785 form, route, depth and budget signed, parents embedded.",
                "required": true,
            }],
        },
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": skills,
    }))
}
