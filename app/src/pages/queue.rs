//! The review queue: proposals awaiting approval, soonest expiry first,
//! updating live. Approve names the proposal and shows exactly what will
//! execute before the final click; Reject asks for a reason.

use crate::components::proposal_card::ProposalSummary;
use crate::csrf::csrf_token;
use crate::live::use_proposal_changes;
use crate::proposals::{ProposalCard, approve_proposal, reject_proposal, review_queue};
use leptos::prelude::*;

/// Decision outcomes by proposal id, kept by the page so a message survives
/// the live refresh that re-renders the card it belongs to.
#[derive(Clone, Copy)]
struct Outcomes(RwSignal<std::collections::HashMap<String, Result<String, String>>>);

/// What an approver has open or half-written on each card, kept by the page
/// for the same reason: a live update of any proposal re-renders the list,
/// and must not close a confirmation or lose a rejection being typed.
#[derive(Clone, Copy)]
struct Drafts {
    by_proposal: RwSignal<std::collections::HashMap<String, Draft>>,
    /// The card whose reason was typed in last, to give its field the focus
    /// back when a re-render took it away.
    last_edited: RwSignal<Option<String>>,
}

#[derive(Clone, Default)]
struct Draft {
    panel: Panel,
    reason: String,
}

#[component]
pub fn QueuePage() -> impl IntoView {
    let outcomes =
        RwSignal::new(std::collections::HashMap::<String, Result<String, String>>::new());
    provide_context(Outcomes(outcomes));
    provide_context(Drafts {
        by_proposal: RwSignal::new(std::collections::HashMap::new()),
        last_edited: RwSignal::new(None),
    });
    let changes = use_proposal_changes();
    let queue = Resource::new(move || changes.get(), |_| review_queue());
    // Decisions stay listed here after their cards leave the queue.
    let decided = move || {
        outcomes.with(|all| {
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
                {move || Suspend::new(async move {
                    match queue.await {
                        Ok(cards) if cards.is_empty() => view! {
                            <p class="card muted" data-testid="queue-empty">"Nothing is waiting for approval."</p>
                        }.into_any(),
                        Ok(cards) => view! {
                            <div class="queue" data-testid="queue">
                                {cards.into_iter().map(|card| view! { <QueueItem card/> }).collect_view()}
                            </div>
                        }.into_any(),
                        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
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
    let drafts = expect_context::<Drafts>();
    let panel = Signal::derive({
        let id = id.clone();
        move || {
            drafts
                .by_proposal
                .with(|all| all.get(&id).map(|d| d.panel).unwrap_or_default())
        }
    });
    let set_panel = Callback::new({
        let id = id.clone();
        move |next: Panel| {
            drafts.by_proposal.update(|all| {
                all.entry(id.clone()).or_default().panel = next;
            });
        }
    });
    let reason = Signal::derive({
        let id = id.clone();
        move || {
            drafts
                .by_proposal
                .with(|all| all.get(&id).map(|d| d.reason.clone()).unwrap_or_default())
        }
    });
    let set_reason = Callback::new({
        let id = id.clone();
        move |text: String| {
            drafts.by_proposal.update(|all| {
                all.entry(id.clone()).or_default().reason = text;
            });
            drafts.last_edited.set(Some(id.clone()));
        }
    });
    let reason_input = NodeRef::<leptos::html::Textarea>::new();
    {
        let id = id.clone();
        Effect::new(move |_| {
            let Some(field) = reason_input.get() else {
                return;
            };
            let nothing_focused = document()
                .active_element()
                .is_none_or(|active| document().body().is_some_and(|body| *body == active));
            if nothing_focused && drafts.last_edited.get_untracked().as_deref() == Some(&id) {
                let _ = field.focus();
            }
        });
    }
    // The outcome is recorded by the action's own task, not by an effect of
    // this card: a live refresh may remove the card (its proposal left the
    // queue) before the server's answer arrives.
    let outcomes = expect_context::<Outcomes>().0;
    let record = move |id: String, result: &Result<ProposalCard, crate::error::AppError>| {
        let message = result
            .as_ref()
            .map(|card| {
                format!(
                    "Recorded. Proposal {} is now: {}",
                    card.proposal.id,
                    card.state.status().label()
                )
            })
            .map_err(ToString::to_string);
        if message.is_ok() {
            drafts.by_proposal.update(|all| {
                all.remove(&id);
            });
        }
        outcomes.update(|all| {
            all.insert(id, message);
        });
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
        outcomes
            .with(|all| all.get(&id_outcome).cloned())
            .map(|result| match result {
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
        <article class="card proposal" data-proposal=id.clone()>
            <ProposalSummary card=card.clone() link=true/>
            <div class="decision">
                <Show when=move || panel.get() == Panel::Closed>
                    <div class="row">
                        <button type="button" on:click=move |_| set_panel.run(Panel::ConfirmApprove)>"Approve…"</button>
                        <button type="button" class="secondary" on:click=move |_| set_panel.run(Panel::Reject)>"Reject…"</button>
                    </div>
                </Show>
                <Show when=move || panel.get() == Panel::ConfirmApprove>
                    <div class="confirm" role="group" aria-label="Confirm approval">
                        <p><strong>"You are approving exactly this:"</strong></p>
                        <p data-testid="confirm-what">{what.clone()}</p>
                        <p class="muted small mono">"Proposal " {id_shown.clone()} " · digest " {digest_shown.clone()}</p>
                        <div class="row">
                            <button type="button" data-testid="confirm-approve" disabled=busy
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
