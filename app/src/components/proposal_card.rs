//! A proposal as a reviewer sees it: what would execute, why (evidence with
//! the quoted passages), what is still unknown, and until when.

use crate::clock::use_clock;
use crate::components::order_card::OrderCard;
use crate::format::{countdown, due_soon, short_digest, utc};
use crate::proposals::ProposalCard;
use domain::proposal::{
    AnsweredIn, CheckLevel, EvidenceKind, PreDecisionCheck, ProposalState, ProposalStatus,
};
use leptos::prelude::*;

#[component]
pub fn StatusBadge(state: ProposalState) -> impl IntoView {
    let status = state.status();
    view! {
        <span class=format!("status {}", status.as_str()) data-testid="status" data-status=status.as_str()>
            {status.label()}
        </span>
    }
}

#[component]
pub fn ProposalSummary(card: ProposalCard, #[prop(optional)] link: bool) -> impl IntoView {
    let p = card.proposal.clone();
    let title = format!("Refund {} for order {}", p.amount.display(), p.order_id);
    let href = format!("/proposals/{}", p.id);
    let pending = card.state.status() == ProposalStatus::AwaitingApproval;
    let expiry = pending.then(|| view! { " · " <Expiry at=p.expires_at/> });
    let approvals = approvals_line(&card);
    view! {
        <header class="row">
            <h3>
                {if link {
                    view! { <a href=href>{title.clone()}</a> }.into_any()
                } else {
                    view! { <span>{title.clone()}</span> }.into_any()
                }}
            </h3>
            <StatusBadge state=card.state.clone()/>
        </header>
        <p class="muted small">
            "Customer " <strong>{card.customer.clone()}</strong>
            " · proposed by " <span data-testid="proposing-agent">{p.provenance.agent.clone()}</span>
            {p.provenance.submitted_by.clone().map(|submitter| view! {
                ", submitted by " <strong data-testid="submitted-by">{submitter.name}</strong>
            })}
            {expiry}
            {approvals}
        </p>
        <DecisionChecks checks=card.checks.clone()/>
        {order_changed(&card).map(|version| view! {
            <p class="warning" data-testid="order-changed">
                {format!("The order changed since this was proposed (now version {version}): compare it below before deciding.")}
            </p>
        })}
        {(!card.other_live.is_empty()).then(|| view! {
            <p class="warning" data-testid="other-live">
                {format!("Order {} has {} in flight as well: ", p.order_id, if card.other_live.len() == 1 { "another proposal".to_owned() } else { format!("{} other proposals", card.other_live.len()) })}
                {card.other_live.iter().map(|id| view! { <a href=format!("/proposals/{id}") class="mono">{id.clone()}</a>" " }).collect_view()}
                "— approving both could refund the order twice; at most what is left is ever paid out."
            </p>
        })}
        <p class="recommendation">{p.recommendation.clone()}</p>
        <details class="evidence">
            <summary>{format!("Evidence ({} citations)", p.evidence.len())}</summary>
            <ul>
                {p.evidence.iter().map(|e| {
                    let kind = match e.kind { EvidenceKind::Order => "order record", EvidenceKind::Policy => "policy", EvidenceKind::PeerAnswer => "signed answer", EvidenceKind::BrowserCapture => "page read in the browser", EvidenceKind::Other => "other" };
                    let screenshot = e.reference.strip_prefix("browser-check:").map(|id| format!("/api/v1/browser-checks/{id}/screenshot"));
                    view! {
                        <li data-reference=e.reference.clone()>
                            <strong>{e.title.clone()}</strong>
                            {e.section.clone().map(|s| format!(" — {s}"))}
                            <span class="muted small">{format!(" ({kind} {}, version {})", e.reference, short_digest(&e.version))}</span>
                            <blockquote>{e.quote.clone()}</blockquote>
                            {screenshot.map(|href| view! {
                                <a href=href target="_blank" rel="noopener" data-testid="evidence-screenshot">"Screenshot of the page as it was read"</a>
                            })}
                        </li>
                    }
                }).collect_view()}
            </ul>
            <OrderNow card=card.clone()/>
        </details>
        {(!p.open_questions.is_empty()).then(|| view! {
            <div class="open-questions">
                <strong>"Open questions"</strong>
                <ul>
                    {p.open_questions.iter().map(|q| view! {
                        <li data-testid="open-question">
                            {q.question.clone()} " — "
                            {match q.answer.clone() {
                                Some(answer) => view! {
                                    "answered: " <q data-testid="answer">{answer}</q>
                                    {q.answered_in.clone().map(|source| view! { " " <AnswerSource source/> })}
                                }.into_any(),
                                None => view! { "unknown" }.into_any(),
                            }}
                        </li>
                    }).collect_view()}
                </ul>
            </div>
        })}
        <p class="muted small mono" title="SHA-256 of exactly what would execute">
            "Proposal " {p.id.clone()} " · action digest " {short_digest(&p.action_digest)}
        </p>
    }
}

