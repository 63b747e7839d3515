//! `/ops`: background work for managers and admins. Each lane with what it
//! is for and how much waits in it, the schedules, the last journal check,
//! open alerts, and the items that need a person, with the actions their
//! state allows. It reads the view again whenever the server hints that
//! work finished or someone acted (and on every reconnect).

use crate::csrf::csrf_token;
use crate::error::AppError;
use crate::format::{countdown, utc_seconds};
use crate::ops::{
    AlertRow, AuditLine, LaneRow, OpsOverview as View, ScheduleRow, WorkAction, WorkRow,
    ops_acknowledge, ops_act, ops_view,
};
use leptos::prelude::*;

/// Ticks when the server hints that the operations view changed, and each
/// time the live connection (re)opens (hints may have been missed).
fn use_ops_changes() -> ReadSignal<u64> {
    let (tick, set_tick) = signal(0u64);
    #[cfg(feature = "hydrate")]
    connect(set_tick);
    #[cfg(not(feature = "hydrate"))]
    let _ = set_tick;
    tick
}

#[cfg(feature = "hydrate")]
fn connect(set_tick: WriteSignal<u64>) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    let Ok(source) = web_sys::EventSource::new("/api/live/ops") else {
        return;
    };
    let on_change = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |_| {
        set_tick.update(|n| *n += 1);
    });
    for kind in ["ops", "resync"] {
        let _ = source.add_event_listener_with_callback(kind, on_change.as_ref().unchecked_ref());
    }
    on_change.forget();
    let live = |state: &str| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-live", state);
        }
    };
    live("connecting");
    let on_open = Closure::<dyn Fn()>::new(move || {
        live("open");
        set_tick.update(|n| *n += 1);
    });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    let on_error = Closure::<dyn Fn()>::new(move || live("reconnecting"));
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    let source = send_wrapper::SendWrapper::new(source);
    on_cleanup(move || source.close());
}

/// What the page remembers between reads of the view: the open
/// confirmation, each item's refusal, and the last thing done.
#[derive(Clone, Copy)]
struct Desk {
    confirming: RwSignal<Option<(String, WorkAction)>>,
    refusals: RwSignal<Vec<(String, String)>>,
    done: RwSignal<Option<String>>,
    refresh: RwSignal<u64>,
}

impl Desk {
    fn refusal(self, id: &str) -> Option<String> {
        self.refusals.with(|all| {
            all.iter()
                .find(|(other, _)| other == id)
                .map(|(_, m)| m.clone())
        })
    }

    fn refuse(self, id: String, message: String) {
        self.refusals.update(|all| {
            all.retain(|(other, _)| *other != id);
            all.push((id, message));
        });
    }
}

