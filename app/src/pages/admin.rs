//! `/admin`: users and roles, approver limits, the four-eyes threshold,
//! policy documents and the chat widget's sites.

use crate::admin::{
    AdminCreateUser, AdminDisableUser, AdminEnableUser, AdminImportPolicy, AdminSetLimit,
    AdminSetRoles, AdminSetThreshold, AdminState, admin_overview,
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
    let enable = ServerAction::<AdminEnableUser>::new();
    let set_roles = ServerAction::<AdminSetRoles>::new();
    let limit = ServerAction::<AdminSetLimit>::new();
    let threshold = ServerAction::<AdminSetThreshold>::new();
    let policy = ServerAction::<AdminImportPolicy>::new();
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
    // The policy being uploaded, kept by the page so a refresh of the
    // overview does not empty the form.
    let upload = PolicyUpload::default();
    Effect::new(move |_| {
        if let Some(Ok(_)) = policy.value().get() {
            upload.clear();
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
                                <thead><tr><th>"User"</th><th>"Name"</th><th>"Roles"</th><th>"Approval limit"</th><th>"State"</th></tr></thead>
                                <tbody>
                                    {o.users.iter().map(|u| view! {
                                        <tr>
                                            <td class="mono">{u.name.clone()}</td>
                                            <td>{u.display_name.clone()}</td>
                                            <td>{u.roles.to_string()}</td>
                                            <td>{limits_text(&o, u)}</td>
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
                                    <label for="limit-currency">"Currency"</label>
                                    <input id="limit-currency" name="currency" value="EUR" required maxlength="3" pattern="[A-Za-z]{3}" autocapitalize="characters"/>
                                    <label for="limit-amount">"Limit"</label>
                                    <input id="limit-amount" name="amount" placeholder="1000.00" required inputmode="decimal"/>
                                    <button type="submit">"Set limit"</button>
                                </ActionForm>
                                {outcome(limit)}
                            </section>
                            <section class="card">
                                <h2>"Four eyes"</h2>
                                <ul class="muted" data-testid="thresholds">
                                    {o.thresholds.iter().map(|t| view! {
                                        <li>"Refunds above " <strong>{t.display()}</strong> " need two different approvers."</li>
                                    }).collect_view()}
                                    <li>{format!("Other currencies: above {} minor units.", o.default_threshold_minor)}</li>
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
                            <section class="card" data-testid="roles-form">
                                <h2>"Change a user's roles"</h2>
                                <ActionForm action=set_roles>
                                    <CsrfField/>
                                    <label for="roles-name">"User name"</label>
                                    <input id="roles-name" name="name" required maxlength="64"/>
                                    <label for="roles-list">"Roles (comma-separated)"</label>
                                    <input id="roles-list" name="roles" placeholder="approver, manager" required/>
                                    <button type="submit">"Save roles"</button>
                                </ActionForm>
                                {outcome(set_roles)}
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
                            <section class="card">
                                <h2>"Enable a user"</h2>
                                <ActionForm action=enable>
                                    <CsrfField/>
                                    <label for="enable-name">"User name"</label>
                                    <input id="enable-name" name="name" required maxlength="64"/>
                                    <button type="submit">"Enable"</button>
                                </ActionForm>
                                {outcome(enable)}
                            </section>
                        </div>
                        <section class="card wide">
                            <h2>"Policy documents"</h2>
                            <ul data-testid="policies">
                                {o.policies.iter().map(|p| view! {
                                    <li data-policy=p.slug.clone()>
                                        <strong>{p.title.clone()}</strong>
                                        <span class="muted small">{format!(" ({}, version {}, since {})", p.slug, short_digest(&p.version), utc(p.created_at))}</span>
                                        {(!p.earlier.is_empty()).then(|| view! {
                                            <span class="muted small" data-testid="earlier-versions">
                                                {format!(" · earlier: {}", p.earlier.iter().map(|(v, at)| format!("{} (from {})", short_digest(v), utc(*at))).collect::<Vec<_>>().join(", "))}
                                            </span>
                                        })}
                                    </li>
                                }).collect_view()}
                            </ul>
                            <ActionForm action=policy>
                                <CsrfField/>
                                <label for="policy-file">"Markdown file (fills the fields below)"</label>
                                <input id="policy-file" type="file" accept=".md,.markdown,.txt,text/markdown,text/plain" on:change=move |ev| upload.read_file(ev)/>
                                <label for="policy-slug">"Slug"</label>
                                <input id="policy-slug" name="slug" placeholder="returns-policy" required maxlength="128"
                                    prop:value=upload.slug on:input=move |ev| upload.slug.set(event_target_value(&ev))/>
                                <label for="policy-title">"Title"</label>
                                <input id="policy-title" name="title" required maxlength="300"
                                    prop:value=upload.title on:input=move |ev| upload.title.set(event_target_value(&ev))/>
                                <label for="policy-body">"Markdown (## headings become citable sections)"</label>
                                <textarea id="policy-body" name="body" required rows="10"
                                    prop:value=upload.body on:input=move |ev| upload.body.set(event_target_value(&ev))></textarea>
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

/// What an approver may approve: the limits set for them, or the default.
fn limits_text(state: &AdminState, user: &crate::admin::AdminUser) -> String {
    if !user.roles.contains(domain::Role::Approver) {
        return String::new();
    }
    if user.limits.is_empty() {
        return match state.default_limit_minor {
            Some(minor) => format!("default ({minor} minor units)"),
            None => "no limit".to_owned(),
        };
    }
    user.limits
        .iter()
        .map(domain::Money::display)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The policy form's fields. A chosen file fills them: the text, the slug
/// from the file name and the title from its first heading (each only if
/// still empty, so an admin's typing wins).
#[derive(Clone, Copy, Default)]
struct PolicyUpload {
    slug: RwSignal<String>,
    title: RwSignal<String>,
    body: RwSignal<String>,
}

impl PolicyUpload {
    fn clear(self) {
        self.slug.set(String::new());
        self.title.set(String::new());
        self.body.set(String::new());
    }

    fn read_file(self, ev: leptos::ev::Event) {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let Some(file) = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                .and_then(|input| input.files())
                .and_then(|files| files.get(0))
            else {
                return;
            };
            let name = file.name();
            leptos::task::spawn_local(async move {
                let Ok(text) = wasm_bindgen_futures::JsFuture::from(file.text()).await else {
                    return;
                };
                let Some(text) = text.as_string() else {
                    return;
                };
                if self.slug.get_untracked().is_empty() {
                    self.slug.set(slug_of(&name));
                }
                if self.title.get_untracked().is_empty()
                    && let Some(heading) = text.lines().find_map(|l| l.strip_prefix("# "))
                {
                    self.title.set(heading.trim().to_owned());
                }
                self.body.set(text);
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (self, ev);
    }
}

/// `Returns Policy.md` → `returns-policy`.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn slug_of(file_name: &str) -> String {
    let stem = file_name
        .rsplit_once('.')
        .map_or(file_name, |(stem, _)| stem);
    stem.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::slug_of;

    #[test]
    fn a_policy_file_name_becomes_its_slug() {
        assert_eq!(slug_of("Returns Policy.md"), "returns-policy");
        assert_eq!(slug_of("shipping_terms.v2.markdown"), "shipping-terms-v2");
        assert_eq!(slug_of("faq"), "faq");
    }
}
