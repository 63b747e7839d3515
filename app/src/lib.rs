//! Countersign's web interface: server-rendered Leptos pages that hydrate in
//! the browser, and the thin server functions behind them.

pub mod access;
pub mod admin;
pub mod admin_policy;
pub mod audit;
pub mod auth;
pub mod chat;
pub mod clock;
pub mod components;
pub mod csp;
pub mod csrf;
pub mod customer_words;
#[cfg(feature = "ssr")]
pub mod desk;
pub mod error;
pub mod event_words;
pub mod format;
pub mod gateway_admin;
pub mod gateway_trust;
pub mod handover;
pub mod live;
pub mod ops;
pub mod orders;
pub mod outcome;
pub mod pages;
pub mod proposals;
pub mod queue;
#[cfg(feature = "ssr")]
pub mod server;
#[cfg(feature = "ssr")]
pub mod server_errors;
pub mod widget_admin;

use components::nav::Nav;
use leptos::prelude::*;
use leptos_meta::{MetaTags, Title, provide_meta_context};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;
use pages::{
    admin::AdminPage,
    audit::AuditPage,
    chat::ChatPage,
    home::HomePage,
    inbox::InboxPage,
    login::LoginPage,
    not_found::NotFound,
    ops::OpsPage,
    proposal::ProposalPage,
    queue::QueuePage,
    refunds::{MyRefundsPage, RefundPage},
};

/// The signed-in user, loaded once per page and shared by every component.
pub type MeResource = Resource<Result<Option<domain::UserSummary>, error::AppError>>;

/// The HTML document around the app (rendered on the server only).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    csp::adopt_response_nonce();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <csrf::CsrfMeta/>
                <AutoReload options=options.clone()/>
                // In the shell, not the app: its path carries the bundle's
                // version (see server::site_bundle), known only to the server.
                <link rel="stylesheet" id="countersign" href=format!("/{}/countersign.css", options.site_pkg_dir)/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The first thing a keyboard reaches: past the navigation to the page.
/// The focus moves itself (the router handles the link, not the browser).
#[component]
fn SkipLink() -> impl IntoView {
    let skip = move |ev: leptos::ev::MouseEvent| {
        ev.prevent_default();
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            if let Some(main) = document()
                .get_element_by_id("main")
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = main.focus();
                main.scroll_into_view();
            }
        }
    };
    view! { <a class="skip-link" href="#main" on:click=skip>"Skip to main content"</a> }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let me: MeResource = Resource::new(|| (), |_| auth::whoami());
    provide_context(me);
    live::LiveStates::provide();
    clock::provide_clock();
    // Tests and people can tell when the page has become interactive.
    Effect::new(|_| {
        #[cfg(feature = "hydrate")]
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
    view! {
        <Title text="Countersign"/>
        <Router>
            <SkipLink/>
            <Nav/>
            <main class="page" id="main" tabindex="-1">
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=HomePage/>
                    <Route path=path!("/login") view=LoginPage/>
                    <Route path=path!("/queue") view=QueuePage/>
                    <Route path=path!("/audit") view=AuditPage/>
                    <Route path=path!("/ops") view=OpsPage/>
                    <Route path=path!("/admin") view=AdminPage/>
                    <Route path=path!("/chat") view=ChatPage/>
                    <Route path=path!("/inbox") view=InboxPage/>
                    <Route path=path!("/proposals/:id") view=ProposalPage/>
                    <Route path=path!("/refunds") view=MyRefundsPage/>
                    <Route path=path!("/refunds/:id") view=RefundPage/>
                </Routes>
            </main>
        </Router>
    }
}
