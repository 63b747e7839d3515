//! The customer's refunds: a list of their refunds with where each stands
//! and when the money arrives (`/refunds`), and a page per refund
//! (`/refunds/:id`, also what `/proposals/:id` shows a customer), in the
//! customer's words, following each refund live. Staff see the staff page.

use crate::customer_words::customer_status;
use crate::live::{LiveStates, use_proposal_changes};
use crate::proposals::{ProposalCard, proposal_page, recent_proposals};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

#[component]
pub fn MyRefundsPage() -> impl IntoView {
    let changes = use_proposal_changes();
    let refunds = Resource::new(move || changes.get(), |_| recent_proposals());
    view! {
        <section class="wide">
            <h1>"My refunds"</h1>
            <Transition fallback=|| view! { <p class="muted">"Loading your refunds…"</p> }>
                {move || Suspend::new(async move {
                    match refunds.await {
                        Ok(cards) if cards.is_empty() => view! {
                            <p class="card muted" data-testid="refunds-empty">
                                "You have no refunds yet. Ask about an order in the " <a href="/chat">"chat"</a> "."
                            </p>
                        }.into_any(),
                        Ok(cards) => view! {
                            <ul class="refunds" data-testid="refunds">
                                {cards.into_iter().map(|card| view! { <RefundItem card/> }).collect_view()}
                            </ul>
                        }.into_any(),
                        Err(error) => view! { <p class="card error" role="alert">{error.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn RefundItem(card: ProposalCard) -> impl IntoView {
    let p = &card.proposal;
    let words = customer_status(&card.state);
    view! {
        <li class="card refund" data-refund=p.id.clone() data-status=card.state.status().as_str()>
            <a href=format!("/refunds/{}", p.id)>
                {format!("Refund of {} for order {}", p.amount.display(), p.order_id)}
            </a>
            <p class=words.tone data-testid="refund-status">
                <strong>{words.headline}</strong> " " {words.next}
            </p>
        </li>
    }
}

/// `/refunds/:id`.
#[component]
pub fn RefundPage() -> impl IntoView {
    let params = use_params_map();
    let id = Signal::derive(move || params.read().get("id").unwrap_or_default());
    view! { <CustomerRefund id/> }
}

/// One refund as its customer sees it.
#[component]
pub fn CustomerRefund(id: Signal<String>) -> impl IntoView {
    let changes = use_proposal_changes();
    let page = Resource::new(
        move || (id.get(), changes.get()),
        |(id, _)| proposal_page(id),
    );
    view! {
        <section class="wide customer-refund">
            <Transition fallback=|| view! { <p class="muted">"Loading your refund…"</p> }>
                {move || Suspend::new(async move {
                    match page.await {
                        Ok(details) => {
                            let card = details.card;
                            let p = card.proposal.clone();
                            let conversation = p.provenance.conversation_id.clone();
                            // The newest state: as read, or as announced since.
                            let state = {
                                let (read, version, id) = (card.state.clone(), card.state_version, p.id.clone());
                                Memo::new(move |_| LiveStates::newest(&read, version, &id))
                            };
                            let words = move || customer_status(&state.get());
                            view! {
                                <h1>{format!("Your refund of {} for order {}", p.amount.display(), p.order_id)}</h1>
                                <div class=move || format!("card {}", words().tone) data-testid="refund-status"
                                    data-status=move || state.get().status().as_str() role="status" aria-live="polite">
                                    <h2>{move || words().headline}</h2>
                                    <p>{move || words().next}</p>
                                </div>
                                <p class="muted small">{format!("Asked for on {}.", p.created_at.format("%-d %B %Y"))}</p>
                                <p>
                                    <a href="/refunds">"All my refunds"</a>
                                    {conversation.map(|c| view! {
                                        " · " <a href=format!("/chat?conversation={c}")>"The conversation"</a>
                                    })}
                                </p>
                            }.into_any()
                        }
                        Err(error) => view! { <p class="card error" role="alert">{error.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}
