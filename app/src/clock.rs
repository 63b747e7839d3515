//! A clock for countdowns. The server renders with its own time; in the
//! browser the clock ticks each second, so a deadline counts down without
//! a reload. One clock for the whole app, owned by its root (a clock owned
//! by a component would be disposed with it while its timer still ran).

use domain::Timestamp;
use leptos::prelude::*;

#[derive(Clone, Copy)]
struct Clock(Signal<Timestamp>);

/// Starts the app's clock; called once, by the root component.
pub fn provide_clock() {
    let now = RwSignal::new(chrono::Utc::now());
    // Effects run only in the browser: the server renders one instant.
    Effect::new(move |_| {
        let tick = move || now.set(chrono::Utc::now());
        if let Ok(handle) = set_interval_with_handle(tick, std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    });
    provide_context(Clock(now.into()));
}

/// The app's clock (a fixed instant outside the app).
pub fn use_clock() -> Signal<Timestamp> {
    use_context::<Clock>()
        .map(|Clock(now)| now)
        .unwrap_or_else(|| Signal::stored(chrono::Utc::now()))
}