/// Where an answer was given: a link to the customer's message in the
/// conversation (staff and the customer may read it), with when it was sent.
#[component]
fn AnswerSource(source: AnsweredIn) -> impl IntoView {
    let href = format!(
        "/chat?conversation={}#{}",
        source.conversation_id,
        source.anchor()
    );
    let when = source
        .at
        .map(|at| format!(", sent {}", utc(at)))
        .unwrap_or_default();
    view! {
        <span class="muted small">
            "(" <a href=href data-testid="answer-link">
                {format!("the customer's message in the chat{when}")}
            </a> ")"
        </span>
    }
}

/// The proposal's deadline, counting down; highlighted in its last hour.
#[component]
fn Expiry(at: domain::Timestamp) -> impl IntoView {
    let now = use_clock();
    view! {
        <time datetime=at.to_rfc3339() title=utc(at) data-testid="expiry"
            class=move || if due_soon(at, now.get()) { "expiry soon" } else { "expiry" }>
            {move || format!("expires {}", countdown(at, now.get()))}
        </time>
    }
}

/// Where a proposal stands with its approvers, when that is worth saying:
/// four eyes needed, or approvals already given.
fn approvals_line(card: &ProposalCard) -> Option<impl IntoView + use<>> {
    let given = card.state.approvals().len();
    let required = usize::from(card.approvals_required);
    let text = if required > 1 && card.state.status() == ProposalStatus::AwaitingApproval {
        format!("needs {required} different approvers, {given} so far")
    } else if given > 0 {
        format!("approved by {given}")
    } else {
        return None;
    };
    Some(view! { " · " <span data-testid="approvals">{text}</span> })
}

/// The approver's checklist before deciding: hard failures first (the
/// engine would refuse them), then what needs judgement, then what holds.
#[component]
fn DecisionChecks(checks: Vec<PreDecisionCheck>) -> impl IntoView {
    if checks.is_empty() {
        return ().into_any();
    }
    let mut checks = checks;
    checks.sort_by_key(|c| std::cmp::Reverse(c.level));
    view! {
        <section class="checks" aria-label="Checks before deciding" data-testid="checks">
            <h4>"Checked before you decide"</h4>
            <ul>
                {checks.into_iter().map(|c| {
                    let (class, mark, level) = match c.level {
                        CheckLevel::Blocking => ("check blocking", "✗", "blocking"),
                        CheckLevel::Warning => ("check warning", "!", "warning"),
                        CheckLevel::Passed => ("check passed", "✓", "passed"),
                    };
                    view! {
                        <li class=class data-check=c.kind.as_str() data-level=level>
                            <span class="mark" aria-hidden="true">{mark}</span>
                            <span class="sr-only">{format!("{level}: ")}</span>
                            {c.message}
                        </li>
                    }
                }).collect_view()}
            </ul>
        </section>
    }
    .into_any()
}

/// The order's version now, when it differs from the one the proposal
/// cites, while that can still matter: once decided or executed, the
/// proposal's outcome already took the order as it was.
fn order_changed(card: &ProposalCard) -> Option<i64> {
    if card.state.status() != ProposalStatus::AwaitingApproval {
        return None;
    }
    let order = card.order.as_ref()?;
    let cited = card
        .proposal
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::Order)?;
    (cited.version != order.version.to_string()).then_some(order.version)
}

/// The order as it is now, to compare with what the proposal cites.
#[component]
fn OrderNow(card: ProposalCard) -> impl IntoView {
    match card.order {
        None => view! {
            <p class="error" data-testid="order-now">"This order no longer exists."</p>
        }
        .into_any(),
        Some(order) => {
            let refundable = order.refundable().map(|m| m.display()).ok();
            view! {
                <div class="order-now" data-testid="order-now">
                    <strong>{format!("The order now (version {})", order.version)}</strong>
                    {refundable.map(|amount| view! { <p class="muted small">"Still refundable: " {amount}</p> })}
                    <OrderCard order/>
                </div>
            }
            .into_any()
        }
    }
}
