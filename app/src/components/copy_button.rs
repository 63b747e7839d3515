//! A button that copies a text to the clipboard and says whether it did.

use leptos::prelude::*;

#[component]
pub fn CopyButton(text: String, label: &'static str) -> impl IntoView {
    // None until pressed; then whether the browser took the text.
    let copied = RwSignal::new(None::<bool>);
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        {
            let text = text.clone();
            leptos::task::spawn_local(async move {
                let promise = window().navigator().clipboard().write_text(&text);
                let done = wasm_bindgen_futures::JsFuture::from(promise).await;
                copied.set(Some(done.is_ok()));
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &text;
    };
    view! {
        <button type="button" class="secondary" on:click=copy>{label}</button>
        <span role="status" class="small">
            {move || match copied.get() {
                Some(true) => "Copied.",
                Some(false) => "This browser did not allow copying: select the text and copy it.",
                None => "",
            }}
        </span>
    }
}
