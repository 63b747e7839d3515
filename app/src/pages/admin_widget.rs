//! The widget section of `/admin`: registered host sites with the customers
//! each may sign in and their keys; registering a site, allowing and
//! disallowing customers, rotating and revoking keys, disabling a site.

use crate::components::copy_button::CopyButton;
use crate::csrf::CsrfField;
use crate::error::AppError;
use crate::format::{percent_encode, utc};
use crate::pages::admin::outcome;
use crate::widget_admin::{
    AdminAddWidgetKey, AdminAllowWidgetCustomer, AdminDisallowWidgetCustomer,
    AdminRegisterWidgetSite, AdminRevokeWidgetKey, AdminSetWidgetSiteEnabled, NewWidgetKey,
    WidgetSiteInfo, admin_widget_sites,
};
use leptos::form::ActionForm;
use leptos::prelude::*;

/// The private key of a key just made, with how to use it. Shown once.
fn new_key_view(result: Option<Result<NewWidgetKey, AppError>>) -> impl IntoView {
    result.map(|result| match result {
        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
        Ok(key) => {
            let snippet = format!(
                "<script src=\"https://<this server>/widget.js\" data-site=\"{}\" data-token=\"<token your server signs>\" async></script>",
                key.site_id
            );
            view! {
                <div class="notice" role="status" data-testid="widget-new-key">
                    <p>
                        "Site " <code data-testid="widget-site-id">{key.site_id.clone()}</code>
                        ", key " <code data-testid="widget-key-id">{key.key_id.clone()}</code>
                        ". Copy the private key now: it is not stored and will not be shown again."
                    </p>
                    <label for="widget-private-key">"Private key (Ed25519, PKCS#8 PEM)"</label>
                    <textarea id="widget-private-key" data-testid="widget-private-key" readonly rows="4">
                        {key.private_key_pem.clone()}
                    </textarea>
                    <p class="row">
                        <a class="button" data-testid="widget-key-download"
                            href=format!("data:application/x-pem-file;charset=utf-8,{}", percent_encode(&key.private_key_pem))
                            download=format!("{}-{}.pem", key.site_id, key.key_id)>
                            "Download the private key"
                        </a>
                        <CopyButton text=key.private_key_pem.clone() label="Copy the private key"/>
                    </p>
                    <p class="muted small">
                        "Your server signs a JWT per page view (alg EdDSA, kid = the key id; iss = the site id, "
                        "sub = the customer's id, aud = countersign-widget, iat, exp at most 15 minutes later, a unique jti) "
                        "and embeds:"
                    </p>
                    <pre class="small">{snippet}</pre>
                </div>
            }
            .into_any()
        }
    })
}

/// The actions a site row offers.
#[derive(Clone, Copy)]
struct SiteActions {
    add_key: ServerAction<AdminAddWidgetKey>,
    revoke: ServerAction<AdminRevokeWidgetKey>,
    enable: ServerAction<AdminSetWidgetSiteEnabled>,
    allow: ServerAction<AdminAllowWidgetCustomer>,
    disallow: ServerAction<AdminDisallowWidgetCustomer>,
}

/// Who the site may sign in, each with a button to stop it, and a form to
/// allow one more.
fn site_customers(site: &WidgetSiteInfo, actions: SiteActions) -> impl IntoView {
    let input_id = format!("widget-customer-{}", site.id);
    let allow_site_id = site.id.clone();
    let customers = site.customers.clone();
    let site_id = site.id.clone();
    view! {
        <p class="small" data-testid="widget-site-customers">
            {if customers.is_empty() {
                "Signs in no customer yet: allow the customers this site's tokens may name.".to_owned()
            } else {
                format!("May sign in: {}", customers.join(", "))
            }}
        </p>
        <ul class="small">
            {customers.into_iter().map(|customer| {
                let label = format!("Stop signing in {customer}");
                let (marker, site_id) = (customer.clone(), site_id.clone());
                view! {
                    <li data-customer=marker>
                        <ActionForm action=actions.disallow attr:class="inline">
                            <CsrfField/>
                            <input type="hidden" name="site_id" value=site_id/>
                            <input type="hidden" name="customer" value=customer/>
                            <button type="submit" class="secondary small">{label}</button>
                        </ActionForm>
                    </li>
                }
            }).collect_view()}
        </ul>
        <ActionForm action=actions.allow attr:class="inline">
            <CsrfField/>
            <input type="hidden" name="site_id" value=allow_site_id/>
            <label for=input_id.clone()>"Customer to allow"</label>
            <input id=input_id name="customer" required maxlength="64" autocomplete="off"/>
            <button type="submit">"Allow customer"</button>
        </ActionForm>
    }
}