#[component]
pub fn OpsPage() -> impl IntoView {
    let desk = Desk {
        confirming: RwSignal::new(None),
        refusals: RwSignal::new(Vec::new()),
        done: RwSignal::new(None),
        refresh: RwSignal::new(0),
    };
    provide_context(desk);
    let changes = use_ops_changes();
    let view = Resource::new(move || (changes.get(), desk.refresh.get()), |_| ops_view());
    view! {
        <section class="wide ops">
            <h1>"Operations"</h1>
            <p class="muted small">"Background work, its schedules and what needs a person. Times are UTC; the page updates by itself."</p>
            <p class="ops-done" role="status" aria-live="polite" data-testid="ops-done">{move || desk.done.get()}</p>
            <Transition fallback=|| view! { <p class="muted">"Loading background work…"</p> }>
                {move || Suspend::new(async move {
                    match view.await {
                        Ok(page) => shown(page).into_any(),
                        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

fn shown(page: View) -> impl IntoView {
    let now = page.now;
    view! {
        <AuditStatus audit=page.audit now/>
        <Alerts alerts=page.alerts/>
        <section class="card" aria-labelledby="ops-attention">
            <h2 id="ops-attention">"Needs attention"</h2>
            {if page.attention.is_empty() {
                view! { <p class="muted" data-testid="ops-attention-empty">"Nothing is running, retrying or dead-lettered."</p> }.into_any()
            } else {
                view! {
                    <ul class="ops-items" data-testid="ops-attention">
                        {page.attention.into_iter().map(|row| view! { <Item row now/> }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
        <section class="card" aria-labelledby="ops-lanes">
            <h2 id="ops-lanes">"Lanes"</h2>
            <div class="ops-lanes">
                {page.lanes.into_iter().map(|lane| lane_card(lane, now)).collect_view()}
            </div>
        </section>
        <section class="card" aria-labelledby="ops-schedules">
            <h2 id="ops-schedules">"Schedules"</h2>
            <ul class="ops-schedules" data-testid="ops-schedules">
                {page.schedules.into_iter().map(|s| schedule_line(s, now)).collect_view()}
            </ul>
        </section>
    }
}

#[component]
fn AuditStatus(audit: Option<AuditLine>, now: domain::Timestamp) -> impl IntoView {
    match audit {
        None => view! {
            <p class="ops-audit status" data-testid="ops-audit" data-intact="unknown">
                "Journal check: not run yet (it runs daily on the scheduled lane)."
            </p>
        }
        .into_any(),
        Some(line) if line.intact => view! {
            <p class="ops-audit status verified" data-testid="ops-audit" data-intact="true">
                <strong>"Journal check: intact. "</strong>
                {line.finding} " · " {utc_seconds(line.at)} " (" {countdown(line.at, now)} ")"
            </p>
        }
        .into_any(),
        Some(line) => view! {
            <p class="ops-audit status failed" role="alert" data-testid="ops-audit" data-intact="false">
                <strong>"Journal check: BROKEN. "</strong>
                {line.finding} " · " {utc_seconds(line.at)}
            </p>
        }
        .into_any(),
    }
}

#[component]
fn Alerts(alerts: Vec<AlertRow>) -> impl IntoView {
    let desk = expect_context::<Desk>();
    let acknowledge = Action::new(move |id: &String| {
        let call = ops_acknowledge(csrf_token(), id.clone());
        let id = id.clone();
        async move {
            match call.await {
                Ok(()) => desk.done.set(Some("Alert acknowledged.".to_owned())),
                Err(error) => desk.refuse(id, error.to_string()),
            }
            desk.refresh.update(|n| *n += 1);
        }
    });
    (!alerts.is_empty()).then(|| {
        view! {
            <section class="card" aria-labelledby="ops-alerts">
                <h2 id="ops-alerts">"Open alerts"</h2>
                <ul class="ops-alerts" data-testid="ops-alerts">
                    {alerts.into_iter().map(|alert| {
                        let id = alert.id.clone();
                        let refusal = {
                            let id = id.clone();
                            move || desk.refusal(&id).map(|m| view! { <p class="error" role="alert">{m}</p> })
                        };
                        let kind = alert.kind.clone();
                        view! {
                            <li class="ops-alert" data-kind=kind>
                                <p><strong>{alert.kind}</strong>
                                    {alert.subject.map(|s| format!(" · {s}"))}</p>
                                <p>{alert.message}</p>
                                <p class="muted small">"Raised " {utc_seconds(alert.raised_at)}
                                    {(alert.repeats > 0).then(|| format!(", again {} times, last {}", alert.repeats, utc_seconds(alert.last_raised_at)))}</p>
                                <button type="button" class="secondary" disabled=move || acknowledge.pending().get()
                                    on:click=move |_| { acknowledge.dispatch(id.clone()); }>"Acknowledge"</button>
                                {refusal}
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </section>
        }
    })
}

fn lane_card(lane: LaneRow, now: domain::Timestamp) -> impl IntoView {
    let count = |label: &'static str, value: u64, key: &'static str| {
        view! { <div><dt>{label}</dt><dd data-count=key>{value}</dd></div> }
    };
    view! {
        <article class="ops-lane" data-testid="ops-lane" data-lane=lane.name.clone()>
            <h3>{lane.name.clone()}</h3>
            <p class="small">{lane.purpose}</p>
            <p class="muted small">{format!("{} at a time · {} priority", lane.concurrency, lane.priority)}</p>
            <dl class="ops-counts">
                {count("Running", lane.running, "running")}
                {count("Queued", lane.queued, "queued")}
                {count("Scheduled", lane.scheduled, "scheduled")}
                {count("Retrying", lane.retrying, "retrying")}
                {count("Dead", lane.dead, "dead")}
            </dl>
            {lane.next_run.map(|at| view! { <p class="small">"Next run " {utc_seconds(at)} " (" {countdown(at, now)} ")"</p> })}
            {lane.oldest_due.map(|at| view! { <p class="small">"Oldest waiting since " {utc_seconds(at)} " (" {countdown(at, now)} ")"</p> })}
        </article>
    }
}

fn every(seconds: i64) -> String {
    match seconds {
        s if s % 86_400 == 0 && s > 0 => format!("every {} day(s)", s / 86_400),
        s if s % 3600 == 0 && s > 0 => format!("every {} h", s / 3600),
        s if s % 60 == 0 && s > 0 => format!("every {} min", s / 60),
        s => format!("every {s} s"),
    }
}

fn schedule_line(schedule: ScheduleRow, now: domain::Timestamp) -> impl IntoView {
    let kind = schedule.kind.clone();
    view! {
        <li class="ops-schedule" data-kind=kind>
            <p><strong class="mono">{schedule.kind}</strong> " · " {every(schedule.every_seconds)}
                {(schedule.state == "running").then_some(" · running now")}</p>
            <p class="small">"Next " {utc_seconds(schedule.next_run)} " (" {countdown(schedule.next_run, now)} ")"
                {schedule.last_run.map(|at| format!(" · last {}", utc_seconds(at)))}</p>
            {schedule.last_note.map(|note| view! { <p class="small muted">{note}</p> })}
            {schedule.last_error.map(|error| view! { <p class="small error">{error}</p> })}
        </li>
    }
}

/// One item needing attention, with the actions its state allows, each
/// confirmed with a sentence first.
#[component]
fn Item(row: WorkRow, now: domain::Timestamp) -> impl IntoView {
    let desk = expect_context::<Desk>();
    let act = Action::new(move |(id, action): &(String, WorkAction)| {
        let call = ops_act(csrf_token(), id.clone(), action.as_str().to_owned());
        let (id, action) = (id.clone(), *action);
        async move {
            let result: Result<WorkRow, AppError> = call.await;
            desk.confirming.set(None);
            match result {
                Ok(after) => {
                    desk.refusals
                        .update(|all| all.retain(|(other, _)| *other != id));
                    desk.done.set(Some(format!(
                        "{} {}: now {}.",
                        action.label(),
                        after.kind,
                        after.state
                    )));
                }
                Err(error) => desk.refuse(id, error.to_string()),
            }
            desk.refresh.update(|n| *n += 1);
        }
    });
    let id = row.id.clone();
    let subject = match (&row.proposal_id, &row.subject) {
        (Some(proposal), _) => {
            view! { <a href=format!("/proposals/{proposal}")>{proposal.clone()}</a> }.into_any()
        }
        (None, Some(subject)) => view! { <span>{subject.clone()}</span> }.into_any(),
        (None, None) => view! { <span class="muted">"—"</span> }.into_any(),
    };
    let actions: Vec<WorkAction> = row
        .actions
        .iter()
        .filter_map(|a| WorkAction::parse(a))
        .collect();
    let buttons = actions
        .iter()
        .map(|action| {
            let (id, action) = (id.clone(), *action);
            let class = if action == WorkAction::Retry {
                ""
            } else {
                "secondary"
            };
            view! {
                <button type="button" class=class data-action=action.as_str()
                    on:click=move |_| desk.confirming.set(Some((id.clone(), action)))>
                    {action.label()} "…"
                </button>
            }
        })
        .collect_view();
    let confirm = {
        let (id, row) = (id.clone(), row.clone());
        move || {
            let (open, action) = desk.confirming.get()?;
            (open == id).then(|| {
                let sentence = action.confirmation(&row);
                let id = id.clone();
                view! {
                    <div class="confirm" role="group" aria-label="Confirm">
                        <p data-testid="ops-confirm-sentence">{sentence}</p>
                        <div class="row">
                            <button type="button" data-testid="ops-confirm" class=if action == WorkAction::Retry { "" } else { "danger" }
                                disabled=move || act.pending().get()
                                on:click=move |_| { act.dispatch((id.clone(), action)); }>
                                {format!("Yes, {}", action.label().to_lowercase())}
                            </button>
                            <button type="button" class="secondary" on:click=move |_| desk.confirming.set(None)>"Keep it"</button>
                        </div>
                    </div>
                }
            })
        }
    };
    let refusal = {
        let id = id.clone();
        move || {
            desk.refusal(&id)
                .map(|m| view! { <p class="error" role="alert" data-testid="ops-refusal">{m}</p> })
        }
    };
    view! {
        <li class="ops-item" data-testid="ops-item" data-id=row.id.clone() data-state=row.state.clone() data-kind=row.kind.clone()>
            <p>
                <span class=format!("badge ops-state-{}", row.state)>{row.state.clone()}</span> " "
                <strong class="mono">{row.kind.clone()}</strong> " · " {subject}
            </p>
            <p class="small muted">
                {format!("{} lane · attempt {} of {}", row.lane, row.attempts, row.max_attempts)}
                {(row.state == "retrying").then(|| format!(" · next try {} ({})", utc_seconds(row.run_after), countdown(row.run_after, now)))}
                {format!(" · changed {}", utc_seconds(row.updated_at))}
            </p>
            {row.last_error.clone().map(|e| view! { <p class="small ops-error">"Last error: " {e}</p> })}
            {(!actions.is_empty()).then(|| view! { <div class="row">{buttons}</div> })}
            {confirm}
            {refusal}
        </li>
    }
}
