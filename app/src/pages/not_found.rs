use leptos::prelude::*;

#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <section class="card narrow">
            <h1>"Page not found"</h1>
            <p><a href="/">"Back to the start page"</a></p>
        </section>
    }
}