fn site_row(site: WidgetSiteInfo, actions: SiteActions) -> impl IntoView {
    let SiteActions {
        add_key,
        revoke,
        enable,
        ..
    } = actions;
    let customers = site_customers(&site, actions);
    let site_id = site.id.clone();
    let keys_site_id = site.id.clone();
    let add_site_id = site.id.clone();
    let toggle_to = if site.disabled { "true" } else { "false" };
    let toggle_label = if site.disabled {
        "Enable site"
    } else {
        "Disable site"
    };
    view! {
        <li class="widget-site" data-site=site.id.clone()>
            <p>
                <strong>{site.name.clone()}</strong> " · " <code>{site.origin.clone()}</code>
                " · " <code class="small">{site.id.clone()}</code>
                {site.disabled.then(|| view! { <span class="status rejected">" disabled"</span> })}
            </p>
            {customers}
            <ul class="small">
                {site.keys.into_iter().map(|key| {
                    let site_id = keys_site_id.clone();
                    let key_id = key.id.clone();
                    let revoke_label = format!("Revoke {}", key.id);
                    let revoke_warning = format!(
                        "Sign-ins with tokens signed by {} are refused from then on. This cannot be undone: the site's server needs a new key.",
                        key.id
                    );
                    view! {
                        <li data-key=key.id.clone()>
                            <code>{key.id.clone()}</code>
                            {format!(" created {} · ", utc(key.created_at))}
                            {if key.revoked {
                                view! { <span>"revoked"</span> }.into_any()
                            } else {
                                view! {
                                    <span>"active "</span>
                                    <details class="confirm">
                                        <summary>"Revoke…"</summary>
                                        <p class="small">{revoke_warning}</p>
                                        <ActionForm action=revoke attr:class="inline">
                                            <CsrfField/>
                                            <input type="hidden" name="site_id" value=site_id/>
                                            <input type="hidden" name="key_id" value=key_id/>
                                            <button type="submit" class="danger small">{revoke_label}</button>
                                        </ActionForm>
                                    </details>
                                }.into_any()
                            }}
                        </li>
                    }
                }).collect_view()}
            </ul>
            <div class="widget-site-actions">
            <ActionForm action=add_key attr:class="inline">
                <CsrfField/>
                <input type="hidden" name="site_id" value=add_site_id/>
                <button type="submit">"New key"</button>
            </ActionForm>
            <ActionForm action=enable attr:class="inline">
                <CsrfField/>
                <input type="hidden" name="site_id" value=site_id/>
                <input type="hidden" name="enabled" value=toggle_to/>
                <button type="submit" class="secondary">{toggle_label}</button>
            </ActionForm>
            </div>
        </li>
    }
}

#[component]
pub fn WidgetSites() -> impl IntoView {
    let register = ServerAction::<AdminRegisterWidgetSite>::new();
    let add_key = ServerAction::<AdminAddWidgetKey>::new();
    let revoke = ServerAction::<AdminRevokeWidgetKey>::new();
    let enable = ServerAction::<AdminSetWidgetSiteEnabled>::new();
    let allow = ServerAction::<AdminAllowWidgetCustomer>::new();
    let disallow = ServerAction::<AdminDisallowWidgetCustomer>::new();
    let actions = SiteActions {
        add_key,
        revoke,
        enable,
        allow,
        disallow,
    };
    let version = move || {
        (
            register.version().get(),
            add_key.version().get(),
            revoke.version().get(),
            enable.version().get(),
            allow.version().get(),
            disallow.version().get(),
        )
    };
    let sites = Resource::new(version, |_| admin_widget_sites());
    view! {
        <section class="card wide" data-testid="widget-sites">
            <h2>"Chat widget sites"</h2>
            <p class="muted">
                "Sites listed here may embed the customer chat with "
                <code>"/widget.js"</code>
                "; only their origin may frame it. Each site signs its customers' tokens with its own key."
            </p>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match sites.await {
                        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                        Ok(list) if list.is_empty() => view! { <p class="muted">"No site is registered yet."</p> }.into_any(),
                        Ok(list) => view! {
                            <ul class="plain">
                                {list.into_iter().map(|site| site_row(site, actions)).collect_view()}
                            </ul>
                        }.into_any(),
                    }
                })}
            </Transition>
            {move || new_key_view(add_key.value().get())}
            {outcome(revoke)}
            {outcome(enable)}
            {outcome(allow)}
            {outcome(disallow)}
            <h3>"Register a site"</h3>
            <ActionForm action=register>
                <CsrfField/>
                <label for="widget-name">"Name"</label>
                <input id="widget-name" name="name" required maxlength="200" placeholder="Web shop"/>
                <label for="widget-origin">"Origin (scheme, host and port)"</label>
                <input id="widget-origin" name="origin" required maxlength="300" placeholder="https://shop.example" inputmode="url"/>
                <button type="submit">"Register site"</button>
            </ActionForm>
            {move || new_key_view(register.value().get())}
        </section>
    }
}
