use leptos::prelude::*;

#[component]
pub fn AdminPage() -> impl IntoView {
    view! {
        <section class="card wide">
            <h1>"Administration"</h1>
            <p class="muted">"Users and roles, approver limits, policy documents and widget sites are managed here."</p>
        </section>
    }
}
