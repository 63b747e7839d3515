//! Server-sent events: every committed proposal change, so queues, detail
//! pages and chat cards update without reloading. Staff see every change; a
//! customer only the changes of refunds to them.

use crate::startup::AppState;
use crate::web::api::Caller;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use domain::Role;
use engine::live::LiveEvent;
use futures::Stream;
use std::convert::Infallible;
use tokio::sync::broadcast::error::RecvError;

pub async fn proposal_events(
    State(state): State<AppState>,
    Caller(identity): Caller,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut changes = state.engine.live.subscribe();
    let staff = identity
        .roles
        .any_of(&[Role::Approver, Role::Manager, Role::Admin]);
    let user_id = identity.user_id;
    let stream = async_stream::stream! {
        loop {
            match changes.recv().await {
                // Changes may have been missed: every page reloads, whoever watches it.
                Ok(LiveEvent::Resync) => yield Ok(Event::default().event("resync").data("{}")),
                Ok(LiveEvent::Changed(change)) => {
                    if (staff || change.customer_id.as_deref() == Some(user_id.as_str()))
                        && let Ok(event) = Event::default().event("proposal").json_data(&change) {
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
