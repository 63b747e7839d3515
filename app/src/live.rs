//! Live updates in the browser: a counter that ticks whenever the server
//! announces a proposal change (server-sent events), so resources keyed on it
//! refetch without a reload. On the server it never ticks.

use leptos::prelude::*;

/// Ticks on every proposal change the signed-in user may see.
pub fn use_proposal_changes() -> ReadSignal<u64> {
    changes(false)
}

/// Like [`use_proposal_changes`], and also ticks once the live connection is
/// open, to catch up on changes made between rendering the page and
/// connecting (a refund can verify within milliseconds of its approval).
/// For pages that show one proposal's progress; the queue keeps its cards
/// (and an approver's open panel) steady instead.
pub fn use_proposal_changes_catching_up() -> ReadSignal<u64> {
    changes(true)
}

fn changes(catch_up: bool) -> ReadSignal<u64> {
    let (tick, set_tick) = signal(0u64);
    #[cfg(feature = "hydrate")]
    connect(set_tick, catch_up);
    #[cfg(not(feature = "hydrate"))]
    let _ = (set_tick, catch_up);
    tick
}

#[cfg(feature = "hydrate")]
fn connect(set_tick: WriteSignal<u64>, catch_up: bool) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    let Ok(source) = web_sys::EventSource::new("/api/live/proposals") else {
        return;
    };
    let on_change =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |_: web_sys::MessageEvent| {
            set_tick.update(|n| *n += 1);
        });
    for kind in ["proposal", "resync"] {
        let _ = source.add_event_listener_with_callback(kind, on_change.as_ref().unchecked_ref());
    }
    // The closure lives as long as the page's event source.
    on_change.forget();
    if let Some(body) = document().body() {
        let _ = body.set_attribute("data-live", "connecting");
    }
    let on_open = Closure::<dyn Fn()>::new(move || {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-live", "open");
        }
        if catch_up {
            set_tick.update(|n| *n += 1);
        }
    });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    let source = send_wrapper::SendWrapper::new(source);
    on_cleanup(move || source.close());
}
