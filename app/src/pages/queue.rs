//! The review queue: the approver's lists ("to decide", "waiting for a
//! second approver", "decided by me"), filtered, sorted and paged on the
//! server, updating live. Each card shows the checks the engine will apply
//! before the decision; Approve is not offered when one would refuse it.
//! Approve names the proposal and shows exactly what will execute before
//! the final click; Reject asks for a reason. Decisions are followed live
//! to their end.

use crate::components::proposal_card::ProposalSummary;
use crate::csrf::csrf_token;
use crate::error::AppError;
use crate::format::percent_encode;
use crate::live::{LiveStates, use_proposal_changes};
use crate::outcome::staff_outcome;
use crate::proposals::{ProposalCard, approve_proposal, reject_proposal};
use crate::queue::{QueueQuery, QueueTab, QueueView, SORTS, followed_proposals, review_queue};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// How a decision listed at the top of the page came about.
#[derive(Clone, PartialEq)]
enum Decided {
    /// This approver decided it here.
    ByMe,
    /// It left the list while this approver's confirmation was open:
    /// another tab or another person decided it.
    Elsewhere,
    /// This approver's decision was refused, with the reason.
    Refused(String),
}

/// Decisions, newest first, one per proposal, kept by the page so a
/// message survives the live refresh that removes the card it belongs to.
#[derive(Clone, Copy)]
struct Outcomes(RwSignal<Vec<(String, Decided)>>);

impl Outcomes {
    fn record(self, id: String, decided: Decided) {
        self.0.update(|all| {
            all.retain(|(other, _)| *other != id);
            all.insert(0, (id, decided));
        });
    }

    fn of(self, id: &str) -> Option<Decided> {
        self.0.with(|all| {
            all.iter()
                .find(|(other, _)| other == id)
                .map(|(_, o)| o.clone())
        })
    }

