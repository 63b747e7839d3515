//! `/audit`: the journal for managers, with filters in the URL (so a view can
//! be linked and works before hydration), paging, CSV export and the
//! hash-chain status.

use crate::audit::{AuditQuery, PER_PAGE, SETTINGS_CHANGES, audit_chain_status, audit_events};
use crate::event_words::{actor_words, event_sentence, status_words};
use crate::format::{event_details, percent_encode, pretty_json, setting_details, utc_seconds};
use domain::SettingKind;
use domain::proposal::event;
use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

#[component]
pub fn AuditPage() -> impl IntoView {
    let params = use_query_map();
    let query = move || {
        let map = params.read();
        let get = |key: &str| map.get(key).unwrap_or_default();
        AuditQuery {
            order: get("order"),
            proposal: get("proposal"),
            user: get("user"),
            action: get("action"),
            from: get("from"),
            until: get("until"),
        }
    };
    let page = move || {
        params
            .read()
            .get("page")
            .and_then(|p| p.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let events = Resource::new(move || (query(), page()), |(q, p)| audit_events(q, p));
    let chain = Resource::new(|| (), |_| audit_chain_status());
    let export = move || {
        let q = query();
        let pairs = [
            ("order", q.order),
            ("proposal", q.proposal),
            ("user", q.user),
            ("action", q.action),
            ("from", q.from),
            ("until", q.until),
        ];
        let encoded: Vec<String> = pairs
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}={}", percent_encode(v)))
            .collect();
        format!("/api/v1/audit/events.csv?{}", encoded.join("&"))
    };
    let action = move || params.read().get("action").unwrap_or_default();
    let field = move |name: &'static str, label: &'static str, kind: &'static str| {
        let value = move || params.read().get(name).unwrap_or_default();
        view! {
            <label>{label}<input type=kind name=name prop:value=value maxlength="200"/></label>
        }
    };
    view! {
        <section class="card wide">
            <header class="row">
                <h1>"Audit trail"</h1>
                <Suspense fallback=|| view! { <span class="status">"Checking the chain…"</span> }>
                    {move || Suspend::new(async move {
                        match chain.await {
                            Ok(status) => view! {
                                <span class=if status.intact { "status verified" } else { "status failed" }
                                    role=(!status.intact).then_some("alert")
                                    data-testid="chain-status" data-intact=status.intact.to_string()>
                                    {status.message}
                                </span>
                            }.into_any(),
                            Err(error) => view! { <span class="error" role="alert">{error.to_string()}</span> }.into_any(),
                        }
                    })}
                </Suspense>
            </header>
            <Form method="GET" action="/audit" attr:class="filters">
                {field("order", "Order", "text")}
                {field("proposal", "Proposal", "text")}
                {field("user", "Who", "text")}
                <label>"Action"
                    <select name="action">
                        <option value="" selected=move || action().is_empty()>"Any"</option>
                        <optgroup label="Refunds">
                            {event::ALL.iter().map(|kind| view! {
                                <option value=*kind selected=move || action() == *kind>{event_sentence(kind)}</option>
                            }).collect_view()}
                        </optgroup>
                        <optgroup label="Settings">
                            <option value=SETTINGS_CHANGES selected=move || action() == SETTINGS_CHANGES>"all settings changes"</option>
                            {SettingKind::ALL.iter().map(|kind| {
                                let kind = kind.as_str();
                                view! {
                                    <option value=kind selected=move || action() == kind>{event_sentence(kind)}</option>
                                }
                            }).collect_view()}
                        </optgroup>
                    </select>
                </label>
                {field("from", "From", "date")}
                {field("until", "Until", "date")}
                <button type="submit">"Filter"</button>
                <a class="button secondary" href="/audit">"Clear"</a>
                <a class="button secondary" href=export data-testid="export-csv" download>"Export CSV"</a>
            </Form>
        </section>
        <section class="card wide audit-trail">
            <Transition fallback=|| view! { <p class="muted">"Loading events…"</p> }>
                {move || Suspend::new(async move {
                    match events.await {
                        Ok(result) => {
                            let pages = result.total.div_ceil(PER_PAGE).max(1);
                            let current = result.page;
                            let link = move |p: u64| {
                                let mut pairs: Vec<(String, String)> = params.read().clone().into_iter().filter(|(k, _)| k != "page").map(|(k, v)| (k.into_owned(), v)).collect();
                                pairs.push(("page".into(), p.to_string()));
                                let q: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={}", percent_encode(v))).collect();
                                format!("/audit?{}", q.join("&"))
                            };
                            if result.total == 0 {
                                return view! {
                                    <p class="muted" data-testid="audit-empty">"No events match these filters."</p>
                                }.into_any();
                            }
                            view! {
                                <p class="muted" data-testid="audit-total">{format!("{} events", result.total)}</p>
                                <div class="table-scroll" tabindex="0" role="region" aria-label="Audit events">
                                <table data-testid="audit-table">
                                    <thead><tr><th>"#"</th><th>"When (UTC)"</th><th>"Who"</th><th>"Action"</th><th>"Proposal"</th><th>"Order"</th><th>"State"</th><th>"Details"</th></tr></thead>
                                    <tbody>
                                        {result.rows.into_iter().map(|r| {
                                            let details = setting_details(&r.kind, &r.payload)
                                                .unwrap_or_else(|| event_details(&r.payload));
                                            let kind = r.kind.clone();
                                            view! {
                                            <tr data-kind=kind>
                                                <td>{r.seq}</td>
                                                <td class="nowrap">{utc_seconds(r.at)}</td>
                                                <td>{actor_words(&r.actor, r.actor_name.as_deref())}</td>
                                                <td>{event_sentence(&r.kind)}</td>
                                                <td>{r.proposal_id.map(|id| view! { <a href=format!("/proposals/{id}")>{id.clone()}</a> })}</td>
                                                <td>{r.order_id}</td>
                                                <td>{match (r.from_status, r.to_status) {
                                                    (Some(f), Some(t)) => format!("{} → {}", status_words(&f), status_words(&t)),
                                                    (None, Some(t)) => status_words(&t),
                                                    _ => String::new(),
                                                }}</td>
                                                <td class="small details-cell">
                                                    {details}
                                                    <details><summary>"Full record"</summary><pre class="json">{pretty_json(&r.payload)}</pre></details>
                                                </td>
                                            </tr>
                                            }
                                        }).collect_view()}
                                    </tbody>
                                </table>
                                </div>
                                <nav class="row" aria-label="Pages">
                                    {(current > 0).then(|| view! { <a href=link(current - 1)>"← Newer page"</a> })}
                                    <span class="muted">{format!("Page {} of {pages}", current + 1)}</span>
                                    {(current + 1 < pages).then(|| view! { <a href=link(current + 1)>"Next page →"</a> })}
                                </nav>
                            }.into_any()
                        }
                        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}
