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
    // The stream owns the shared state (one reference count), not a copy of
    // the engine's services per connection.
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
                            None => match state.engine.proposals.may_watch(&actor, &change.proposal_id).await {
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

/// Server-sent events for `/ops`, for managers and admins: `ops` (`{}`:
/// background work finished, an alert was raised or someone acted; read
/// the view again) and `resync` (hints may have been missed). The hints
/// come from every replica (NOTIFY on PostgreSQL); each replica's runner
/// sends at most a few a second however much work ends.
#[utoipa::path(get, path = "/api/live/ops", tag = "live",
    responses((status = 200, description = "`event: ops` with `{}`, `event: resync` with `{}`", content_type = "text/event-stream", body = String),
        (status = 403, description = "Only managers and admins see background work", body = crate::web::api::openapi::ErrorBody)))]
pub async fn ops_events(
    State(state): State<AppState>,
    Caller(identity): Caller,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, crate::web::api_error::ApiError> {
    use app::ops::backend::OpsHint;
    if !identity.roles.any_of(app::access::OPS_ROLES) {
        return Err(crate::web::api_error::ApiError::forbidden(
            "forbidden",
            "only managers and admins see background work",
        ));
    }
    let hints_source = &state.server_context.ops_hints;
    let mut hints = hints_source.announcer().subscribe();
    // The page reads the view again when the stream opens: hints must reach
    // this process by then, or a change between the two would go unheard.
    // A listener that cannot connect delays the stream at most this long
    // (the page still works; it resyncs when the listener comes back).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), hints_source.listening()).await;
    let stream = async_stream::stream! {
        loop {
            match hints.recv().await {
                Ok(OpsHint::Changed) => yield Ok(Event::default().event("ops").data("{}")),
                Ok(OpsHint::Resync) | Err(RecvError::Lagged(_)) => {
                    yield Ok(Event::default().event("resync").data("{}"));
                }
                Err(RecvError::Closed) => break,
            }
        }
    };
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// How long the runner's hints wait after each one: under a backlog every
/// item's end would be a hint, and each only says "read the view again".
const OPS_HINT_SPACING: std::time::Duration = std::time::Duration::from_millis(250);

/// Turns each recorded end of a run in this process's runner into an ops
/// hint: the first at once, then at most one per [`OPS_HINT_SPACING`] while
/// more keep ending (the last end always gets a hint after it). Ends when
/// the runner is gone.
pub async fn hint_ops_on_finished(
    mut finished: tokio::sync::broadcast::Receiver<runner::Finished>,
    hints: app::ops::backend::OpsHints,
) {
    use tokio::sync::broadcast::error::TryRecvError;
    loop {
        if let Err(RecvError::Closed) = finished.recv().await {
            return;
        }
        loop {
            hints.changed();
            tokio::time::sleep(OPS_HINT_SPACING).await;
            let mut more = false;
            loop {
                match finished.try_recv() {
                    Ok(_) | Err(TryRecvError::Lagged(_)) => more = true,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Closed) => return,
                }
            }
            if !more {
                break;
            }
        }
    }
}