    /// The proposals to follow: those decided, not those refused.
    fn followed(self) -> Vec<String> {
        self.0.with(|all| {
            all.iter()
                .filter(|(_, d)| !matches!(d, Decided::Refused(_)))
                .map(|(id, _)| id.clone())
                .take(50)
                .collect()
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
    /// A decision was sent from this card: it leaving the list is expected.
    sending: bool,
}

type QueueResource = Resource<Result<QueueView, AppError>>;

/// The query the page's address asks for.
fn query_from_address() -> Memo<QueueQuery> {
    let query = use_query_map();
    Memo::new(move |_| {
        query.with(|q| {
            let get = |key: &str| q.get(key).unwrap_or_default();
            QueueQuery {
                tab: get("tab"),
                sort: get("sort"),
                min_amount: get("min_amount"),
                max_amount: get("max_amount"),
                order: get("order"),
                submitted_by: get("submitted_by"),
                waiting_hours: get("waiting_hours"),
                expiring_hours: get("expiring_hours"),
                page: get("page").parse().unwrap_or(1),
            }
        })
    })
}

/// The address of `query` with `tab` and `page` replaced.
fn address(query: &QueueQuery, tab: QueueTab, page: u64) -> String {
    let mut parts = vec![format!("tab={}", tab.as_str())];
    for (key, value) in [
        ("sort", &query.sort),
        ("min_amount", &query.min_amount),
        ("max_amount", &query.max_amount),
        ("order", &query.order),
        ("submitted_by", &query.submitted_by),
        ("waiting_hours", &query.waiting_hours),
        ("expiring_hours", &query.expiring_hours),
    ] {
        if !value.trim().is_empty() {
            parts.push(format!("{key}={}", percent_encode(value.trim())));
        }
    }
    if page > 1 {
        parts.push(format!("page={page}"));
    }
    format!("/queue?{}", parts.join("&"))
}

#[component]
pub fn QueuePage() -> impl IntoView {
    let outcomes = Outcomes(RwSignal::new(Vec::new()));
    provide_context(outcomes);
    let drafts = Drafts(RwSignal::new(std::collections::HashMap::new()));
    provide_context(drafts);
    let query = query_from_address();
    let changes = use_proposal_changes();
    let queue: QueueResource = Resource::new(
        move || (query.get(), changes.get()),
        |(query, _)| review_queue(query),
    );
    // A confirmation left open on a card that has left "to decide" without
    // this page sending anything: another tab or person decided it.
    Effect::new(move |_| {
        let Some(Ok(view)) = queue.get() else {
            return;
        };
        if view.tab != QueueTab::ToDecide {
            return;
        }
        let listed: std::collections::HashSet<String> =
            view.cards.iter().map(|c| c.proposal.id.clone()).collect();
        let gone: Vec<String> = drafts.0.with_untracked(|all| {
            all.iter()
                .filter(|(id, d)| d.panel != Panel::Closed && !d.sending && !listed.contains(*id))
                .map(|(id, _)| id.clone())
                .collect()
        });
        for id in gone {
            drafts.0.update(|all| {
                all.remove(&id);
            });
            outcomes.record(id, Decided::Elsewhere);
        }
    });
    // The decided proposals as they are now, fetched again on every change.
    let followed = Resource::new(
        move || (outcomes.followed(), changes.get()),
        |(ids, _)| async move {
            if ids.is_empty() {
                Ok(Vec::new())
            } else {
                followed_proposals(ids.join(",")).await
            }
        },
    );
    let followed = Signal::derive(move || followed.get().and_then(Result::ok).unwrap_or_default());
    // One line per decision, kept in place as it is followed (so the focus
    // put on it stays there), newest first.
    let decided_ids = move || {
        outcomes
            .0
            .with(|all| all.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>())
    };
    let decided = move || {
        view! {
            <For each=decided_ids key=|id| id.clone()
                children=move |id| view! { <DecisionLine id followed/> }/>
        }
    };
    view! {
        <section class="wide">
            <h1>"Review queue"</h1>
            <ul class="decisions" role="status" aria-live="polite" data-testid="decisions">{decided}</ul>
            <Transition fallback=|| view! { <p class="muted">"Loading proposals…"</p> }>
                <QueueTabs queue query/>
                <QueueFilters query/>
                <QueueList queue query/>
            </Transition>
        </section>
    }
}

/// One decision at the top of the page, followed to its end.
#[component]
fn DecisionLine(id: String, followed: Signal<Vec<ProposalCard>>) -> impl IntoView {
    let outcomes = expect_context::<Outcomes>();
    let shown = {
        let id = id.clone();
        Memo::new(move |_| {
            let decided = outcomes.of(&id)?;
            let card = followed.with(|all| all.iter().find(|c| c.proposal.id == id).cloned());
            let kind = match decided {
                Decided::ByMe => "mine",
                Decided::Elsewhere => "elsewhere",
                Decided::Refused(_) => "refused",
            };
            Some(match (&decided, card) {
                (Decided::Refused(error), _) => (
                    "outcome bad",
                    kind,
                    String::new(),
                    format!("Proposal {id} was not decided: {error}"),
                ),
                (_, None) => (
                    "outcome progress",
                    kind,
                    String::new(),
                    format!("Proposal {id}: decision recorded; following it…"),
                ),
                (how, Some(mut card)) => {
                    // As read, or as announced live since (no second read).
                    card.state = LiveStates::newest(&card.state, card.state_version, &id);
                    let (tone, text) = staff_outcome(&card);
                    let text = if *how == Decided::Elsewhere {
                        format!(
                            "While your confirmation was open, this was decided in another tab or by someone else. {text}"
                        )
                    } else {
                        text
                    };
                    (
                        tone.class(),
                        kind,
                        card.state.status().as_str().to_owned(),
                        text,
                    )
                }
            })
        })
    };
    let part = move |pick: fn(&(&'static str, &'static str, String, String)) -> String| {
        move || shown.with(|s| s.as_ref().map(pick).unwrap_or_default())
    };
    view! {
        <li tabindex="-1" data-decision=id.clone()
            class=part(|s| s.0.to_owned()) data-kind=part(|s| s.1.to_owned()) data-status=part(|s| s.2.clone())>
            {part(|s| s.3.clone())} " " <a href=format!("/proposals/{id}")>"Open the proposal"</a>
        </li>
    }
}

/// The approver's lists, with how many each holds.
#[component]
fn QueueTabs(queue: QueueResource, query: Memo<QueueQuery>) -> impl IntoView {
    move || {
        let view = queue.get().and_then(Result::ok)?;
        let current = view.tab;
        let count = move |tab: QueueTab| match tab {
            QueueTab::ToDecide => Some(view.to_decide),
            QueueTab::Waiting => Some(view.waiting),
            QueueTab::Decided => None,
        };
        Some(view! {
            <nav class="tabs" aria-label="Lists">
                {QueueTab::ALL.into_iter().map(|tab| {
                    let label = match count(tab) {
                        Some(n) => format!("{} ({n})", tab.label()),
                        None => tab.label().to_owned(),
                    };
                    view! {
                        <a href=address(&query.get_untracked(), tab, 1) data-tab=tab.as_str()
                            aria-current=(tab == current).then_some("page")>{label}</a>
                    }
                }).collect_view()}
            </nav>
        })
    }
}

/// Sorting and filters: a plain GET form, so the server applies them and
/// the address keeps them.
#[component]
fn QueueFilters(query: Memo<QueueQuery>) -> impl IntoView {
    move || {
        let q = query.get();
        let tab = QueueTab::parse(&q.tab);
        (tab != QueueTab::Decided).then(|| {
            view! {
                <form class="filters card" method="get" action="/queue" data-testid="queue-filters">
                    <input type="hidden" name="tab" value=tab.as_str()/>
                    <div class="field">
                        <label for="queue-sort">"Sort by"</label>
                        <select id="queue-sort" name="sort">
                            {SORTS.into_iter().map(|(value, label)| view! {
                                <option value=value selected=q.sort == value>{label}</option>
                            }).collect_view()}
                        </select>
                    </div>
                    <div class="field">
                        <label for="queue-min">"Amount from"</label>
                        <input id="queue-min" name="min_amount" inputmode="decimal" size="7" value=q.min_amount.clone()/>
                    </div>
                    <div class="field">
                        <label for="queue-max">"Amount up to"</label>
                        <input id="queue-max" name="max_amount" inputmode="decimal" size="7" value=q.max_amount.clone()/>
                    </div>
                    <div class="field">
                        <label for="queue-order">"Order"</label>
                        <input id="queue-order" name="order" size="8" value=q.order.clone()/>
                    </div>
                    <div class="field">
                        <label for="queue-agent">"Submitted by (account)"</label>
                        <input id="queue-agent" name="submitted_by" size="10" value=q.submitted_by.clone()/>
                    </div>
                    <div class="field">
                        <label for="queue-waiting">"Waiting at least (hours)"</label>
                        <input id="queue-waiting" name="waiting_hours" inputmode="numeric" size="4" value=q.waiting_hours.clone()/>
                    </div>
                    <div class="field">
                        <label for="queue-expiring">"Expiring within (hours)"</label>
                        <input id="queue-expiring" name="expiring_hours" inputmode="numeric" size="4" value=q.expiring_hours.clone()/>
                    </div>
                    <div class="row">
                        <button type="submit" class="secondary">"Apply"</button>
                        <a href=format!("/queue?tab={}", tab.as_str())>"Clear"</a>
                    </div>
                </form>
            }
        })
    }
}

/// What the queue's body shows; it is rendered anew only when this changes.
#[derive(Clone, PartialEq)]
enum Shape {
    Loading,
    Empty(QueueTab),
    Listed(QueueTab),
    Failed(String),
}

/// The queue's body. Cards are keyed by what they show that can change
/// while queued (approvals given, the order's version, what blocks it), so
/// a live update adds, removes and redraws only the cards it concerns: the
/// approver's focus, open panel and scroll position stay where they were.
#[component]
fn QueueList(queue: QueueResource, query: Memo<QueueQuery>) -> impl IntoView {
    // Read under the Transition, so the server waits for the queue before
    // rendering it.
    let shape = Memo::new(move |_| match queue.get() {
        None => Shape::Loading,
        Some(Ok(view)) if view.cards.is_empty() => Shape::Empty(view.tab),
        Some(Ok(view)) => Shape::Listed(view.tab),
        Some(Err(error)) => Shape::Failed(error.to_string()),
    });
    let cards = move || {
        queue
            .get()
            .and_then(Result::ok)
            .map(|view| view.cards)
            .unwrap_or_default()
    };
    move || match shape.get() {
        Shape::Loading => ().into_any(),
        Shape::Empty(tab) => {
            let text = match tab {
                QueueTab::ToDecide => "Nothing is waiting for your decision.",
                QueueTab::Waiting => "Nothing you approved is waiting for a second approver.",
                QueueTab::Decided => "You have not decided any proposal yet.",
            };
            view! { <p class="card muted" data-testid="queue-empty">{text}</p> }.into_any()
        }
        Shape::Listed(tab) => {
            // Apart from the cards: a count that changes redraws only this.
            let pager = move || {
                let (page, pages, total) = queue
                    .get()
                    .and_then(Result::ok)
                    .map(|v| (v.page, v.pages, v.total))?;
                let q = query.get_untracked();
                (pages > 1).then(|| {
                view! {
                    <nav class="pager row" aria-label="Pages" data-testid="queue-pages">
                        {(page > 1).then(|| view! { <a href=address(&q, tab, page - 1) rel="prev">"Previous page"</a> })}
                        <span>{format!("Page {page} of {pages} ({total} proposals)")}</span>
                        {(page < pages).then(|| view! { <a href=address(&q, tab, page + 1) rel="next">"Next page"</a> })}
                    </nav>
                }
                })
            };
            view! {
                <div class="queue" data-testid="queue" data-tab=tab.as_str()>
                    <For each=cards
                        key=|card| (card.proposal.id.clone(), card.state.status(), card.state.approvals().len(), card.order.as_ref().map(|o| o.version), card.blocked_because().map(str::to_owned))
                        children=move |card| view! { <QueueItem card tab/> }/>
                </div>
                {pager}
            }
            .into_any()
        }
        Shape::Failed(error) => view! { <p class="error" role="alert">{error}</p> }.into_any(),
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
fn QueueItem(card: ProposalCard, tab: QueueTab) -> impl IntoView {
    let id = card.proposal.id.clone();
    let decides = tab == QueueTab::ToDecide;
    let approved_by_me = card.approved_by_me.to_string();
    view! {
        <article class="card proposal" data-proposal=id.clone() data-approved-by-me=approved_by_me>
            <ProposalSummary card=card.clone() link=true/>
            {if decides {
                view! { <DecisionPanel card/> }.into_any()
            } else {
                let (tone, text) = staff_outcome(&card);
                view! { <p class=tone.class() data-testid="card-outcome">{text}</p> }.into_any()
            }}
        </article>
    }
}

/// Approve (after a confirmation that names exactly what executes) or
/// reject (with a reason).
#[component]
fn DecisionPanel(card: ProposalCard) -> impl IntoView {
    let id = card.proposal.id.clone();
    let digest = card.proposal.action_digest.clone();
    let what = format!(
        "Refund {} to payment {} for order {}",
        card.proposal.amount.display(),
        card.proposal.payment_reference,
        card.proposal.order_id
    );
    let four_eyes = four_eyes_note(&card);
    let blocked = card.blocked_because().map(str::to_owned);
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
    // Keyboard: opening a panel moves the focus into it (onto its heading
    // for the approval, never onto Confirm: Enter pressed twice must not
    // approve); Cancel or Escape closes it and gives the focus back to the
    // button that opened it.
    let (open_approve, open_reject) = (
        NodeRef::<leptos::html::Button>::new(),
        NodeRef::<leptos::html::Button>::new(),
    );
    let (confirm_heading, reason_input) = (
        NodeRef::<leptos::html::P>::new(),
        NodeRef::<leptos::html::Textarea>::new(),
    );
    let set_panel = Callback::new({
        let id = id.clone();
        move |next: Panel| {
            let before = panel.get_untracked();
            drafts.update(|all| all.entry(id.clone()).or_default().panel = next);
            request_animation_frame(move || {
                let focused = match (next, before) {
                    (Panel::ConfirmApprove, _) => {
                        confirm_heading.get_untracked().map(|p| p.focus())
                    }
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
    // list) before the server's answer arrives. The focus then moves to the
    // outcome at the top of the page, which outlives the card.
    let outcomes = expect_context::<Outcomes>();
    let record = move |id: String, result: &Result<ProposalCard, AppError>| {
        match result {
            Ok(_) => {
                drafts.update(|all| {
                    all.remove(&id);
                });
                outcomes.record(id.clone(), Decided::ByMe);
            }
            Err(error) => {
                drafts.update(|all| {
                    if let Some(draft) = all.get_mut(&id) {
                        draft.sending = false;
                    }
                });
                outcomes.record(id.clone(), Decided::Refused(error.to_string()));
            }
        }
        focus_decision(id);
    };
    let sending = move |id: &str| {
        drafts.update(|all| all.entry(id.to_owned()).or_default().sending = true);
    };
    let approve = Action::new(move |(id, digest): &(String, String)| {
        let id = id.clone();
        sending(&id);
        let call = approve_proposal(csrf_token(), id.clone(), digest.clone());
        async move {
            let result = call.await;
            record(id, &result);
            result
        }
    });
    let reject = Action::new(move |(id, reason): &(String, String)| {
        let id = id.clone();
        sending(&id);
        let call = reject_proposal(csrf_token(), id.clone(), reason.clone());
        async move {
            let result = call.await;
            record(id, &result);
            result
        }
    });
    let id_outcome = id.clone();
    let refused = move || match outcomes.of(&id_outcome) {
        Some(Decided::Refused(error)) => Some(view! {
            <p class="error" role="alert" data-testid="decision-error">{error}</p>
        }),
        _ => None,
    };
    let busy = move || approve.pending().get() || reject.pending().get();
    let (id_a, digest_a, id_r) = (id.clone(), digest.clone(), id.clone());
    let (id_shown, digest_shown) = (id.clone(), digest.clone());
    let reason_field = format!("reason-{id}");
    let blocked_id = format!("blocked-{id}");
    let is_blocked = blocked.is_some();
    view! {
        <div class="decision" on:keydown=on_keydown>
            <Show when=move || panel.get() == Panel::Closed>
                <div class="row">
                    <button type="button" node_ref=open_approve disabled=is_blocked
                        aria-describedby=is_blocked.then(|| blocked_id.clone())
                        on:click=move |_| set_panel.run(Panel::ConfirmApprove)>"Approve…"</button>
                    <button type="button" class="secondary" node_ref=open_reject on:click=move |_| set_panel.run(Panel::Reject)>"Reject…"</button>
                </div>
                {blocked.clone().map(|why| view! {
                    <p class="blocked" id=blocked_id.clone() data-testid="approve-blocked">{format!("Approve is not offered. {why}")}</p>
                })}
            </Show>
            <Show when=move || panel.get() == Panel::ConfirmApprove>
                <div class="confirm" role="group" aria-label="Confirm approval">
                    <p tabindex="-1" node_ref=confirm_heading data-testid="confirm-heading"><strong>"You are approving exactly this:"</strong></p>
                    <p data-testid="confirm-what">{what.clone()}</p>
                    <p class="muted small mono">"Proposal " {id_shown.clone()} " · digest " {digest_shown.clone()}</p>
                    {four_eyes.clone().map(|note| view! { <p class="notice" data-testid="confirm-four-eyes">{note}</p> })}
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
            {refused}
        </div>
    }
}

/// Moves the keyboard focus to the decision's line at the top of the page
/// once it is drawn.
fn focus_decision(id: String) {
    request_animation_frame(move || {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let selector = format!("[data-decision=\"{id}\"]");
            if let Ok(Some(element)) = document().query_selector(&selector)
                && let Ok(element) = element.dyn_into::<web_sys::HtmlElement>()
            {
                let _ = element.focus();
            }
        }
        #[cfg(not(feature = "hydrate"))]
        drop(id);
    });
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
