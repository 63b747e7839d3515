//! The agent-groups section of `/admin` (see `crate::gateway_admin`).

use crate::format::utc;
use crate::gateway_admin::{GatewayInfo, GatewayTaskRow, admin_gateway};
use leptos::prelude::*;

fn tasks_table(
    caption: &'static str,
    peer: &'static str,
    rows: Vec<GatewayTaskRow>,
    testid: &'static str,
) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" data-testid=testid>{format!("{caption}: none yet.")}</p> }
            .into_any();
    }
    view! {
        <table data-testid=testid>
            <caption>{caption}</caption>
            <thead><tr><th>"When"</th><th>{peer}</th><th>"Kind"</th><th>"State"</th><th>"Route"</th><th>"Depth"</th><th>"Spent"</th><th>"Task key"</th><th>"Note"</th></tr></thead>
            <tbody>
                {rows.into_iter().map(|row| {
                    let state = row.state.clone();
                    view! {
                    <tr data-task=row.id.clone() data-state=state>
                        <td>{utc(row.at)}</td>
                        <td>{row.peer}</td>
                        <td><code>{row.kind}</code></td>
                        <td>{row.state}</td>
                        <td>{row.route}</td>
                        <td>{row.depth}</td>
                        <td>{row.spent.unwrap_or_else(|| "—".to_owned())}</td>
                        <td><code class="small">{row.task_key}</code></td>
                        <td>{row.note.unwrap_or_default()}</td>
                    </tr>
                }}).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

fn overview(info: GatewayInfo) -> impl IntoView {
    let Some(group) = info.group.clone() else {
        return view! {
            <p class="muted">"The gateway is off here: set COUNTERSIGN_GATEWAY_GROUP to let other agent groups send this one tasks."</p>
        }
        .into_any();
    };
    view! {
        <p>"This agent group: " <strong data-testid="gateway-group">{group}</strong></p>
        <h3>"Peers"</h3>
        {if info.peers.is_empty() {
            view! { <p class="muted">"No peer's address is set (countersign gateway peer)."</p> }.into_any()
        } else {
            view! { <ul class="plain">{info.peers.into_iter().map(|(group, url)| view! { <li>{group} " — " <code>{url}</code></li> }).collect_view()}</ul> }.into_any()
        }}
        <h3>"Pinned peer keys"</h3>
        <ul class="plain" data-testid="gateway-keys">
            {info.keys.into_iter().map(|(kid, until)| view! {
                <li><code>{kid}</code> " " {until.map_or_else(|| "current".to_owned(), |u| format!("verifies until {}", utc(u)))}</li>
            }).collect_view()}
        </ul>
        <h3>"Allowed pairs"</h3>
        <ul class="plain" data-testid="gateway-pairs">
            {info.pairs.into_iter().map(|pair| view! { <li>{pair}</li> }).collect_view()}
        </ul>
        {tasks_table("Tasks received", "From", info.inbound, "gateway-inbound")}
        {tasks_table("Tasks sent", "To", info.outbound, "gateway-outbound")}
        <h3>"Refused tasks"</h3>
        {if info.refusals.is_empty() {
            view! { <p class="muted" data-testid="gateway-refusals">"None refused lately."</p> }.into_any()
        } else {
            view! {
                <ul class="plain" data-testid="gateway-refusals">
                    {info.refusals.into_iter().map(|refusal| {
                        let code = refusal.code.clone();
                        view! {
                        <li data-code=code>
                            <strong>{refusal.code}</strong> " · " {utc(refusal.at)} " · from "
                            {refusal.claimed_from.unwrap_or_else(|| "?".to_owned())} " · "
                            <code>{refusal.claimed_kind.unwrap_or_default()}</code>
                            <p>{refusal.reason}</p>
                        </li>
                    }}).collect_view()}
                </ul>
            }.into_any()
        }}
    }
    .into_any()
}

/// The gateway: who this group trusts and talks to, and what crossed it.
#[component]
pub fn GatewayOverview() -> impl IntoView {
    let info = Resource::new(|| (), |()| admin_gateway());
    view! {
        <section class="card wide" data-testid="gateway-admin">
            <h2>"Agent groups (gateway)"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match info.await {
                        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                        Ok(info) => overview(info).into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}
