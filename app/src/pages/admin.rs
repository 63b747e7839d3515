//! `/admin`: users and roles, approver limits, the four-eyes threshold,
//! policy documents and the chat widget's sites.

use crate::admin::{
    AdminCreateUser, AdminDisableUser, AdminEnableUser, AdminSetLimit, AdminSetRoles,
    AdminSetThreshold, AdminState, AdminUser, admin_overview,
};
use crate::admin_policy::AdminPublishPolicy;
use crate::csrf::CsrfField;
use crate::pages::admin_gateway::GatewayOverview;
use crate::pages::admin_policy::{PolicyDraft, PolicyEditor};
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
    let enable = ServerAction::<AdminEnableUser>::new();
    let set_roles = ServerAction::<AdminSetRoles>::new();
    let limit = ServerAction::<AdminSetLimit>::new();
    let threshold = ServerAction::<AdminSetThreshold>::new();
    let policy = ServerAction::<AdminPublishPolicy>::new();
    let version = move || {
        (
            create.version().get(),
            disable.version().get(),
            enable.version().get(),
            set_roles.version().get(),
            limit.version().get(),
            threshold.version().get(),
            policy.version().get(),
        )
    };
    let overview = Resource::new(version, |_| admin_overview());
    let draft = PolicyDraft::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = policy.value().get() {
            draft.published();
        }
    });
    view! {
        <h1>"Administration"</h1>
        <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match overview.await {
                    Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                    Ok(o) => view! {
                        <section class="card wide">
                            <h2>"Users and roles"</h2>
                            <div class="table-scroll" tabindex="0" role="region" aria-label="Users and roles">
                            <table data-testid="users">
                                <thead><tr><th>"User"</th><th>"Name"</th><th>"Roles"</th><th>"Approval limit"</th><th>"State"</th><th>"Actions"</th></tr></thead>
                                <tbody>
                                    {o.users.iter().map(|u| view! {
                                        <tr data-user=u.name.clone()>
                                            <td class="mono">{u.name.clone()}</td>
                                            <td>{u.display_name.clone()}</td>
                                            <td>{u.roles.to_string()}</td>
                                            <td>{limits_text(&o, u)}</td>
                                            <td>{if u.disabled { "disabled" } else { "active" }}</td>
                                            <td><UserActions user=u.clone() set_roles limit disable enable/></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            </div>
                            <div data-testid="user-action-outcome">
                                {outcome(set_roles)}{outcome(limit)}{outcome(disable)}{outcome(enable)}
                            </div>
                        </section>
                        <div class="grid">
                            <section class="card">
                                <h2>"Four eyes"</h2>
                                <ul class="muted" data-testid="thresholds">
                                    {o.thresholds.iter().map(|t| view! {
                                        <li>"Refunds above " <strong>{t.display()}</strong> " need two different approvers."</li>
                                    }).collect_view()}
                                    {default_threshold_text(&o).map(|text| view! { <li>{text}</li> })}
                                </ul>
                                <ActionForm action=threshold>
                                    <CsrfField/>
                                    <label for="threshold-currency">"Currency"</label>
                                    <input id="threshold-currency" name="currency" value="EUR" required maxlength="3" pattern="[A-Za-z]{3}" autocapitalize="characters"/>
                                    <label for="threshold-amount">"Threshold"</label>
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
                        </div>
                        <PolicyEditor policies=o.policies draft publish=policy/>
                    }.into_any(),
                }
            })}
        </Transition>
        <WidgetSites/>
        <GatewayOverview/>
    }
}

/// What an approver may approve: the limits set for them, or the default
/// in the currencies orders are in.
fn limits_text(state: &AdminState, user: &AdminUser) -> String {
    if !user.roles.contains(domain::Role::Approver) {
        return String::new();
    }
    if user.limits.is_empty() {
        return match state.default_limit_minor {
            Some(minor) => format!(
                "default: {}",
                in_currencies(minor, &state.currencies_in_use)
            ),
            None => "no limit".to_owned(),
        };
    }
    user.limits
        .iter()
        .map(domain::Money::display)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The four-eyes default for the currencies in use without a threshold of
/// their own; `None` when each has one.
fn default_threshold_text(state: &AdminState) -> Option<String> {
    let uncovered: Vec<domain::Currency> = state
        .currencies_in_use
        .iter()
        .filter(|c| !state.thresholds.iter().any(|t| t.currency == **c))
        .copied()
        .collect();
    if uncovered.is_empty() && !state.currencies_in_use.is_empty() {
        return None;
    }
    Some(format!(
        "Other currencies: refunds above {} need two different approvers.",
        in_currencies(state.default_threshold_minor, &uncovered)
    ))
}

/// A default kept in minor units, stated in each currency's own units
/// ("1000.00 EUR, 100000 JPY").
fn in_currencies(minor: i64, currencies: &[domain::Currency]) -> String {
    if currencies.is_empty() {
        return format!("{minor} in a currency's smallest unit");
    }
    currencies
        .iter()
        .map(|c| domain::Money::new(minor, *c).display())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What an admin can do to one account, from its row: change its roles,
/// set an approver's limit, disable it (after saying what that does) or
/// enable it again.
#[component]
fn UserActions(
    user: AdminUser,
    set_roles: ServerAction<AdminSetRoles>,
    limit: ServerAction<AdminSetLimit>,
    disable: ServerAction<AdminDisableUser>,
    enable: ServerAction<AdminEnableUser>,
) -> impl IntoView {
    let name = user.name.clone();
    let roles = user.roles.to_string();
    let limit_form = user.roles.contains(domain::Role::Approver).then(|| {
        let (id, name) = (user.id.clone(), name.clone());
        view! {
            <details>
                <summary>"Limit…"</summary>
                <ActionForm action=limit attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="user_id" value=id/>
                    <label>"Currency"
                        <input name="currency" value="EUR" required maxlength="3" pattern="[A-Za-z]{3}" autocapitalize="characters"
                            aria-label=format!("Limit currency for {name}")/>
                    </label>
                    <label>"Limit"
                        <input name="amount" placeholder="1000.00" required inputmode="decimal" aria-label=format!("Approval limit for {name}")/>
                    </label>
                    <button type="submit">"Set limit"</button>
                </ActionForm>
            </details>
        }
    });
    let disable_warning =
        format!("{name} is signed out everywhere and cannot sign in until enabled again.");
    let disable_label = format!("Disable {name}");
    let enable_label = format!("Enable {name}");
    let roles_label = format!("Roles for {name}");
    let state_name = name.clone();
    let state_form = if user.disabled {
        view! {
            <ActionForm action=enable attr:class="inline">
                <CsrfField/>
                <input type="hidden" name="name" value=state_name.clone()/>
                <button type="submit" aria-label=enable_label>"Enable"</button>
            </ActionForm>
        }
        .into_any()
    } else {
        view! {
            <details>
                <summary>"Disable…"</summary>
                <p class="small">{disable_warning}</p>
                <ActionForm action=disable attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="name" value=state_name.clone()/>
                    <button type="submit" class="danger">{disable_label}</button>
                </ActionForm>
            </details>
        }
        .into_any()
    };
    view! {
        <div class="row-actions">
            <details>
                <summary>"Roles…"</summary>
                <ActionForm action=set_roles attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="name" value=name.clone()/>
                    <label>"Roles (comma-separated)"
                        <input name="roles" value=roles required aria-label=roles_label/>
                    </label>
                    <button type="submit">"Save roles"</button>
                </ActionForm>
            </details>
            {limit_form}
            {state_form}
        </div>
    }
}
