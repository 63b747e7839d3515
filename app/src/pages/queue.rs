use leptos::prelude::*;

#[component]
pub fn QueuePage() -> impl IntoView {
    view! {
        <section class="card wide">
            <h1>"Review queue"</h1>
            <p class="muted">"Proposals awaiting your approval appear here, soonest expiry first."</p>
        </section>
    }
}
