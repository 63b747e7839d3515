//! Wiring: the database, sessions, middleware, Leptos and the JSON API in one
//! router, served with graceful shutdown.

use crate::config::Settings;
use crate::middleware;
use crate::payments::Payments;
use crate::session_store::AnyStore;
use crate::site_bundle::SiteBundle;
use crate::web;
use app::server::{ServerContext, ServerParts};
use app::{App, shell};
use axum::Router;
use axum::extract::FromRef;
use axum::routing::get;
use connectors::carrier_sandbox::CarrierSandbox;
use connectors::sandbox::{SandboxProvider, SandboxState};
use engine::Engine;
use engine::policies::PolicyLibrary;
use leptos::prelude::*;
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use storage::Database;
use tokio::net::TcpListener;
use tower_http::CompressionLevel;
use tower_http::compression::CompressionLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};

/// What every handler and middleware layer reads. Axum clones the state for
/// each layer and extractor of every request, so it is one shared pointer
/// (see [`ServerContext`] for what cloning the parts cost).
#[derive(Clone)]
pub struct AppState(Arc<AppParts>);

/// The parts an [`AppState`] shares.
pub struct AppParts {
    pub db: Database,
    pub engine: Engine,
    /// The sandbox provider's client, for its ledger (None with Stripe).
    pub sandbox: Option<SandboxProvider>,
    pub settings: Arc<Settings>,
    pub leptos_options: LeptosOptions,
    pub server_context: ServerContext,
}

impl std::ops::Deref for AppState {
    type Target = AppParts;

