//! The top bar: links for the roles the user holds, and sign-out.

use crate::MeResource;
use crate::access::{ADMIN_ROLES, AUDIT_ROLES, INBOX_ROLES, OPS_ROLES, QUEUE_ROLES};
use crate::auth::Logout;
use crate::csrf::CsrfField;
use domain::Role;
use leptos::form::ActionForm;
use leptos::prelude::*;

#[component]
pub fn Nav() -> impl IntoView {
    let me = expect_context::<MeResource>();
    let logout = ServerAction::<Logout>::new();
    view! {
        <header class="topbar">
            <a class="brand" href="/">"Countersign"</a>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(user)) => {
                            let roles = user.roles.clone();
                            view! {
                                <nav aria-label="Main">
                                    <a href="/">"Home"</a>
                                    // Staff read customers' chats from their proposals and the inbox.
                                    <Show when={let r = roles.clone(); move || r.contains(Role::Customer)}>
                                        <a href="/chat">"Chat"</a>
                                        <a href="/refunds">"My refunds"</a>
                                    </Show>
                                    <Show when={let r = roles.clone(); move || r.any_of(QUEUE_ROLES)}>
                                        <a href="/queue">"Review queue"</a>
                                    </Show>
                                    <Show when={let r = roles.clone(); move || r.any_of(INBOX_ROLES)}>
                                        <a href="/inbox">"Inbox"</a>
                                    </Show>
                                    <Show when={let r = roles.clone(); move || r.any_of(AUDIT_ROLES)}>
                                        <a href="/audit">"Audit"</a>
                                    </Show>
                                    <Show when={let r = roles.clone(); move || r.any_of(OPS_ROLES)}>
                                        <a href="/ops">"Operations"</a>
                                    </Show>
                                    <Show when={let r = roles.clone(); move || r.any_of(ADMIN_ROLES)}>
                                        <a href="/admin">"Admin"</a>
                                    </Show>
                                </nav>
                                <div class="whoami">
                                    <span class="user" data-testid="signed-in-as">
                                        {user.display_name.clone()}
                                        " (" {user.roles.to_string()} ")"
                                    </span>
                                    <ActionForm action=logout attr:class="inline">
                                        <CsrfField/>
                                        <button type="submit" class="link">"Sign out"</button>
                                    </ActionForm>
                                </div>
                            }
                                .into_any()
                        }
                        _ => view! { <a href="/login">"Sign in"</a> }.into_any(),
                    }
                })}
            </Transition>
        </header>
    }
}
