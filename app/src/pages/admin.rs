//! `/admin`: users and roles, approver limits, the four-eyes threshold,
//! policy documents and the chat widget's sites.

use crate::admin::{
    AdminCreateUser, AdminDisableUser, AdminImportPolicy, AdminSetLimit, AdminSetThreshold,
    admin_overview,
};
use crate::csrf::CsrfField;
use crate::format::{short_digest, utc};
use crate::pages::admin_widget::WidgetSites;
use leptos::form::ActionForm;
use leptos::prelude::*;

/// Shows an action's outcome (or its error) below its form.
pub(crate) fn outcome<T>(action: ServerAction<T>) -> impl IntoView
where
    T: leptos::server_fn::ServerFn<Output = String, Error = crate::error::AppError>
        + Clone
        + Send
        + Sync
        + 'static,
{
    move || {
        action.value().get().map(|result| match result {
            Ok(message) => view! { <p class="notice" role="status">{message}</p> }.into_any(),
            Err(error) => {
                view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any()
            }
        })
    }
}

#[component]
pub fn AdminPage() -> impl IntoView {
    let create = ServerAction::<AdminCreateUser>::new();
    let disable = ServerAction::<AdminDisableUser>::new();
    let limit = ServerAction::<AdminSetLimit>::new();
    let threshold = ServerAction::<AdminSetThreshold>::new();
    let policy = ServerAction::<AdminImportPolicy>::new();
    let version = move || {
        (
            create.version().get(),
            disable.version().get(),
            limit.version().get(),
            threshold.version().get(),
            policy.version().get(),
        )
    };
    let overview = Resource::new(version, |_| admin_overview());
    view! {
        <h1>"Administration"</h1>
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match overview.await {
                    Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                    Ok(o) => view! {
                        <section class="card wide">
                            <h2>"Users and roles"</h2>
                            <div class="table-scroll">
                            <table data-testid="users">
                                <thead><tr><th>"User"</th><th>"Name"</th><th>"Roles"</th><th>"Approval limit"</th><th>"State"</th></tr></thead>
                                <tbody>
                                    {o.users.iter().map(|u| view! {
                                        <tr>
                                            <td class="mono">{u.name.clone()}</td>
                                            <td>{u.display_name.clone()}</td>
                                            <td>{u.roles.to_string()}</td>
                                            <td>{u.limits.iter().map(|(_, m)| m.display()).collect::<Vec<_>>().join(", ")}</td>
                                            <td>{if u.disabled { "disabled" } else { "active" }}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            </div>
                        </section>
                        <div class="grid">
                            <section class="card">
                                <h2>"Approver limit"</h2>
                                <ActionForm action=limit>
                                    <CsrfField/>
                                    <label for="limit-user">"Approver"</label>
                                    <select id="limit-user" name="user_id">
                                        {o.users.iter().filter(|u| u.roles.contains(domain::Role::Approver)).map(|u| view! {
                                            <option value=u.id.clone()>{u.name.clone()}</option>
                                        }).collect_view()}
                                    </select>
                                    <input type="hidden" name="currency" value="EUR"/>
                                    <label for="limit-amount">"Limit (EUR)"</label>
                                    <input id="limit-amount" name="amount" placeholder="1000.00" required inputmode="decimal"/>
                                    <button type="submit">"Set limit"</button>
                                </ActionForm>
                                {outcome(limit)}
                            </section>
                            <section class="card">
                                <h2>"Four eyes"</h2>
                                <p class="muted">"Refunds above " <strong>{o.eur_threshold.display()}</strong> " need two different approvers."</p>
                                <ActionForm action=threshold>
                                    <CsrfField/>
                                    <input type="hidden" name="currency" value="EUR"/>
                                    <label for="threshold-amount">"Threshold (EUR)"</label>
                                    <input id="threshold-amount" name="amount" placeholder="500.00" required inputmode="decimal"/>
                                    <button type="submit">"Set threshold"</button>
                                </ActionForm>
                                {outcome(threshold)}
                            </section>
                            <section class="card">
                                <h2>"Add a user"</h2>
                                <ActionForm action=create>
                                    <CsrfField/>
                                    <label for="new-name">"User name"</label>
                                    <input id="new-name" name="name" required maxlength="64"/>
                                    <label for="new-display">"Display name"</label>
                                    <input id="new-display" name="display_name" maxlength="200"/>
                                    <label for="new-password">"Password (8+ characters)"</label>
                                    <input id="new-password" name="password" type="password" required minlength="8" autocomplete="new-password"/>
                                    <label for="new-roles">"Roles (comma-separated)"</label>
                                    <input id="new-roles" name="roles" placeholder="approver" required/>
                                    <button type="submit">"Create user"</button>
                                </ActionForm>
                                {outcome(create)}
                            </section>
                            <section class="card">
                                <h2>"Disable a user"</h2>
                                <ActionForm action=disable>
                                    <CsrfField/>
                                    <label for="disable-name">"User name"</label>
                                    <input id="disable-name" name="name" required maxlength="64"/>
                                    <button type="submit" class="danger">"Disable and sign out everywhere"</button>
                                </ActionForm>
                                {outcome(disable)}
                            </section>
                        </div>
                        <section class="card wide">
                            <h2>"Policy documents"</h2>
                            <ul>
                                {o.policies.iter().map(|p| view! {
                                    <li>
                                        <strong>{p.title.clone()}</strong>
                                        <span class="muted small">{format!(" ({}, version {}, since {})", p.slug, short_digest(&p.version), utc(p.created_at))}</span>
                                    </li>
                                }).collect_view()}
                            </ul>
                            <ActionForm action=policy>
                                <CsrfField/>
                                <label for="policy-slug">"Slug"</label>
                                <input id="policy-slug" name="slug" placeholder="returns-policy" required maxlength="128"/>
                                <label for="policy-title">"Title"</label>
                                <input id="policy-title" name="title" required maxlength="300"/>
                                <label for="policy-body">"Markdown (## headings become citable sections)"</label>
                                <textarea id="policy-body" name="body" required rows="10"></textarea>
                                <button type="submit">"Upload as new version"</button>
                            </ActionForm>
                            {outcome(policy)}
                        </section>
                    }.into_any(),
                }
            })}
        </Transition>
        <WidgetSites/>
    }
}
