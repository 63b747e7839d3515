//! `/chat`: the customer talks to the coordinator and the refund specialist.
//! Every agent message names its agent and shows the sources it rests on;
//! proposals appear as cards whose status follows the proposal live. A
//! message sent while a reply is written waits for the next turn ("Send
//! now" stops the reply for it instead) and is shown waiting until a turn
//! takes it. Stop ends the turn in flight and cancels what waits. The conversation survives a reload (the latest
//! one is resumed; `?conversation=ID` opens a given one, which is how staff
//! read a customer's conversation). A customer without one gets an empty
//! chat: their first message opens the conversation (by POST; loading the
//! page changes nothing).
//!
//! All conversation text is hostile input: it is only ever rendered as text
//! nodes, never as HTML.

use crate::chat::{
    ChatMessage, ChatProposal, ChatView, EvidenceChip, MAX_MESSAGE_CHARS, MessageKind, MyChat,
    NewConversation, QueuedLine, SendMessage, StopTurn, check_message, conversation_view,
    my_conversation,
};
use crate::components::handover_bar::HandoverBar;
use crate::components::proposal_card::StatusBadge;
use crate::csrf::{CsrfField, csrf_token};
use crate::customer_words::{customer_status, plain_citations};
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
                Some(id) => conversation_view(id)
                    .await
                    .map(|view| MyChat::Resumed(Box::new(view))),
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
                // Only a customer can start one: staff read customers' chats.
                <Suspense fallback=|| ()>
                    {move || Suspend::new(async move {
                        matches!(opened.await, Ok(MyChat::Resumed(ref view)) if view.can_write)
                            .then(|| view! {
                                <ActionForm action=fresh attr:class="inline">
                                    <CsrfField/>
                                    <button type="submit" class="secondary" data-testid="chat-new">"New conversation"</button>
                                </ActionForm>
                            })
                    })}
                </Suspense>
            </header>
            {move || fresh.value().get().and_then(Result::err).map(|error| view! {
                <p class="error" role="alert">{error.to_string()}</p>
            })}
            <Suspense fallback=|| view! { <p class="muted" role="status">"Loading your conversation…"</p> }>
                {move || Suspend::new(async move {
                    match opened.await {
                        Ok(MyChat::Resumed(initial)) => view! { <Conversation initial=*initial first_message=None changes/> }.into_any(),
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
    let on_send = Callback::new(move |message: String| {
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
    });
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
                    <ChatForm text on_send blocked=Signal::derive(move || open.pending().get())
                        running=Signal::derive(|| false) on_send_now=Callback::new(|_: String| {})
                        on_add_to_turn=Callback::new(|_: String| {})
                        stop_enabled=Signal::derive(|| false) on_stop=Callback::new(|()| {})/>
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
    // Opened by a visitor who has not signed in yet: once they sign in (in
    // another tab), this page is reloaded after the reply, so it speaks
    // for the customer they signed in as (and carries that session's CSRF
    // token).
    let opened_as_visitor = initial.customer_id.is_none();
    let send = ServerAction::<SendMessage>::new();
    // Messages sent while a reply is written: stored at once, answered in
    // a later turn (this page does not wait for that turn).
    let queue_send = ServerAction::<SendMessage>::new();
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
                priority: String::new(),
            });
        }
    });
    // What the page shows: the server-rendered view, then each view a turn
    // returns, then refreshes when a proposal changes (its status lives on
    // the cards). Only the browser refreshes, so hydration sees the same
    // data the server rendered.
    let current = RwSignal::new(initial);
    let refresh_error = RwSignal::new(None::<String>);
    // The field empties when a message is sent, so what is typed while the
    // reply is written is kept; a refused message comes back into an empty
    // field, never over a new draft.
    let text = RwSignal::new(String::new());
    let last_sent = StoredValue::new(String::new());
    Effect::new(move |_| match send.value().get() {
        Some(Ok(view)) => current.set(view),
        Some(Err(_)) if text.get_untracked().is_empty() => text.set(last_sent.get_value()),
        _ => {}
    });
    // While this page waits for its own turn, only the queue is taken from
    // the view a queued message brings (the transcript comes with the turn).
    Effect::new(move |_| match queue_send.value().get() {
        Some(Ok(view)) if send.pending().get_untracked() => {
            current.update(|shown| shown.queue = view.queue);
        }
        Some(Ok(view)) => current.set(view),
        Some(Err(_)) if text.get_untracked().is_empty() => text.set(last_sent.get_value()),
        _ => {}
    });
    let waiting = move || current.with(|v| v.queue.iter().any(|line| !line.cancelled));
    // A turn running without this page waiting on it (started before a
    // reload, in another tab, or for messages that waited) is followed
    // until it ends and nothing waits.
    let poll = RwSignal::new(0u32);
    let running_elsewhere =
        move || (current.with(|v| v.running || v.background) || waiting()) && !send.pending().get();
    // A visitor's own turn may stop to wait for them to sign in: followed
    // too, so the page asks them to (visitors have no live connection).
    let visitor_waiting = move || send.pending().get() && current.with(|v| v.customer_id.is_none());
    Effect::new(move |_| {
        if running_elsewhere() || visitor_waiting() {
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
        queue_send.version().track();
        poll.track();
        if first_run.is_none() {
            return;
        }
        let id = refresh_id.clone();
        let sent = send.version().get_untracked();
        leptos::task::spawn_local(async move {
            let fetched = conversation_view(id).await;
            // This page's own turn: only whether it waits for a sign-in or
            // a carrier's page, and for whom it now speaks, are taken (its
            // transcript comes with the turn).
            if send.pending().get_untracked() {
                if let Ok(view) = fetched {
                    current.update(|shown| {
                        shown.waiting_for_sign_in = view.waiting_for_sign_in;
                        shown.reading_carrier_page = view.reading_carrier_page;
                        shown.customer_id = view.customer_id;
                    });
                }
                return;
            }
            // A turn that ended meanwhile brought a newer view already.
            if send.version().get_untracked() != sent {
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
    Effect::new(move |_| {
        let signed_in = current.with(|v| v.customer_id.is_some());
        if opened_as_visitor && signed_in && !send.pending().get() {
            let _ = window().location().reload();
        }
    });
    let pending = move || send.pending().get();
    // A reply is being written: this page's turn or any other.
    let busy = move || pending() || current.with(|v| v.running);
    // Orders still checked in the background by investigators a newer
    // message left running.
    let background = move || current.with(|v| v.background);
    // Stop works on whatever runs or waits, this page's or not.
    let stoppable = move || busy() || waiting() || background();
    // The message being answered: sent from this page, or (after a reload,
    // or from another tab) the one the running turn holds.
    let pending_text = move || {
        send.input()
            .get()
            .map(|input| input.text)
            .or_else(|| current.with(|v| v.message_being_answered.clone().filter(|_| v.running)))
    };
    let send_error = move || {
        let queued = queue_send.value().get().and_then(Result::err);
        let sent = (!pending())
            .then(|| send.value().get().and_then(Result::err))
            .flatten();
        queued.or(sent).map(|error| {
            view! { <p class="error" role="alert" data-testid="chat-send-error">{error.to_string()}</p> }
        })
    };
    let stop_error = move || {
        stop.value().get().and_then(Result::err).map(|error| {
            view! { <p class="error" role="alert" data-testid="chat-stop-error">{error.to_string()}</p> }
        })
    };
    let stop_id = id.clone();
    let on_stop = Callback::new(move |()| {
        stop.dispatch(StopTurn {
            csrf_token: csrf_token(),
            id: stop_id.clone(),
        });
    });
    let send_id = id.clone();
    let dispatch = move |message: String, priority: &str| {
        last_sent.set_value(message.clone());
        text.set(String::new());
        let message = SendMessage {
            csrf_token: csrf_token(),
            id: send_id.clone(),
            text: message,
            priority: priority.to_owned(),
        };
        if busy() {
            queue_send.dispatch(message);
        } else {
            send.dispatch(message);
        }
    };
    let send_later = dispatch.clone();
    let add_to_turn = dispatch.clone();
    let on_send = Callback::new(move |message: String| send_later(message, "later"));
    let on_add_to_turn = Callback::new(move |message: String| add_to_turn(message, "this_turn"));
    let on_send_now = Callback::new(move |message: String| dispatch(message, "now"));
    // The newest message stays in view: on opening (unless the address
    // names a message), whenever one is added or a reply is awaited, and
    // when the transcript is drawn again while the reader was at its end
    // (a live refresh redraws it, which would leave them above the end).
    let shown = Memo::new(move |_| (current.with(|v| v.messages.len()), pending_text().is_some()));
    let at_end = StoredValue::new(true);
    let scrolled = window_event_listener(leptos::ev::scroll, move |_| {
        at_end.set_value(reader_at_end());
    });
    on_cleanup(move || scrolled.remove());
    Effect::new(move |before: Option<(usize, bool)>| {
        current.track();
        let now = shown.get();
        if before != Some(now) || at_end.get_value() {
            follow_newest(before.is_none());
        }
        now
    });
    view! {
        <div class="chat" data-conversation=id.clone()>
            // Staff reading a customer's chat are told which one and who
            // answers; the customer is not troubled with either.
            {(!can_write).then(|| view! {
                <p class="muted small">
                    "Conversation " <span class="mono">{id.clone()}</span>
                    " · answered by " {model}
                </p>
            })}
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
                    <li class="msg note" role="status" data-testid="chat-thinking">{move || {
                        if current.with(|v| v.reading_carrier_page) {
                            "Checking the carrier's tracking page for your parcel. This can take a minute or two…"
                        } else {
                            "The assistant is working on a reply…"
                        }
                    }}</li>
                </ol>
            </Show>
            <Show when=move || current.with(|v| v.waiting_for_sign_in)>
                <div class="card sign-in-wait" role="status" data-testid="chat-sign-in">
                    <p>"To look at your orders I need you to sign in. I'm waiting here for up to 10 minutes; Stop ends the wait."</p>
                    <p>
                        <a href="/login?next=%2Fchat" target="_blank" rel="noopener" data-testid="chat-sign-in-link">
                            "Sign in (opens a new tab)"
                        </a>
                    </p>
                </div>
            </Show>
            <Show when=background>
                <p class="muted small" role="status" data-testid="chat-background">
                    "Still checking orders in the background; what they find will appear here. Stop ends it."
                </p>
            </Show>
            <p class="muted small" data-testid="chat-next-agent">
                {move || if busy() {
                    "A reply is being written…".to_owned()
                } else {
                    format!("{} will read your next message.", current.with(|v| v.active_agent.clone()))
                }}
            </p>
            {
                let bar_id = id.clone();
                move || view! {
                    <HandoverBar id=bar_id.clone() handover=current.with(|v| v.handover.clone()) can_write/>
                }
            }
            {if can_write {
                view! {
                    <Queued lines=Signal::derive(move || current.with(|v| v.queue.clone()))/>
                    <ChatForm text on_send blocked=Signal::derive(move || queue_send.pending().get())
                        running=Signal::derive(busy) on_send_now on_add_to_turn
                        stop_enabled=Signal::derive(stoppable) on_stop/>
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
    let customer = view.can_write;
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
                        view! { <Line message cards customer/> }
                    }).collect_view()}
                </ol>
            }.into_any()
        }}
        {(!unattached.is_empty()).then(|| view! {
            <section class="chat-proposals">
                <h2 class="small">"Proposals from this conversation"</h2>
                {unattached.into_iter().map(|proposal| view! { <ProposalMini proposal customer/> }).collect_view()}
            </section>
        })}
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
fn Line(message: ChatMessage, cards: Vec<ChatProposal>, customer: bool) -> impl IntoView {
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
            <p class="text">{if message.kind == MessageKind::Agent { plain_citations(&message.text) } else { message.text.clone() }}</p>
            {(!message.evidence.is_empty()).then(|| view! {
                <ul class="chips" aria-label="Sources">
                    {message.evidence.into_iter().map(|chip| view! { <Chip chip/> }).collect_view()}
                </ul>
            })}
            {cards.into_iter().map(|proposal| view! { <ProposalMini proposal customer/> }).collect_view()}
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
                <summary>{label}</summary>
                {chip.quote.clone().map(|quote| view! { <blockquote>{quote}</blockquote> })}
                <span class="muted small">{format!("{} · version {}", chip.title, short_digest(&chip.version))}</span>
            </details>
        </li>
    }
}

/// A refund proposed in the chat. The customer reads where it stands and
/// when the money arrives, with a link to their refund's page; staff get
/// the proposal's page.
#[component]
fn ProposalMini(proposal: ChatProposal, customer: bool) -> impl IntoView {
    let words = customer_status(&proposal.state);
    let href = if customer {
        format!("/refunds/{}", proposal.id)
    } else {
        format!("/proposals/{}", proposal.id)
    };
    view! {
        <article class="chat-proposal" data-chat-proposal=proposal.id.clone()>
            <div class="row">
                <strong>{format!("Refund {} for order {}", proposal.amount.display(), proposal.order_id)}</strong>
                <StatusBadge state=proposal.state.clone()/>
            </div>
            <p class="small" data-testid="chat-proposal-next">
                {words.next} " " <a href=href data-testid="chat-proposal-link">{if customer { "Your refund" } else { "The proposal" }}</a>
            </p>
        </article>
    }
}

/// The messages waiting for the next turn, and those Stop cancelled.
#[component]
fn Queued(lines: Signal<Vec<QueuedLine>>) -> impl IntoView {
    view! {
        <Show when=move || lines.with(|l| !l.is_empty())>
            <ol class="transcript queued" aria-label="Messages not yet answered" aria-live="polite" data-testid="chat-queue">
                {move || lines.get().into_iter().map(|line| {
                    let fate = if line.cancelled {
                        "Cancelled by Stop: not sent to the assistant."
                    } else {
                        match line.priority.as_str() {
                            "now" => "Sent now: the reply in progress stops, this comes next.",
                            "this_turn" => "For this reply: the assistant reads it before its next step.",
                            _ => "Waiting: the assistant reads it when the current reply is done.",
                        }
                    };
                    let state = if line.cancelled { "cancelled" } else { "waiting" };
                    view! {
                        <li class="msg customer sending" data-queued=line.id.clone() data-state=state>
                            <span class="speaker">"You"</span>
                            <p class="text">{line.text.clone()}</p>
                            <p class="muted small" data-testid="chat-queue-fate">{fate}</p>
                        </li>
                    }
                }).collect_view()}
            </ol>
        </Show>
    }
}

/// The message field with its length shown as it nears the limit (a long
/// paste is never cut silently), Send (which queues while a reply is being
/// written), and only then Add to this reply (read before its next step)
/// and Send now (it stops that reply); Stop.
#[component]
fn ChatForm(
    text: RwSignal<String>,
    on_send: Callback<String>,
    /// Sending is not possible now (the conversation is being opened, or a
    /// queued message is on its way).
    blocked: Signal<bool>,
    /// A reply is being written.
    running: Signal<bool>,
    on_send_now: Callback<String>,
    on_add_to_turn: Callback<String>,
    stop_enabled: Signal<bool>,
    on_stop: Callback<()>,
) -> impl IntoView {
    let length = Memo::new(move |_| text.with(|t| t.trim().chars().count()));
    let over = move || length.get() > MAX_MESSAGE_CHARS;
    let counter = move || {
        let n = length.get();
        (n * 10 >= MAX_MESSAGE_CHARS * 9).then(|| {
            let text = if n > MAX_MESSAGE_CHARS {
                format!(
                    "{} of {} characters: {} too many. Shorten it to send it.",
                    thousands(n),
                    thousands(MAX_MESSAGE_CHARS),
                    thousands(n - MAX_MESSAGE_CHARS)
                )
            } else {
                format!("{} of {} characters", thousands(n), thousands(MAX_MESSAGE_CHARS))
            };
            view! {
                <p id="chat-length" class={if n > MAX_MESSAGE_CHARS { "error small" } else { "muted small" }}
                    aria-live="polite" data-testid="chat-length">{text}</p>
            }
        })
    };
    view! {
        <form class="chat-form" data-testid="chat-form" on:submit=move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            if !over() {
                on_send.run(text.get_untracked());
            }
        }>
            <label for="chat-text" class="sr-only">"Your message"</label>
            <input id="chat-text" name="text" type="text" required autocomplete="off"
                aria-describedby="chat-length"
                placeholder="Ask about an order or a policy, e.g. “check order 4821 and refund it if it qualifies”"
                data-testid="chat-input"
                prop:value=text on:input=move |ev| text.set(event_target_value(&ev))/>
            <button type="submit" data-testid="chat-send" disabled=move || blocked.get() || over()
                title=move || if running.get() { "Your message waits until the reply being written is done" } else { "Send your message" }>
                {move || if running.get() { "Send (after this reply)" } else { "Send" }}
            </button>
            <Show when=move || running.get()>
                <button type="button" class="secondary" data-testid="chat-add-to-turn"
                    disabled=move || blocked.get() || over() || text.with(|t| t.trim().is_empty())
                    on:click=move |_| on_add_to_turn.run(text.get_untracked())
                    title="The assistant reads this before its next step of the reply being written">
                    "Add to this reply"
                </button>
            </Show>
            <Show when=move || running.get()>
                <button type="button" class="secondary" data-testid="chat-send-now"
                    disabled=move || blocked.get() || over() || text.with(|t| t.trim().is_empty())
                    on:click=move |_| on_send_now.run(text.get_untracked())
                    title="Stop the reply being written and answer this message instead">
                    "Send now"
                </button>
            </Show>
            <button type="button" class="secondary" data-testid="chat-stop"
                disabled=move || !stop_enabled.get() on:click=move |_| on_stop.run(())
                title="Stop the reply being written and cancel the messages waiting">
                "Stop"
            </button>
        </form>
        {counter}
    }
}

/// 4000 as "4,000".
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether the page is scrolled to (near) its end.
fn reader_at_end() -> bool {
    #[cfg(feature = "hydrate")]
    {
        let window = window();
        let y = window.scroll_y().unwrap_or(0.0);
        let height = window
            .inner_height()
            .ok()
            .and_then(|h| h.as_f64())
            .unwrap_or(0.0);
        document()
            .document_element()
            .is_none_or(|end| y + height >= f64::from(end.scroll_height()) - 80.0)
    }
    #[cfg(not(feature = "hydrate"))]
    true
}

/// Scrolls so the newest message and the field under it are in view; on
/// opening, not when the address names a message to land on.
fn follow_newest(opening: bool) {
    request_animation_frame(move || {
        #[cfg(feature = "hydrate")]
        {
            let window = window();
            let names_a_message = window.location().hash().is_ok_and(|hash| hash.len() > 1);
            if opening && names_a_message {
                return;
            }
            // The field is sticky at the bottom of the screen, so the end of
            // the page is where the newest message shows above it.
            if let Some(end) = document().document_element() {
                window.scroll_to_with_x_and_y(0.0, f64::from(end.scroll_height()));
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = opening;
    });
}
