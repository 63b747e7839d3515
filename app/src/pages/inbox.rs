//! `/inbox`: conversations whose customer asked for a person, or that a
//! member of staff took over, waiting longest first. Staff take one over,
//! reply to the customer under their own name, and hand it back; the list
//! follows changes live. Admins choose which roles see it.
//!
//! Conversation text is hostile input: rendered only as text nodes.

use crate::csrf::{CsrfField, csrf_token};
use crate::format::utc;
use crate::handover::{
    HandBack, InboxItem, InboxView, PersonReply, SetInboxRoles, TakeOver, staff_inbox,
};
use crate::live::use_proposal_changes;
use crate::pages::admin::outcome;
use domain::Role;
use leptos::form::ActionForm;
use leptos::prelude::*;

#[component]
pub fn InboxPage() -> impl IntoView {
    let changes = use_proposal_changes();
    let take = ServerAction::<TakeOver>::new();
    let reply = ServerAction::<PersonReply>::new();
    let back = ServerAction::<HandBack>::new();
    let roles = ServerAction::<SetInboxRoles>::new();
    // Refetched on every live change (a customer asked, wrote, or someone
    // joined or left) and after this page's own actions.
    let inbox = Resource::new(
        move || {
            (
                changes.get(),
                take.version().get(),
                reply.version().get(),
                back.version().get(),
                roles.version().get(),
            )
        },
        |_| staff_inbox(),
    );
    let failure = move || {
        [
            take.value().get().and_then(Result::err),
            reply.value().get().and_then(Result::err),
            back.value().get().and_then(Result::err),
        ]
        .into_iter()
        .flatten()
        .next()
        .map(|error| view! { <p class="error" role="alert" data-testid="inbox-error">{error.to_string()}</p> })
    };
    let actions = Actions { take, reply, back };
    view! {
        <section class="wide">
            <h1>"Inbox"</h1>
            <p class="muted">"Conversations whose customer asked for a person. Take one over to reply; the assistant stays silent until you hand it back."</p>
            {failure}
            <Transition fallback=|| view! { <p class="muted" role="status">"Loading the inbox…"</p> }>
                {move || Suspend::new(async move {
                    match inbox.await {
                        Ok(view) => view! { <Inbox view actions roles/> }.into_any(),
                        Err(error) => view! {
                            <p class="card error" role="alert" data-testid="inbox-refused">{error.to_string()}</p>
                        }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[derive(Clone, Copy)]
struct Actions {
    take: ServerAction<TakeOver>,
    reply: ServerAction<PersonReply>,
    back: ServerAction<HandBack>,
}

#[component]
fn Inbox(view: InboxView, actions: Actions, roles: ServerAction<SetInboxRoles>) -> impl IntoView {
    let empty = view.items.is_empty();
    let current = view.roles.clone();
    view! {
        {if empty {
            view! { <p class="card muted" data-testid="inbox-empty">"Nobody is waiting for a person."</p> }.into_any()
        } else {
            view! {
                <ol class="inbox" data-testid="inbox">
                    {view.items.into_iter().map(|item| view! { <Entry item actions/> }).collect_view()}
                </ol>
            }.into_any()
        }}
        {view.can_set_roles.then(|| {
            let ticked = move |role: Role| current.contains(&role);
            view! {
                <section class="card">
                    <h2>"Who sees the inbox"</h2>
                    <ActionForm action=roles attr:data-testid="inbox-roles">
                        <CsrfField/>
                        {[(Role::Approver, "approver"), (Role::Manager, "manager"), (Role::Admin, "admin")]
                            .into_iter()
                            .map(|(role, name)| view! {
                                <label class="inline">
                                    <input type="checkbox" name=name checked=ticked(role)/>
                                    " " {name}
                                </label>
                            })
                            .collect_view()}
                        <button type="submit">"Save"</button>
                    </ActionForm>
                    {outcome(roles)}
                </section>
            }
        })}
    }
}

#[component]
fn Entry(item: InboxItem, actions: Actions) -> impl IntoView {
    let id = item.conversation_id.clone();
    let status = match (&item.person_name, item.held_by_me) {
        (Some(_), true) => "You have taken this conversation over".to_owned(),
        (Some(name), false) => format!("Taken over by {name}"),
        (None, _) => "Waiting for a person".to_owned(),
    };
    let held_elsewhere = item.person_name.is_some() && !item.held_by_me;
    let take_id = id.clone();
    let on_take = move |_| {
        actions.take.dispatch(TakeOver {
            csrf_token: csrf_token(),
            id: take_id.clone(),
        });
    };
    let back_id = id.clone();
    let on_back = move |_| {
        actions.back.dispatch(HandBack {
            csrf_token: csrf_token(),
            id: back_id.clone(),
        });
    };
    let href = format!("/chat?conversation={id}");
    let entry_id = id.clone();
    view! {
        <li class="card inbox-entry" data-testid="inbox-entry" data-conversation=entry_id>
            <div class="row">
                <strong>{item.customer_name.clone()}</strong>
                <span class="muted small">{format!("waiting since {}", utc(item.waiting_since))}</span>
            </div>
            <p class="small" data-testid="inbox-status">{status}</p>
            {item.last_customer_message.clone().map(|text| view! {
                <blockquote data-testid="inbox-last-message">{text}</blockquote>
            })}
            <p class="small">
                <a href=href>"Read the conversation"</a>
            </p>
            {if item.held_by_me {
                let form_id = id.clone();
                let input_id = format!("reply-{id}");
                view! {
                    <ActionForm action=actions.reply attr:class="chat-form" attr:data-testid="inbox-reply">
                        <CsrfField/>
                        <input type="hidden" name="id" value=form_id/>
                        <label for=input_id.clone() class="sr-only">"Your reply"</label>
                        <input id=input_id name="text" type="text" required autocomplete="off"
                            placeholder="Write to the customer" data-testid="inbox-reply-text"/>
                        <button type="submit" data-testid="inbox-reply-send">"Send"</button>
                    </ActionForm>
                    <button type="button" class="secondary" data-testid="inbox-hand-back" on:click=on_back>
                        "Hand back to the assistant"
                    </button>
                }.into_any()
            } else {
                view! {
                    <button type="button" data-testid="inbox-take-over" disabled=held_elsewhere on:click=on_take>
                        "Take over"
                    </button>
                }.into_any()
            }}
        </li>
    }
}
