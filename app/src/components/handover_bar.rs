//! Under a conversation: whether a person from the team is awaited or is
//! writing in it, and, for the customer while the assistant answers, a
//! button to ask for a person.

use crate::csrf::csrf_token;
use crate::handover::{ChatHandover, RequestPerson};
use leptos::prelude::*;

#[component]
pub fn HandoverBar(id: String, handover: ChatHandover, can_write: bool) -> impl IntoView {
    let request = ServerAction::<RequestPerson>::new();
    let on_request = move |_| {
        request.dispatch(RequestPerson {
            csrf_token: csrf_token(),
            id: id.clone(),
        });
    };
    let refused = move || {
        request.value().get().and_then(Result::err).map(|error| {
            view! { <p class="error" role="alert" data-testid="chat-request-person-error">{error.to_string()}</p> }
        })
    };
    match handover {
        ChatHandover::Agents if can_write => view! {
            <p class="small">
                <button type="button" class="link" data-testid="chat-request-person"
                    disabled=move || request.pending().get() on:click=on_request>
                    "Talk to a person"
                </button>
            </p>
            {refused}
        }
        .into_any(),
        ChatHandover::Agents => ().into_any(),
        ChatHandover::Waiting => view! {
            <p class="notice small" role="status" data-testid="chat-handover">
                "A member of our team has been asked to join; they will reply here. The assistant is paused until then."
            </p>
        }
        .into_any(),
        ChatHandover::WithPerson { name } => view! {
            <p class="notice small" role="status" data-testid="chat-handover">
                {format!("{name} from our team is in this conversation; the assistant is paused.")}
            </p>
        }
        .into_any(),
    }
}
