//! The review queue: proposals awaiting approval, soonest expiry first,
//! updating live. Approve names the proposal and shows exactly what will
//! execute before the final click; Reject asks for a reason.

use crate::components::proposal_card::ProposalSummary;
use crate::csrf::csrf_token;
use crate::error::AppError;
use crate::live::use_proposal_changes;
use crate::proposals::{
    ProposalCard, QUEUE_PAGE, QueueView, approve_proposal, reject_proposal, review_queue,
};
use domain::proposal::ProposalStatus;
use leptos::prelude::*;

/// Decision outcomes, newest first, one per proposal, kept by the page so
/// a message survives the live refresh that removes the card it belongs to.
#[derive(Clone, Copy)]
struct Outcomes(RwSignal<Vec<(String, Result<String, String>)>>);

impl Outcomes {
    fn record(self, id: String, outcome: Result<String, String>) {
        self.0.update(|all| {
            all.retain(|(other, _)| *other != id);
            all.insert(0, (id, outcome));
        });
    }

    fn of(self, id: &str) -> Option<Result<String, String>> {
        self.0.with(|all| {
            all.iter()
                .find(|(other, _)| other == id)
                .map(|(_, o)| o.clone())
        })
    }
}

/// What an approver has open or half-written on each card, kept by the page
/// so that a card rendered again (its proposal changed) keeps its panel and
/// its draft.
#[derive(Clone, Copy)]
struct Drafts(RwSignal<std::collections::HashMap<String, Draft>>);

#[derive(Clone, Default)]
struct Draft {
    panel: Panel,
    reason: String,
}

type QueueResource = Resource<Result<QueueView, AppError>>;

