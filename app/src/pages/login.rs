//! The sign-in page. Works as a plain form before the page hydrates.

use crate::auth::Login;
use crate::csrf::CsrfField;
use leptos::form::ActionForm;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    let next = move || query.read().get("next").unwrap_or_default();
    let error = move || {
        login
            .value()
            .get()
            .and_then(|result| result.err())
            .map(|e| view! { <p class="error" role="alert" data-testid="login-error">{e.to_string()}</p> })
    };
    view! {
        <section class="card narrow auth">
            <h1>"Sign in"</h1>
            <ActionForm action=login>
                <CsrfField/>
                <input type="hidden" name="next" value=next/>
                <label for="username">"User name"</label>
                <input id="username" name="username" autocomplete="username" required maxlength="64"/>
                <label for="password">"Password"</label>
                <input id="password" type="password" name="password" autocomplete="current-password" required/>
                <button type="submit" disabled=move || login.pending().get()>"Sign in"</button>
            </ActionForm>
            {error}
        </section>
    }
}
