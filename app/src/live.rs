//! Live updates in the browser: a counter that ticks whenever the server
//! announces a proposal change (server-sent events), so resources keyed on it
//! refetch without a reload. On the server it never ticks.

use leptos::prelude::*;

/// Ticks on every proposal change the signed-in user may see, and each
/// time the live connection (re)opens: changes made between rendering the
/// page and connecting, or while the connection was down, are caught up
/// (a refund can verify within milliseconds of its approval).
pub fn use_proposal_changes() -> ReadSignal<u64> {
    let (tick, set_tick) = signal(0u64);
    #[cfg(feature = "hydrate")]
    connect(set_tick);
    #[cfg(not(feature = "hydrate"))]
    let _ = set_tick;
    tick
}

#[cfg(feature = "hydrate")]
fn connect(set_tick: WriteSignal<u64>) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    let Ok(source) = web_sys::EventSource::new("/api/live/proposals") else {
        return;
    };
    let on_change =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |_: web_sys::MessageEvent| {
            set_tick.update(|n| *n += 1);
        });
    // A conversation's handover (a person joins, writes or leaves) ticks it too.
    for kind in ["proposal", "conversation", "resync"] {
        let _ = source.add_event_listener_with_callback(kind, on_change.as_ref().unchecked_ref());
    }
    // The closure lives as long as the page's event source.
    on_change.forget();
    // The page says how live it is: `connecting`, `open`, or `reconnecting`
    // (the browser retries on its own; the stylesheet shows a notice).
    let live = |state: &str| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-live", state);
        }
    };
    live("connecting");
    let on_open = Closure::<dyn Fn()>::new(move || {
        live("open");
        set_tick.update(|n| *n += 1);
    });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    let on_error = Closure::<dyn Fn()>::new(move || live("reconnecting"));
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    let source = send_wrapper::SendWrapper::new(source);
    on_cleanup(move || source.close());
}
