use leptos::prelude::*;

#[component]
pub fn AuditPage() -> impl IntoView {
    view! {
        <section class="card wide">
            <h1>"Audit trail"</h1>
            <p class="muted">"The journal of every proposal, approval, execution and verification appears here."</p>
        </section>
    }
}
