//! One proposal: the state machine with the current state highlighted, the
//! timeline from the journal, decisions, receipt and verification, updating
//! live as execution proceeds.

use crate::components::proposal_card::ProposalSummary;
use crate::csrf::csrf_token;
use crate::event_words::{event_sentence, status_words};
use crate::format::{event_details, short_digest, utc, utc_seconds};
use crate::live::use_proposal_changes;
use crate::pages::refunds::CustomerRefund;
use crate::proposals::{ProposalDetails, ResolveChoice, proposal_page, resolve_proposal};
use domain::proposal::{Decision, ProposalState, ProposalStatus};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

/// A customer gets their refund's page in their words; staff the full one.
#[component]
pub fn ProposalPage() -> impl IntoView {
    let me = expect_context::<crate::MeResource>();
    let params = use_params_map();
    let id = Signal::derive(move || params.read().get("id").unwrap_or_default());
    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let customer = matches!(me.await, Ok(Some(user)) if crate::access::is_customer_only(&user.roles));
                if customer {
                    view! { <CustomerRefund id/> }.into_any()
                } else {
                    view! { <StaffProposalPage/> }.into_any()
                }
            })}
        </Transition>
    }
}

#[component]
fn StaffProposalPage() -> impl IntoView {
    let params = use_params_map();
    let changes = use_proposal_changes();
    let page = Resource::new(
        move || (params.read().get("id").unwrap_or_default(), changes.get()),
        |(id, _)| proposal_page(id),
    );
    // Outside the part that is redrawn on each change, so screen readers
    // announce the new state instead of meeting a new region.
    // Set by an effect (browser only), so server and hydration agree.
    let announced = RwSignal::new(String::new());
    Effect::new(move |_| {
        if let Some(Ok(details)) = page.get() {
            announced.set(format!("Status: {}", details.card.state.status().label()));
        }
    });
    view! {
        <p class="sr-only" role="status" aria-live="polite" data-testid="status-announcement">{announced}</p>
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(details) => view! { <Details details/> }.into_any(),
                    Err(error) => view! { <p class="card error" role="alert">{error.to_string()}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// The path a refund normally takes, and the side exits.
const MAIN_PATH: [ProposalStatus; 5] = [
    ProposalStatus::AwaitingApproval,
    ProposalStatus::Approved,
    ProposalStatus::Executing,
    ProposalStatus::Succeeded,
    ProposalStatus::Verified,
];
const SIDE_EXITS: [ProposalStatus; 7] = [
    ProposalStatus::OutcomeUnknown,
    ProposalStatus::NeedsAttention,
    ProposalStatus::Failed,
    ProposalStatus::Rejected,
    ProposalStatus::Expired,
    ProposalStatus::Invalidated,
    ProposalStatus::Superseded,
];

#[component]
fn StateMachine(current: ProposalStatus) -> impl IntoView {
    let step = move |status: ProposalStatus| {
        let class = if status == current {
            "step current"
        } else {
            "step"
        };
        view! {
            <li class=class aria-current=(status == current).then_some("step")>{status.label()}</li>
        }
    };
    view! {
        <nav class="state-machine" aria-label="Proposal states">
            <ol class="main-path">{MAIN_PATH.into_iter().map(step).collect_view()}</ol>
            <ul class="side-exits">{SIDE_EXITS.into_iter().map(step).collect_view()}</ul>
        </nav>
    }
}

#[component]
fn Details(details: ProposalDetails) -> impl IntoView {
    let status = details.card.state.status();
    let conversation = details.card.proposal.provenance.conversation_id.clone();
    let resolve = details.may_resolve.then(|| {
        let why = match &details.card.state {
            ProposalState::NeedsAttention { reason, .. }
            | ProposalState::OutcomeUnknown { reason, .. } => reason.clone(),
            _ => String::new(),
        };
        view! { <ResolvePanel id=details.card.proposal.id.clone() why/> }
    });
    view! {
        {resolve}
        <article class="card wide proposal-detail" data-proposal=details.card.proposal.id.clone()>
            <ProposalSummary card=details.card.clone()/>
            <StateMachine current=status/>
            {conversation.map(|id| view! {
                <p class="small">"From conversation " <a href=format!("/chat?conversation={id}")>{id.clone()}</a></p>
            })}
        </article>
        <div class="grid">
            <section class="card">
                <h2>"Receipt and verification"</h2>
                {match &details.receipt {
                    Some(r) => view! {
                        <dl class="receipt" data-testid="receipt">
                            <dt>"Provider"</dt><dd>{r.provider.clone()}</dd>
                            <dt>"Refund id"</dt><dd class="mono">{r.provider_refund_id.clone()}</dd>
                            <dt>"Amount"</dt><dd>{r.amount.display()}</dd>
                            <dt>"Provider status"</dt><dd>{r.status.clone()}</dd>
                            <dt>"Recorded"</dt><dd>{utc(r.recorded_at)}</dd>
                        </dl>
                    }.into_any(),
                    None => view! { <p class="muted">"No receipt yet."</p> }.into_any(),
                }}
                <p data-testid="verification">{verification_text(status)}</p>
            </section>
            <section class="card">
                <h2>"Decisions"</h2>
                {if details.decisions.is_empty() {
                    view! { <p class="muted">"Nobody has decided yet."</p> }.into_any()
                } else {
                    view! {
                        <ul>
                            {details.decisions.iter().map(|d| {
                                let what = match &d.approval.decision {
                                    Decision::Approve => "approved".to_owned(),
                                    Decision::Reject { reason } => format!("rejected: {reason}"),
                                };
                                view! {
                                    <li>
                                        <strong>{d.approver.clone()}</strong>
                                        {format!(" {what} at {}", utc(d.approval.decided_at))}
                                        <span class="muted small mono">{format!(" (digest shown {})", short_digest(&d.approval.action_digest_shown))}</span>
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }}
            </section>
        </div>
        <section class="card wide">
            <h2>"Timeline"</h2>
            <div class="table-scroll" tabindex="0" role="region" aria-label="Timeline">
            <table class="timeline" data-testid="timeline">
                <thead><tr><th>"When"</th><th>"Who"</th><th>"What"</th><th>"Details"</th><th>"State"</th></tr></thead>
                <tbody>
                    {details.timeline.iter().map(|e| view! {
                        <tr data-kind=e.kind.clone()>
                            <td>{utc_seconds(e.at)}</td>
                            <td>{e.actor.clone()}</td>
                            <td>{event_sentence(&e.kind)}</td>
                            <td class="small">{event_details(&e.payload)}</td>
                            <td>{match (&e.from_status, &e.to_status) {
                                (Some(from), Some(to)) => format!("{} → {}", status_words(from), status_words(to)),
                                (None, Some(to)) => status_words(to),
                                _ => String::new(),
                            }}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
        </section>
    }
}

/// For an approver or manager, when only a person can move the proposal on:
/// what they found at the payment provider. The server checks each claim
/// with the provider before recording it.
#[component]
fn ResolvePanel(id: String, why: String) -> impl IntoView {
    let (choice, set_choice) = signal(ResolveChoice::RefundConfirmed);
    let (refund_id, set_refund_id) = signal(String::new());
    let (note, set_note) = signal(String::new());
    let resolve = Action::new(
        move |(id, choice, refund_id, note): &(String, ResolveChoice, String, String)| {
            resolve_proposal(
                csrf_token(),
                id.clone(),
                *choice,
                refund_id.clone(),
                note.clone(),
            )
        },
    );
    let outcome = move || {
        resolve.value().get().map(|result| match result {
            Ok(done) => {
                let next = done.retry_id.map(|retry| view! {
                    " A new proposal waits for approval: " <a href=format!("/proposals/{retry}") data-testid="retry-link">{retry.clone()}</a>
                });
                view! {
                    <p class="notice" role="status" data-testid="resolve-result">
                        {format!("Resolved. The proposal is now: {}.", done.card.state.status().label())}
                        {next}
                    </p>
                }
                .into_any()
            }
            Err(error) => view! { <p class="error" role="alert" data-testid="resolve-error">{error.to_string()}</p> }.into_any(),
        })
    };
    let option = move |value: ResolveChoice, label: &'static str, hint: &'static str| {
        let input_id = format!("resolve-{value:?}").to_lowercase();
        view! {
            <div class="choice">
                <input type="radio" name="resolution" id=input_id.clone()
                    prop:checked=move || choice.get() == value
                    on:change=move |_| set_choice.set(value)/>
                <label for=input_id>{label}</label>
                <p class="muted small">{hint}</p>
            </div>
        }
    };
    let busy = move || resolve.pending().get();
    view! {
        <section class="card wide resolve" data-testid="resolve" aria-labelledby="resolve-heading">
            <h2 id="resolve-heading">"A person is needed"</h2>
            <p data-testid="resolve-why">{why}</p>
            <form on:submit=move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                resolve.dispatch((id.clone(), choice.get_untracked(), refund_id.get_untracked(), note.get_untracked()));
            }>
                <fieldset>
                    <legend>"What did you find at the payment provider?"</legend>
                    {option(ResolveChoice::RefundConfirmed, "The refund exists", "Name the provider's refund id; it is checked with the provider and booked on the order.")}
                    {option(ResolveChoice::NoRefundRetry, "No refund exists: send it again", "Checked with the provider. A new proposal (a new idempotency key) waits for a fresh approval.")}
                    {option(ResolveChoice::NoRefund, "No refund exists: stop here", "Checked with the provider. Nothing more is sent.")}
                    {option(ResolveChoice::Closed, "Close without a refund", "For example when the customer was refunded another way.")}
                </fieldset>
                <Show when=move || choice.get() == ResolveChoice::RefundConfirmed>
                    <label for="resolve-refund-id">"Provider refund id"</label>
                    <input id="resolve-refund-id" class="mono" required autocomplete="off" placeholder="re_…"
                        prop:value=refund_id on:input=move |ev| set_refund_id.set(event_target_value(&ev))/>
                </Show>
                <label for="resolve-note">"What you checked (kept in the journal)"</label>
                <textarea id="resolve-note" required maxlength="2000"
                    prop:value=note on:input=move |ev| set_note.set(event_target_value(&ev))></textarea>
                <div class="row">
                    <button type="submit" data-testid="resolve-submit" disabled=busy>"Record resolution"</button>
                </div>
            </form>
            {outcome}
        </section>
    }
}

fn verification_text(status: ProposalStatus) -> &'static str {
    match status {
        ProposalStatus::Verified => {
            "Verified: the provider lists exactly one refund under this proposal's key, for the approved amount."
        }
        ProposalStatus::Succeeded => {
            "The provider confirmed the refund; verification is in progress."
        }
        ProposalStatus::OutcomeUnknown => {
            "The provider's answer was lost; we are asking it what happened. Nothing is assumed failed."
        }
        ProposalStatus::NeedsAttention => {
            "Verification needs a person: see the timeline for what did not match."
        }
        _ => "Not executed.",
    }
}
