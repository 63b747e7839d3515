use leptos::prelude::*;

#[component]
pub fn ChatPage() -> impl IntoView {
    view! {
        <section class="card wide">
            <h1>"Chat"</h1>
            <p class="muted">"Ask about an order or a policy; refund requests are handed to the refund specialist."</p>
        </section>
    }
}
