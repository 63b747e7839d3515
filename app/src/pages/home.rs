//! The landing page: what each role does first.

use crate::MeResource;
use crate::components::order_card::OrderCard;
use crate::event_words::status_words;
use crate::format::utc;
use crate::orders::{OrderProposal, my_orders, staff_order};
use domain::{Role, UserSummary};
use leptos::prelude::*;

#[component]
pub fn HomePage() -> impl IntoView {
    let me = expect_context::<MeResource>();
    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match me.await {
                    Ok(Some(user)) => view! { <Landing user/> }.into_any(),
                    _ => view! { <p>"Please " <a href="/login">"sign in"</a> "."</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn Landing(user: UserSummary) -> impl IntoView {
    let roles = user.roles.clone();
    view! {
        <h1>"Welcome, " {user.display_name.clone()}</h1>
        <div class="grid">
            {roles.contains(Role::Customer).then(|| view! { <CustomerOrders/> })}
            {roles.contains(Role::Approver).then(|| view! {
                <section class="card">
                    <h2>"Approvals"</h2>
                    <p>"Proposals waiting for your sign-off are in the review queue."</p>
                    <a class="button" href="/queue">"Open the review queue"</a>
                </section>
            })}
            {roles.any_of(&[Role::Approver, Role::Manager, Role::Admin]).then(|| view! { <OrderLookup/> })}
            {roles.contains(Role::Manager).then(|| view! {
                <section class="card">
                    <h2>"Audit"</h2>
                    <p>"Who proposed, who approved what, what was executed and how it was verified."</p>
                    <a class="button" href="/audit">"Open the audit trail"</a>
                </section>
            })}
            {roles.contains(Role::Admin).then(|| view! {
                <section class="card">
                    <h2>"Administration"</h2>
                    <p>"Users and roles, approver limits, policy documents and widget sites."</p>
                    <a class="button" href="/admin">"Open administration"</a>
                </section>
            })}
            {roles.contains(Role::Agent).then(|| view! {
                <section class="card">
                    <h2>"Service account"</h2>
                    <p>"Outside agent systems use bearer tokens against the JSON API under "
                        <code>"/api/v1"</code> "; see " <a href="/api/openapi.json">"the OpenAPI document"</a> "."</p>
                </section>
            })}
        </div>
    }
}

#[component]
fn CustomerOrders() -> impl IntoView {
    let (refreshes, set_refreshes) = signal(0u32);
    let orders = Resource::new(move || refreshes.get(), |_| my_orders());
    view! {
        <section class="card wide">
            <header class="row">
                <h2>"Your orders"</h2>
                <button type="button" data-testid="refresh-orders"
                    on:click=move |_| set_refreshes.update(|n| *n += 1)>
                    "Refresh orders"
                </button>
            </header>
            <Transition fallback=|| view! { <p class="muted">"Loading your orders…"</p> }>
                {move || Suspend::new(async move {
                    match orders.await {
                        Ok(list) if list.is_empty() => view! { <p class="muted">"You have no orders yet."</p> }.into_any(),
                        Ok(list) => view! {
                            <div class="orders" data-testid="orders">
                                {list.into_iter().map(|order| view! { <OrderCard order/> }).collect_view()}
                            </div>
                        }.into_any(),
                        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
            <p class="muted small" data-testid="refresh-count">
                {move || match refreshes.get() {
                    0 => "Showing your orders as of page load.".to_owned(),
                    n => format!("Refreshed {n} time(s)."),
                }}
            </p>
        </section>
    }
}

#[component]
fn OrderLookup() -> impl IntoView {
    let (order_id, set_order_id) = signal(String::new());
    let lookup = Action::new(|id: &String| staff_order(id.clone()));
    view! {
        <section class="card">
            <h2>"Look up an order"</h2>
            <form class="row" on:submit=move |ev| {
                ev.prevent_default();
                lookup.dispatch(order_id.get_untracked());
            }>
                <label class="sr-only" for="order-id">"Order number"</label>
                <input id="order-id" placeholder="4821" required maxlength="64"
                    prop:value=order_id
                    on:input=move |ev| set_order_id.set(event_target_value(&ev))/>
                <button type="submit">"Look up"</button>
            </form>
            {move || lookup.value().get().map(|result| match result {
                Ok(found) => view! {
                    <OrderCard order=found.order/>
                    <OrderProposals proposals=found.proposals/>
                }.into_any(),
                Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
            })}
        </section>
    }
}

/// The refunds proposed for a looked-up order, each opening its page.
#[component]
fn OrderProposals(proposals: Vec<OrderProposal>) -> impl IntoView {
    if proposals.is_empty() {
        return view! { <p class="muted" data-testid="order-proposals">"No refund has been proposed for this order."</p> }.into_any();
    }
    view! {
        <h3>"Refunds proposed for this order"</h3>
        <ul class="plain" data-testid="order-proposals">
            {proposals.into_iter().map(|p| view! {
                <li>
                    <a href=format!("/proposals/{}", p.id)>{format!("{} · {}", p.amount.display(), status_words(p.status.as_str()))}</a>
                    <span class="muted">{format!(" · proposed {}", utc(p.created_at))}</span>
                </li>
            }).collect_view()}
        </ul>
    }.into_any()
}
