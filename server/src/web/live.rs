//! Server-sent events: every committed proposal change, so queues, detail
//! pages and chat cards update without reloading. Staff see every change; a
//! customer only the changes of refunds to them; a widget session only those
//! of proposals prepared in the conversations it opened.

use crate::startup::AppState;
use crate::web::api::Caller;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use domain::Role;
use engine::live::LiveEvent;
use futures::Stream;
use std::collections::HashMap;
use std::convert::Infallible;
use tokio::sync::broadcast::error::RecvError;

/// Server-sent events, for as long as the connection stays open: `proposal`
/// (a JSON change of one proposal), `conversation` (`{"conversation_id"}`:
/// a person was asked for, joined, wrote or left) and `resync` (changes may
/// have been missed: reload what is shown).
#[utoipa::path(get, path = "/api/live/proposals", tag = "live",
    responses((status = 200, description = "`event: proposal` with a JSON change, `event: conversation` with `{\"conversation_id\"}`, `event: resync` with `{}`", content_type = "text/event-stream", body = String)))]
pub async fn proposal_events(
    State(state): State<AppState>,
    Caller(identity): Caller,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut changes = state.engine.live.subscribe();
    let staff = identity
        .roles
        .any_of(&[Role::Approver, Role::Manager, Role::Admin]);
    let actor = identity.actor();
    let engine = state.engine.clone();
    // A widget session's answer per proposal never changes (a proposal's
    // conversation is fixed), so each proposal is looked up once.
    let mut widget_answers: HashMap<String, bool> = HashMap::new();
    let stream = async_stream::stream! {
        loop {
            match changes.recv().await {
                // Changes may have been missed: every page reloads, whoever watches it.
                Ok(LiveEvent::Resync) => yield Ok(Event::default().event("resync").data("{}")),
                Ok(LiveEvent::Changed(change)) => {
                    let mut visible =
                        staff || change.customer_id.as_deref() == Some(actor.user_id.as_str());
                    if visible && actor.widget_session.is_some() {
                        visible = match widget_answers.get(&change.proposal_id) {
                            Some(known) => *known,
                            None => match engine.proposals.may_watch(&actor, &change.proposal_id).await {
                                Ok(answer) => {
                                    widget_answers.insert(change.proposal_id.clone(), answer);
                                    answer
                                }
                                // Not sure: say nothing now; the frame reads the
                                // proposal itself when it next asks.
                                Err(error) => {
                                    tracing::warn!(%error, "live: could not check a widget session's proposal");
                                    false
                                }
                            },
                        };
                    }
                    if visible && let Ok(event) = Event::default().event("proposal").json_data(&change) {
                        yield Ok(event);
                    }
                }
                // A conversation changed outside an agent turn (a person joined,
                // wrote or left): those who may read it reload it. Only its id
                // travels to the browser.
                Ok(LiveEvent::Conversation(change)) => {
                    let lane = match &actor.widget_session {
                        Some(session) => change.widget_session_id.as_deref() == Some(session.as_str()),
                        None => true,
                    };
                    let reader = staff
                        || change.owner_id == actor.user_id
                        || change.customer_id == actor.user_id;
                    if lane && reader
                        && let Ok(event) = Event::default()
                            .event("conversation")
                            .json_data(serde_json::json!({ "conversation_id": change.conversation_id }))
                    {
                        yield Ok(event);
                    }
                }
                // Fell behind: tell the page to reload everything it shows.
                Err(RecvError::Lagged(_)) => yield Ok(Event::default().event("resync").data("{}")),
                Err(RecvError::Closed) => break,
            }
        }
    };
    Sse::new(stream).keep_alive(KeepAlive::default())
}
