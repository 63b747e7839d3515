//! `/chat`: the customer talks to the coordinator and the refund specialist.
//! Every agent message names its agent and shows the sources it rests on;
//! proposals appear as cards whose status follows the proposal live. Stop
//! ends the turn in flight. The conversation survives a reload (the latest
//! one is resumed; `?conversation=ID` opens a given one, which is how staff
//! read a customer's conversation). A customer without one gets an empty
//! chat: their first message opens the conversation (by POST; loading the
//! page changes nothing).
//!
//! All conversation text is hostile input: it is only ever rendered as text
//! nodes, never as HTML.

use crate::chat::{
    ChatMessage, ChatProposal, ChatView, EvidenceChip, MAX_MESSAGE_CHARS, MessageKind, MyChat,
    NewConversation, SendMessage, StopTurn, check_message, conversation_view, my_conversation,
};
use crate::components::handover_bar::HandoverBar;
use crate::components::proposal_card::StatusBadge;
use crate::csrf::{CsrfField, csrf_token};
use crate::format::short_digest;
use crate::live::use_proposal_changes;
use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_router::hooks::{use_navigate, use_query_map};

#[component]
pub fn ChatPage() -> impl IntoView {
    let query = use_query_map();
    let requested = move || {
        query
            .read()
            .get("conversation")
            .map(|id| id.trim().to_owned())
            .filter(|id| !id.is_empty())
    };
    let fresh = ServerAction::<NewConversation>::new();
    // One live connection for the page, whether or not a conversation is
    // open yet: proposal cards follow their status through it.
    let changes = use_proposal_changes();
    // Opens the conversation once per URL (or new conversation); the
    // transcript below refreshes on its own.
    let opened = Resource::new(
        move || (requested(), fresh.version().get()),
        |(requested, _)| async move {
            match requested {
                Some(id) => conversation_view(id).await.map(MyChat::Resumed),
                None => my_conversation().await,
            }
        },
    );
    let navigate = use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(view)) = fresh.value().get() {
            navigate(
                &format!("/chat?conversation={}", view.id),
                Default::default(),
            );
        }
    });
    view! {
        <section class="wide chat-page">
            <header class="row chat-head">
                <h1>"Chat"</h1>
                <ActionForm action=fresh attr:class="inline">
                    <CsrfField/>
                    <button type="submit" class="secondary" data-testid="chat-new">"New conversation"</button>
                </ActionForm>
            </header>
            {move || fresh.value().get().and_then(Result::err).map(|error| view! {
                <p class="error" role="alert">{error.to_string()}</p>
            })}
            <Suspense fallback=|| view! { <p class="muted" role="status">"Loading your conversation…"</p> }>
                {move || Suspend::new(async move {
                    match opened.await {
                        Ok(MyChat::Resumed(initial)) => view! { <Conversation initial first_message=None changes/> }.into_any(),
                        Ok(MyChat::NotStarted) => view! { <FirstMessage changes/> }.into_any(),
                        Ok(MyChat::NotACustomer) => view! {
                            <p class="card muted" data-testid="chat-staff-note">
                                "Chat is for customers; open a customer's conversation from a proposal."
                            </p>
                        }.into_any(),
                        Err(error) => view! {
                            <p class="card error" role="alert" data-testid="chat-error">{error.to_string()}</p>
                        }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// The chat before the customer's first conversation: the same form, and
/// sending opens the conversation (a POST) and then sends the message in it,
/// so Stop can reach the first reply too.
#[component]
fn FirstMessage(changes: ReadSignal<u64>) -> impl IntoView {
    let open = ServerAction::<NewConversation>::new();
    let text = RwSignal::new(String::new());
    let first = RwSignal::new(None::<String>);
    let refused = RwSignal::new(None::<String>);
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let message = text.get_untracked();
        if open.pending().get_untracked() {
            return;
        }
        // A message that would be refused opens no conversation.
        if let Err(error) = check_message(&message) {
            refused.set(Some(error.to_string()));
            return;
        }
        refused.set(None);
        first.set(Some(message));
        open.dispatch(NewConversation {
            csrf_token: csrf_token(),
        });
    };
    view! {
        {move || match open.value().get() {
            Some(Ok(initial)) => {
                view! { <Conversation initial first_message=first.get_untracked() changes/> }.into_any()
            }
            failed => view! {
                <div class="chat">
                    <EmptyChat/>
                    // Only "opening": the reply is being worked on once the
                    // message is sent, which the conversation below shows.
                    <Show when=move || open.pending().get()>
                        <p class="muted small" role="status">"Opening your conversation…"</p>
                    </Show>
                    <form class="chat-form" data-testid="chat-form" on:submit=on_submit>
                        <label for="chat-text" class="sr-only">"Your message"</label>
                        <input id="chat-text" name="text" type="text" required autocomplete="off"
                            maxlength=MAX_MESSAGE_CHARS.to_string()
                            placeholder="Ask about an order or a policy, e.g. “check order 4821 and refund it if it qualifies”"
                            data-testid="chat-input"
                            prop:value=text on:input=move |ev| text.set(event_target_value(&ev))/>
                        <button type="submit" data-testid="chat-send" disabled=move || open.pending().get()>"Send"</button>
                        <button type="button" class="secondary" data-testid="chat-stop" disabled=true
                            title="Stop the reply being written">
                            "Stop"
                        </button>
                    </form>
                    {refused.get().or_else(|| failed.and_then(Result::err).map(|e| e.to_string())).map(|error| view! {
                        <p class="error" role="alert" data-testid="chat-send-error">{error}</p>
                    })}
                </div>
            }.into_any(),
        }}
    }
}

#[component]
fn Conversation(
    initial: ChatView,
    first_message: Option<String>,
    changes: ReadSignal<u64>,
) -> impl IntoView {
    let id = initial.id.clone();
    let can_write = initial.can_write;
    let model = initial.model.clone();
    let send = ServerAction::<SendMessage>::new();
    let stop = ServerAction::<StopTurn>::new();
    // Opened by the first message (see `FirstMessage`): send it now.
    let first = StoredValue::new(first_message);
    let first_id = id.clone();
    Effect::new(move |_| {
        let mut taken = None;
        first.update_value(|pending| taken = pending.take());
        if let Some(text) = taken {
            send.dispatch(SendMessage {
                csrf_token: csrf_token(),
                id: first_id.clone(),
                text,
            });
        }
    });
    // What the page shows: the server-rendered view, then each view a turn
    // returns, then refreshes when a proposal changes (its status lives on
    // the cards). Only the browser refreshes, so hydration sees the same
    // data the server rendered.
    let current = RwSignal::new(initial);
    let refresh_error = RwSignal::new(None::<String>);
    let text = RwSignal::new(String::new());
    Effect::new(move |_| {
        if let Some(Ok(view)) = send.value().get() {
            current.set(view);
            text.set(String::new());
        }
    });
    // A turn running without this page waiting on it (started before a
    // reload, or in another tab) is followed until it ends.
    let poll = RwSignal::new(0u32);
    let running_elsewhere = move || current.with(|v| v.running) && !send.pending().get();
    Effect::new(move |_| {
        if running_elsewhere() {
            set_timeout(
                move || poll.update(|n| *n += 1),
                std::time::Duration::from_millis(1000),
            );
        }
    });
    let refresh_id = id.clone();
    Effect::new(move |first_run: Option<()>| {
        changes.track();
        stop.version().track();
        poll.track();
        if first_run.is_none() {
            return;
        }
        let id = refresh_id.clone();
        let sent = send.version().get_untracked();
        leptos::task::spawn_local(async move {
            let fetched = conversation_view(id).await;
            // A turn that ended meanwhile brought a newer view already.
            if send.pending().get_untracked() || send.version().get_untracked() != sent {
                return;
            }
            match fetched {
                Ok(view) => {
                    refresh_error.set(None);
                    current.set(view);
                }
                Err(error) => refresh_error.set(Some(error.to_string())),
            }
        });
    });
    let pending = move || send.pending().get();
    // Stop works on whatever turn is running, this page's or not.
    let busy = move || pending() || current.with(|v| v.running);
    // The message being answered: sent from this page, or (after a reload,
    // or from another tab) the one the running turn holds.
    let pending_text = move || {
        send.input()
            .get()
            .map(|input| input.text)
            .or_else(|| current.with(|v| v.message_being_answered.clone().filter(|_| v.running)))
    };
    let send_error = move || {
        if pending() {
            return None;
        }
        send.value().get().and_then(Result::err).map(|error| {
            view! { <p class="error" role="alert" data-testid="chat-send-error">{error.to_string()}</p> }
        })
    };
    let stop_error = move || {
        stop.value().get().and_then(Result::err).map(|error| {
            view! { <p class="error" role="alert" data-testid="chat-stop-error">{error.to_string()}</p> }
        })
    };
    let stop_id = id.clone();
    let on_stop = move |_| {
        stop.dispatch(StopTurn {
            csrf_token: csrf_token(),
            id: stop_id.clone(),
        });
    };
    view! {
        <div class="chat" data-conversation=id.clone()>
            <p class="muted small">
                "Conversation " <span class="mono">{id.clone()}</span>
                " · answered by " {model}
            </p>
            {move || view! { <Transcript view=current.get()/> }}
            {move || refresh_error.get().map(|error| view! {
                <p class="error" role="alert" data-testid="chat-refresh-error">
                    "Could not refresh the conversation: " {error}
                </p>
            })}
            <Show when=move || pending_text().is_some()>
                <ol class="transcript pending" aria-live="polite">
                    <li class="msg customer sending">
                        <span class="speaker">"You"</span>
                        <p class="text">{pending_text}</p>
                    </li>
                    <li class="msg note" role="status" data-testid="chat-thinking">"The assistant is working on a reply…"</li>
                </ol>
            </Show>
            {
                let bar_id = id.clone();
                move || view! {
                    <HandoverBar id=bar_id.clone() handover=current.with(|v| v.handover.clone()) can_write/>
                }
            }
            {if can_write {
                let form_id = id.clone();
                view! {
                    <ActionForm action=send attr:class="chat-form" attr:data-testid="chat-form">
                        <CsrfField/>
                        <input type="hidden" name="id" value=form_id/>
                        <label for="chat-text" class="sr-only">"Your message"</label>
                        <input id="chat-text" name="text" type="text" required autocomplete="off"
                            maxlength=MAX_MESSAGE_CHARS.to_string()
                            placeholder="Ask about an order or a policy, e.g. “check order 4821 and refund it if it qualifies”"
                            data-testid="chat-input"
                            prop:value=text on:input=move |ev| text.set(event_target_value(&ev))/>
                        <button type="submit" data-testid="chat-send" disabled=busy>"Send"</button>
                        <button type="button" class="secondary" data-testid="chat-stop"
                            disabled=move || !busy() on:click=on_stop
                            title="Stop the reply being written">
                            "Stop"
                        </button>
                    </ActionForm>
                    {send_error}
                    {stop_error}
                }.into_any()
            } else {
                view! {
                    <p class="muted small" data-testid="chat-read-only">
                        "You are reading this conversation; only the customer who opened it can write to it."
                    </p>
                }.into_any()
            }}
        </div>
    }
}

#[component]
fn Transcript(view: ChatView) -> impl IntoView {
    let attached: Vec<String> = view
        .messages
        .iter()
        .flat_map(|m| m.proposal_ids.iter().cloned())
        .collect();
    let unattached: Vec<ChatProposal> = view
        .proposals
        .iter()
        .filter(|p| !attached.contains(&p.id))
        .cloned()
        .collect();
    let proposals = view.proposals.clone();
    let running = view.running;
    let next_agent = view.active_agent.clone();
    let empty = view.messages.is_empty();
    view! {
        {if empty {
            view! { <EmptyChat/> }.into_any()
        } else {
            view! {
                <ol class="transcript" data-testid="transcript" aria-label="Conversation" aria-live="polite">
                    {view.messages.into_iter().map(|message| {
                        let cards: Vec<ChatProposal> = message
                            .proposal_ids
                            .iter()
                            .filter_map(|id| proposals.iter().find(|p| &p.id == id).cloned())
                            .collect();
                        view! { <Line message cards/> }
                    }).collect_view()}
                </ol>
            }.into_any()
        }}
        {(!unattached.is_empty()).then(|| view! {
            <section class="chat-proposals">
                <h2 class="small">"Proposals from this conversation"</h2>
                {unattached.into_iter().map(|proposal| view! { <ProposalMini proposal/> }).collect_view()}
            </section>
        })}
        <p class="muted small" data-testid="chat-next-agent">
            {if running {
                "A reply is being written…".to_owned()
            } else {
                format!("{next_agent} will read your next message.")
            }}
        </p>
    }
}

#[component]
fn EmptyChat() -> impl IntoView {
    view! {
        <div class="card muted chat-empty" data-testid="chat-empty">
            <p>"No messages yet. Ask about one of your orders or about our policies."</p>
            <p class="small">"For example: “check order 4821 and refund it if it qualifies” or “what is your returns policy for unopened items?”"</p>
        </div>
    }
}

#[component]
fn Line(message: ChatMessage, cards: Vec<ChatProposal>) -> impl IntoView {
    let class = match message.kind {
        MessageKind::Customer => "msg customer",
        MessageKind::Agent => "msg agent",
        MessageKind::Note => "msg note",
        MessageKind::Person => "msg person",
    };
    let is_note = message.kind == MessageKind::Note;
    view! {
        <li class=class id=format!("m-{}", message.index) data-agent=message.agent.clone()>
            {(!is_note).then(|| view! { <span class="speaker">{message.speaker.clone()}</span> })}
            <p class="text">{message.text.clone()}</p>
            {(!message.evidence.is_empty()).then(|| view! {
                <ul class="chips" aria-label="Sources">
                    {message.evidence.into_iter().map(|chip| view! { <Chip chip/> }).collect_view()}
                </ul>
            })}
            {cards.into_iter().map(|proposal| view! { <ProposalMini proposal/> }).collect_view()}
        </li>
    }
}

#[component]
fn Chip(chip: EvidenceChip) -> impl IntoView {
    let label = match &chip.section {
        Some(section) => format!("{} — {section}", chip.title),
        None => chip.title.clone(),
    };
    // Opens (by click, touch or keyboard) to the passage relied on.
    view! {
        <li class="chip" data-reference=chip.reference.clone()>
            <details>
                <summary>{label} " " <span class="mono muted">{format!("[{}]", chip.reference)}</span></summary>
                {chip.quote.clone().map(|quote| view! { <blockquote>{quote}</blockquote> })}
                <span class="muted small">{format!("{} · version {}", chip.title, short_digest(&chip.version))}</span>
            </details>
        </li>
    }
}

#[component]
fn ProposalMini(proposal: ChatProposal) -> impl IntoView {
    let href = format!("/proposals/{}", proposal.id);
    view! {
        <article class="chat-proposal" data-chat-proposal=proposal.id.clone()>
            <div class="row">
                <strong>{format!("Refund {} for order {}", proposal.amount.display(), proposal.order_id)}</strong>
                <StatusBadge state=proposal.state.clone()/>
            </div>
            <p class="muted small">
                "Proposal " <a class="mono" href=href>{proposal.id.clone()}</a>
                " · a member of staff approves it before anything is refunded"
            </p>
        </article>
    }
}