    fn deref(&self) -> &AppParts {
        &self.0
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

/// Connects and migrates the database named in the settings.
///
/// # Errors
/// The database cannot be reached or migrated.
pub async fn open_database(settings: &Settings) -> anyhow::Result<Database> {
    let db = Database::connect(&settings.database_url).await?;
    db.migrate().await?;
    Ok(db)
}

/// What the A2A endpoint needs: this group's gateway and where peers reach
/// it.
fn a2a_state(
    settings: &Settings,
    local_addr: std::net::SocketAddr,
    gateway: engine::gateway::Gateway,
) -> web::a2a::A2aState {
    web::a2a::A2aState {
        gateway,
        public_url: settings
            .public_url
            .clone()
            // Without a public URL, where this process actually listens
            // (the configured port may be 0: any free one).
            .unwrap_or_else(|| format!("http://{local_addr}")),
    }
}

/// The whole HTTP application.
///
/// # Errors
/// The session store could not be prepared.
pub async fn build_router(
    settings: Arc<Settings>,
    db: Database,
    engine: Engine,
    payments: &Payments,
    carrier: Option<&CarrierSandbox>,
    ops_hints: app::ops::backend::OpsHints,
    local_addr: std::net::SocketAddr,
) -> anyhow::Result<Router> {
    let bundle = SiteBundle::locate(Path::new(&settings.site_root));
    let leptos_options = LeptosOptions::builder()
        .output_name("countersign")
        .site_root(settings.site_root.clone())
        .site_pkg_dir(bundle.pkg_dir())
        .site_addr(settings.listen)
        .build();
    let server_context = ServerContext::new(ServerParts {
        db: db.clone(),
        engine: engine.clone(),
        ops_hints,
    });
    let state = AppState(Arc::new(AppParts {
        db: db.clone(),
        engine,
        sandbox: payments.sandbox_client.clone(),
        settings: settings.clone(),
        leptos_options: leptos_options.clone(),
        server_context: server_context.clone(),
    }));

    let store = AnyStore::for_database(&db).await?;
    store.spawn_expired_cleanup(&state.engine.tasks);
    let sessions = SessionManagerLayer::new(store)
        .with_name(middleware::sessions::SESSION_COOKIE)
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(settings.secure_cookies())
        .with_expiry(Expiry::OnInactivity(time::Duration::minutes(
            settings.session_idle_minutes,
        )))
        // The store only moves a session's expiry when it saves it; without this
        // an unmodified session would end `session_idle_minutes` after sign-in
        // however active its user, instead of after that long idle.
        .with_always_save(true);

    let routes = page_routes();
    let context_for_fns = server_context.clone();
    let context_for_fallback = server_context.clone();
    let context_for_pages = server_context;
    let router = Router::new()
        .route("/healthz", get(web::health::healthz))
        .route("/readyz", get(web::health::readyz))
        .nest("/api/v1", web::api::router())
        .route("/api/openapi.json", get(web::api::openapi::document))
        // Anything else under /api is an API client's mistake: a JSON 404,
        // not the pages' HTML one.
        .route("/api/{*rest}", axum::routing::any(web::api::not_found))
        .route("/api/live/proposals", get(web::live::proposal_events))
        .route("/api/live/ops", get(web::live::ops_events))
        .route(
            "/fn/{*name}",
            // Reads are GET, changes are POST; the server-function registry
            // matches on method too, so a POST function cannot run via GET.
            axum::routing::get(server_fn_handler(context_for_fns.clone()))
                .post(server_fn_handler(context_for_fns)),
        )
        .leptos_routes_with_context(
            &state,
            routes,
            move || provide_context(context_for_pages.clone()),
            {
                let options = leptos_options.clone();
                move || shell(options.clone())
            },
        )
        // A mistyped address renders the app's not-found page, which needs
        // the same context as every other page (who is signed in).
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(
            {
                let context = context_for_fallback;
                move || provide_context(context.clone())
            },
            shell,
        ))
        .layer(axum::middleware::from_fn(web::server_fns::limit_body))
        .layer(axum::middleware::from_fn_with_state(
            bundle.stylesheet_href(),
            middleware::page_guard::guard,
        ))
        .layer(axum::middleware::from_fn(middleware::headers::no_store))
        .layer(axum::middleware::from_fn(
            middleware::headers::content_security,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::csrf::protect,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::identity::identify,
        ))
        .layer(sessions)
        .layer(axum::middleware::from_fn(
            middleware::sessions::keep_ended_sessions_ended,
        ))
        .layer(axum::middleware::from_fn(middleware::paths::plain_only))
        // The widget authenticates with signed tokens and bearer sessions,
        // never cookies: it sits outside the session, identity and CSRF layers.
        .merge(web::widget::router())
        // The bundle is the same for everyone: no session is read for it.
        .merge(bundle.router())
        // The scraper authenticates with the scrape token, never a session:
        // outside the session, identity and CSRF layers, like the widget.
        .route("/metrics", get(crate::metrics::scrape::metrics));
    // Other agent groups prove themselves by the signatures on their tasks,
    // never a session: outside the session, identity and CSRF layers.
    let router = match &state.engine.gateway {
        Some(gateway) => router.merge(web::a2a::router(a2a_state(
            &settings,
            local_addr,
            gateway.clone(),
        ))),
        None => router,
    };
    // The sandbox stands for an outside payment service: it sits outside our
    // sessions, identity and CSRF layers, as the real provider would.
    let router = match &payments.mounted {
        Some(sandbox) => router.nest_service(
            &settings.sandbox_path,
            connectors::sandbox::router(sandbox.clone()),
        ),
        None => router,
    };
    // The sandbox carrier, like the sandbox provider, stands for a site
    // outside: the browser lane reads its tracking pages.
    let router = match carrier {
        Some(carrier) => router.nest_service(
            &settings.carrier_path,
            connectors::carrier_sandbox::router(carrier.clone()),
        ),
        None => router,
    };
    let router = router
        .layer(SetResponseHeaderLayer::if_not_present(
            http::header::X_CONTENT_TYPE_OPTIONS,
            http::HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            http::header::REFERRER_POLICY,
            http::HeaderValue::from_static("same-origin"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            http::header::CONTENT_SECURITY_POLICY,
            http::HeaderValue::from_static("frame-ancestors 'self'"),
        ))
        .layer(axum::middleware::from_fn_with_state(
            settings
                .public_url
                .as_deref()
                .is_some_and(|url| url.starts_with("https://")),
            middleware::headers::transport_security,
        ))
        // Pages and API answers; the bundle comes compressed already and
        // live streams are left alone (the layer's default predicate).
        .layer(CompressionLayer::new().quality(CompressionLevel::Precise(4)))
        .layer(TraceLayer::new_for_http().make_span_with(crate::telemetry::request_span))
        .with_state(state);
    Ok(router)
}

/// The pages' routes, generated once per process. Generating them renders the
/// app with resource loading suspended process-wide (leptos_server's
/// `SuppressResourceLoad` flag): a page that another router in the same process
/// (tests run several) starts rendering meanwhile would wait forever.
fn page_routes() -> Vec<AxumRouteListing> {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

fn server_fn_handler(
    context: ServerContext,
) -> impl Fn(
    axum::extract::Request,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = axum::response::Response> + Send>>
+ Clone
+ Send
+ 'static {
    move |request| {
        let context = context.clone();
        Box::pin(async move {
            use axum::response::IntoResponse;
            let path = request.uri().path();
            if !crate::web::server_fns::is_server_fn(path) {
                return crate::web::api_error::ApiError::new(
                    http::StatusCode::NOT_FOUND,
                    "not_found",
                    format!("no server function at {path}"),
                )
                .into_response();
            }
            leptos_axum::handle_server_fns_with_context(
                move || provide_context(context.clone()),
                request,
            )
            .await
            .into_response()
        })
    }
}

/// A bound, not yet running server.
pub struct Application {
    listener: TcpListener,
    router: Router,
    engine: Engine,
    mounted_sandbox: Option<SandboxState>,
    mounted_carrier: Option<CarrierSandbox>,
    /// The work runner's lanes, when this process runs them.
    runner: Option<runner::Runner>,
}

impl Application {
    /// Binds the listen address (port 0 picks a free port).
    ///
    /// # Errors
    /// The address cannot be bound or the router cannot be built.
    pub async fn build(settings: Arc<Settings>, db: Database) -> anyhow::Result<Self> {
        // Before the first provider call or chat turn can be recorded.
        crate::metrics::install();
        let listener = TcpListener::bind(settings.listen).await?;
        let payments = crate::payments::build(&settings, listener.local_addr()?)?;
        if let Some(sandbox) = &payments.mounted {
            // The in-memory sandbox stands for the provider the shop's
            // customers paid through: it learns each charge from the order
            // store at first sight (also after a restart).
            sandbox.set_charge_source(Arc::new(
                engine::execution::sandbox_charges::OrderStoreCharges::new(db.clone()),
            ));
        }
        let policies = PolicyLibrary::load(db.clone()).await?;
        let engine = Engine::new(
            db.clone(),
            payments.provider.clone(),
            policies,
            settings.engine_settings(),
        )
        .with_assistant(crate::chat_model::assistant(&settings)?);
        let engine = match settings.gateway_parts()? {
            Some(parts) => engine.with_gateway(parts),
            None => engine,
        };
        let engine = match settings.carrier_parts(listener.local_addr()?) {
            Some(parts) => engine.with_carrier(parts),
            None => engine,
        };
        let mounted_carrier = settings
            .sandbox_carrier_mounted()
            .then(|| CarrierSandbox::new(engine::demo::carrier_parcels(engine.now())));
        // Every replica searches its own index of the policies in force;
        // another replica or `countersign policy import` may change them.
        engine.policies.keep_fresh(&engine.tasks);
        let runner = settings
            .work_runner
            .then(|| engine.work.runner(&work_schedule(&settings)));
        // `/ops` pages hear when this runner's work ends (and, through
        // the hints' NOTIFY on PostgreSQL, when another replica's does).
        let ops_hints = app::ops::backend::OpsHints::for_database(&db, &engine);
        if let Some(runner) = &runner {
            // The supervisor's task, ended by shutdown like every other.
            let hints = web::live::hint_ops_on_finished(runner.finished(), ops_hints.clone());
            let stopping = engine.tasks.stopping();
            engine.tasks.spawn("ops hints", async move {
                tokio::select! {
                    () = hints => {}
                    () = stopping.cancelled() => {}
                }
            });
        }
        let local_addr = listener.local_addr()?;
        let router = build_router(
            settings,
            db,
            engine.clone(),
            &payments,
            mounted_carrier.as_ref(),
            ops_hints,
            local_addr,
        )
        .await?;
        Ok(Application {
            listener,
            router,
            engine,
            mounted_sandbox: payments.mounted,
            mounted_carrier,
            runner,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// This process's work runner, when it runs one (tests listen to the
    /// ends of its items).
    pub fn runner(&self) -> Option<&runner::Runner> {
        self.runner.as_ref()
    }

    /// The sandbox carrier mounted in this server, if any (tests hold its
    /// pages to catch the browser mid-read).
    pub fn mounted_carrier(&self) -> Option<&CarrierSandbox> {
        self.mounted_carrier.as_ref()
    }

    /// The sandbox provider mounted in this server, if any (tests set faults on it).
    pub fn mounted_sandbox(&self) -> Option<&SandboxState> {
        self.mounted_sandbox.as_ref()
    }

    /// # Errors
    /// The socket has no local address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes, then drains in-flight requests.
    ///
    /// # Errors
    /// The server failed.
    pub async fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        // Recovery first: the runner takes back what this worker held
        // before a crash, and the sweeps look at what fell due meanwhile.
        if let Some(runner) = &self.runner {
            runner.start().await.map_err(std::io::Error::other)?;
            // Messages that were waiting for a turn when a process stopped
            // go into a turn now (or when that turn's claim runs out).
            match self.engine.chat.resume_waiting().await {
                Ok(0) => {}
                Ok(count) => tracing::info!(count, "conversations with waiting messages resumed"),
                Err(error) => tracing::warn!(%error, "waiting messages could not be looked up"),
            }
        }
        let served = axum::serve(
            crate::web::listener::without_delayed_chunks(self.listener),
            self.router
                .into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(shutdown)
        .await;
        // Requests are drained; now the work: lanes stop taking items,
        // running ones may finish (or are handed back), every task ends.
        self.engine.tasks.shutdown(SHUTDOWN_GRACE).await;
        served
    }
}

/// How long shutdown waits for background work after the last request.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(15);

/// The sweeps' periods; none in a process whose reconciliation period is 0.
fn work_schedule(settings: &Settings) -> engine::work::WorkSchedule {
    let every = settings.reconcile_interval_seconds;
    engine::work::WorkSchedule {
        sweeps: every > 0,
        reconcile_every: chrono::Duration::seconds(i64::try_from(every.max(1)).unwrap_or(i64::MAX)),
        ..engine::work::WorkSchedule::default()
    }
}

/// Completes on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