#[component]
pub fn QueuePage() -> impl IntoView {
    let outcomes = Outcomes(RwSignal::new(Vec::new()));
    provide_context(outcomes);
    provide_context(Drafts(RwSignal::new(std::collections::HashMap::new())));
    let changes = use_proposal_changes();
    let queue: QueueResource = Resource::new(move || changes.get(), |_| review_queue());
    // Decisions stay listed here after their cards leave the queue.
    let decided = move || {
        outcomes.0.with(|all| {
            all.iter()
                .map(|(id, result)| {
                    let (class, text) = match result {
                        Ok(message) => ("notice", message.clone()),
                        Err(error) => ("error", format!("Proposal {id}: {error}")),
                    };
                    view! {
                        <li class=class data-decision=id.clone()>
                            {text} " · " <a href=format!("/proposals/{id}")>"follow it"</a>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <section class="wide">
            <h1>"Review queue"</h1>
            <ul class="decisions" role="status" aria-live="polite">{decided}</ul>
            <Transition fallback=|| view! { <p class="muted">"Loading proposals…"</p> }>
                <QueueList queue/>
            </Transition>
        </section>
    }
}

/// What the queue's body shows; it is rendered anew only when this changes.
#[derive(Clone, PartialEq)]
enum Shape {
    Loading,
    Empty,
    Listed { more: bool },
    Failed(String),
}

/// The queue's body. Cards are keyed by what they show that can change
/// while queued (approvals given, the order's version), so a live update
/// adds, removes and redraws only the cards it concerns: the approver's
/// focus, open panel and scroll position stay where they were.
#[component]
fn QueueList(queue: QueueResource) -> impl IntoView {
    // Read under the Transition, so the server waits for the queue before
    // rendering it.
    let shape = Memo::new(move |_| match queue.get() {
        None => Shape::Loading,
        Some(Ok(queue)) if queue.cards.is_empty() => Shape::Empty,
        Some(Ok(queue)) => Shape::Listed { more: queue.more },
        Some(Err(error)) => Shape::Failed(error.to_string()),
    });
    let cards = move || {
        queue
            .get()
            .and_then(Result::ok)
            .map(|queue| queue.cards)
            .unwrap_or_default()
    };
    move || {
        match shape.get() {
        Shape::Loading => ().into_any(),
        Shape::Empty => view! {
            <p class="card muted" data-testid="queue-empty">"Nothing is waiting for approval."</p>
        }
        .into_any(),
        Shape::Listed { more } => view! {
            {more.then(|| view! {
                <p class="notice" data-testid="queue-more">
                    {format!("More than {QUEUE_PAGE} proposals are waiting: the {QUEUE_PAGE} expiring soonest are shown; the next appear as these are decided.")}
                </p>
            })}
            <div class="queue" data-testid="queue">
                <For each=cards key=|card| (card.proposal.id.clone(), card.state.approvals().len(), card.order.as_ref().map(|o| o.version))
                    children=|card| view! { <QueueItem card/> }/>
            </div>
        }
        .into_any(),
        Shape::Failed(error) => view! { <p class="error" role="alert">{error}</p> }.into_any(),
    }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Panel {
    #[default]
    Closed,
    ConfirmApprove,
    Reject,
}

#[component]
fn QueueItem(card: ProposalCard) -> impl IntoView {
    let id = card.proposal.id.clone();
    let digest = card.proposal.action_digest.clone();
    let what = format!(
        "Refund {} to payment {} for order {}",
        card.proposal.amount.display(),
        card.proposal.payment_reference,
        card.proposal.order_id
    );
    let four_eyes = four_eyes_note(&card);
    let drafts = expect_context::<Drafts>().0;
    let panel = Signal::derive({
        let id = id.clone();
        move || drafts.with(|all| all.get(&id).map(|d| d.panel).unwrap_or_default())
    });
    let reason = Signal::derive({
        let id = id.clone();
        move || drafts.with(|all| all.get(&id).map(|d| d.reason.clone()).unwrap_or_default())
    });
    let set_reason = Callback::new({
        let id = id.clone();
        move |text: String| {
            drafts.update(|all| all.entry(id.clone()).or_default().reason = text);
        }
    });
    // Keyboard: opening a panel moves the focus into it; Cancel or Escape
    // closes it and gives the focus back to the button that opened it.
    let (open_approve, open_reject) = (
        NodeRef::<leptos::html::Button>::new(),
        NodeRef::<leptos::html::Button>::new(),
    );
    let (confirm_button, reason_input) = (
        NodeRef::<leptos::html::Button>::new(),
        NodeRef::<leptos::html::Textarea>::new(),
    );
    let set_panel = Callback::new({
        let id = id.clone();
        move |next: Panel| {
            let before = panel.get_untracked();
            drafts.update(|all| all.entry(id.clone()).or_default().panel = next);
            request_animation_frame(move || {
                let focused = match (next, before) {
                    (Panel::ConfirmApprove, _) => confirm_button.get_untracked().map(|b| b.focus()),
                    (Panel::Reject, _) => reason_input.get_untracked().map(|t| t.focus()),
                    (Panel::Closed, Panel::Reject) => {
                        open_reject.get_untracked().map(|b| b.focus())
                    }
                    (Panel::Closed, _) => open_approve.get_untracked().map(|b| b.focus()),
                };
                drop(focused);
            });
        }
    });
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Escape" && panel.get_untracked() != Panel::Closed {
            ev.prevent_default();
            set_panel.run(Panel::Closed);
        }
    };
    // The outcome is recorded by the action's own task, not by an effect of
    // this card: a live refresh may remove the card (its proposal left the
    // queue) before the server's answer arrives.
    let outcomes = expect_context::<Outcomes>();
    let record = move |id: String, result: &Result<ProposalCard, AppError>| {
        let message = result
            .as_ref()
            .map(decision_message)
            .map_err(ToString::to_string);
        if message.is_ok() {
            drafts.update(|all| {
                all.remove(&id);
            });
        }
        outcomes.record(id, message);
    };
    let approve = Action::new(move |(id, digest): &(String, String)| {
        let id = id.clone();
        let call = approve_proposal(csrf_token(), id.clone(), digest.clone());
        async move {
            let result = call.await;
            record(id, &result);
            result
        }
    });
    let reject = Action::new(move |(id, reason): &(String, String)| {
        let id = id.clone();
        let call = reject_proposal(csrf_token(), id.clone(), reason.clone());
        async move {
            let result = call.await;
            record(id, &result);
            result
        }
    });
    let id_outcome = id.clone();
    let outcome = move || {
        outcomes.of(&id_outcome).map(|result| match result {
            Ok(message) => view! {
                <p class="notice" role="status" data-testid="decision-result">{message}</p>
            }
            .into_any(),
            Err(error) => view! {
                <p class="error" role="alert" data-testid="decision-error">{error}</p>
            }
            .into_any(),
        })
    };
    let busy = move || approve.pending().get() || reject.pending().get();
    let (id_a, digest_a, id_r) = (id.clone(), digest.clone(), id.clone());
    let (id_shown, digest_shown) = (id.clone(), digest.clone());
    let reason_field = format!("reason-{id}");
    view! {
        <article class="card proposal" data-proposal=id.clone() on:keydown=on_keydown>
            <ProposalSummary card=card.clone() link=true/>
            <div class="decision">
                <Show when=move || panel.get() == Panel::Closed>
                    <div class="row">
                        <button type="button" node_ref=open_approve on:click=move |_| set_panel.run(Panel::ConfirmApprove)>"Approve…"</button>
                        <button type="button" class="secondary" node_ref=open_reject on:click=move |_| set_panel.run(Panel::Reject)>"Reject…"</button>
                    </div>
                </Show>
                <Show when=move || panel.get() == Panel::ConfirmApprove>
                    <div class="confirm" role="group" aria-label="Confirm approval">
                        <p><strong>"You are approving exactly this:"</strong></p>
                        <p data-testid="confirm-what">{what.clone()}</p>
                        <p class="muted small mono">"Proposal " {id_shown.clone()} " · digest " {digest_shown.clone()}</p>
                        {four_eyes.clone().map(|note| view! { <p class="notice" data-testid="confirm-four-eyes">{note}</p> })}
                        <div class="row">
                            <button type="button" data-testid="confirm-approve" disabled=busy node_ref=confirm_button
                                on:click={
                                    let (id, digest) = (id_a.clone(), digest_a.clone());
                                    move |_| { approve.dispatch((id.clone(), digest.clone())); }
                                }>
                                "Confirm approval"
                            </button>
                            <button type="button" class="secondary" on:click=move |_| set_panel.run(Panel::Closed)>"Cancel"</button>
                        </div>
                    </div>
                </Show>
                <Show when=move || panel.get() == Panel::Reject>
                    <form class="confirm" on:submit={
                        let id = id_r.clone();
                        move |ev: leptos::ev::SubmitEvent| {
                            ev.prevent_default();
                            reject.dispatch((id.clone(), reason.get_untracked()));
                        }
                    }>
                        <label for=reason_field.clone()>"Why are you rejecting it?"</label>
                        <textarea id=reason_field.clone() required maxlength="2000" node_ref=reason_input
                            prop:value=reason on:input=move |ev| set_reason.run(event_target_value(&ev))></textarea>
                        <div class="row">
                            <button type="submit" class="danger" disabled=busy>"Reject proposal"</button>
                            <button type="button" class="secondary" on:click=move |_| set_panel.run(Panel::Closed)>"Cancel"</button>
                        </div>
                    </form>
                </Show>
                {outcome}
            </div>
        </article>
    }
}

/// What the approver is told before confirming a refund that needs more
/// than one approver.
fn four_eyes_note(card: &ProposalCard) -> Option<String> {
    let required = usize::from(card.approvals_required);
    let given = card.state.approvals().len();
    (required > 1).then(|| {
        if given + 1 >= required {
            format!("Yours is approval {} of {required}: the refund executes when you confirm.", given + 1)
        } else {
            format!(
                "This refund needs {required} different approvers. Yours is approval {} of {required}: nothing executes until someone else approves too.",
                given + 1
            )
        }
    })
}

/// What the approver is told once their decision is recorded.
fn decision_message(card: &ProposalCard) -> String {
    let status = card.state.status();
    let recorded = format!(
        "Recorded. Proposal {} is now: {}",
        card.proposal.id,
        status.label()
    );
    if status == ProposalStatus::AwaitingApproval {
        let missing =
            usize::from(card.approvals_required).saturating_sub(card.state.approvals().len());
        let approvers = if missing == 1 {
            "approver"
        } else {
            "approvers"
        };
        format!(
            "{recorded}. Your approval counts; {missing} more {approvers} (not you) must approve before anything executes."
        )
    } else {
        recorded
    }
}
