//! Live updates in the browser: a counter that ticks whenever the server
//! announces a proposal change (server-sent events), so resources keyed on it
//! refetch without a reload. On the server it never ticks.

use domain::proposal::ProposalState;
use leptos::prelude::*;
use std::collections::HashMap;

/// The newest state each proposal was announced in, with its version, as
/// the live events brought them (the events carry the state itself).
#[derive(Clone, Copy)]
pub struct LiveStates(RwSignal<HashMap<String, (i64, ProposalState)>>);

impl LiveStates {
    pub fn provide() {
        provide_context(LiveStates(RwSignal::new(HashMap::new())));
    }

    /// What to show for a proposal read at `read_version` in `read`: the
    /// announced state when it is newer.
    pub fn newest(read: &ProposalState, read_version: i64, id: &str) -> ProposalState {
        use_context::<LiveStates>()
            .and_then(|states| {
                states.0.with(|map| {
                    map.get(id)
                        .filter(|(version, _)| *version > read_version)
                        .map(|(_, state)| state.clone())
                })
            })
            .unwrap_or_else(|| read.clone())
    }

    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    fn record(self, id: String, version: i64, state: ProposalState) {
        self.0.update(|map| {
            let newer = map.get(&id).is_none_or(|(known, _)| version > *known);
            if newer {
                map.insert(id, (version, state));
            }
        });
    }
}

/// The part of a `proposal` event a page applies at once.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
#[derive(serde::Deserialize)]
struct Announced {
    proposal_id: String,
    state: Option<ProposalState>,
    #[serde(default)]
    state_version: i64,
}

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
    // A proposal's new state applies before anything is read again.
    if let Some(states) = use_context::<LiveStates>() {
        let on_state =
            Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
                let Some(data) = event.data().as_string() else {
                    return;
                };
                if let Ok(Announced {
                    proposal_id,
                    state: Some(state),
                    state_version,
                }) = serde_json::from_str::<Announced>(&data)
                {
                    states.record(proposal_id, state_version, state);
                }
            });
        let _ =
            source.add_event_listener_with_callback("proposal", on_state.as_ref().unchecked_ref());
        on_state.forget();
    }
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
