//! The engine is the composition root: it builds each use case's service
//! from the few things that service uses (the database, the clock, live
//! updates, the payment provider, its own settings) and exposes them as
//! fields, so callers write `engine.accounts.login(..)`. No service holds
//! the engine; one that needs another holds that one's public service or a
//! narrow port (a trait) it implements.
//!
//! Approvals and execution are still written as `impl Engine` while they
//! move to the same pattern; they read the shared parts below.

use crate::accounts::{Accounts, ThrottlePolicy};
use crate::approvals::Approvals;
use crate::assistant::Chat;
use crate::clock::Clock;
use crate::execution::Execution;
use crate::live::LiveUpdates;
use crate::orders::Orders;
use crate::policies::PolicyLibrary;
use crate::proposals::{ProposalRules, Proposals};
use crate::settings::TeamSettings;
use crate::widget::Widget;
use crate::work::Work;
use chrono::Duration;
use connectors::PaymentProvider;
use domain::RoleSet;
use runner::batch::Combiner;
use std::sync::Arc;
use storage::Database;

/// Operator settings for proposals, approvals and execution.
#[derive(Debug, Clone)]
pub struct EngineSettings {
    /// How long a new proposal waits for approval.
    pub proposal_ttl: Duration,
    /// How long an approval counts (conditions go stale).
    pub approval_ttl: Duration,
    /// Above this many minor units two approvers are needed, unless a
    /// per-currency threshold is stored.
    pub four_eyes_threshold_minor: i64,
    /// An approver's limit when none is stored for them (None: no limit).
    pub default_approval_limit_minor: Option<i64>,
    /// How long an executor's claim lasts before another may take over.
    pub lease: Duration,
    /// How long the provider remembers idempotency keys (Stripe: 24 h).
    pub key_retention: Duration,
    /// Status checks of an unknown outcome before a person is told.
    pub max_unknown_checks: u32,
    /// First wait before re-checking an unknown outcome; doubles each time.
    pub first_check_after: Duration,
    /// The longest wait between checks.
    pub max_check_interval: Duration,
    /// This process's name in claims and the journal.
    pub executor_name: String,
    /// How many proposals one submitter may submit per rolling window.
    pub submission_limit: crate::proposals::SubmissionLimit,
    /// How failed sign-ins are throttled.
    pub sign_in: ThrottlePolicy,
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            proposal_ttl: Duration::hours(48),
            approval_ttl: Duration::hours(24),
            four_eyes_threshold_minor: 50_000,
            default_approval_limit_minor: Some(100_000),
            lease: Duration::seconds(60),
            key_retention: Duration::hours(24),
            max_unknown_checks: 8,
            first_check_after: Duration::seconds(2),
            max_check_interval: Duration::minutes(10),
            executor_name: format!("executor-{}", std::process::id()),
            submission_limit: crate::proposals::SubmissionLimit::default(),
            sign_in: ThrottlePolicy::default(),
        }
    }
}

impl EngineSettings {
    /// When to check an unknown outcome again after `checks` checks.
    pub fn next_check(&self, checks: u32, now: domain::Timestamp) -> domain::Timestamp {
        let factor = 2i32.saturating_pow(checks.min(20));
        let wait = self
            .first_check_after
            .checked_mul(factor)
            .unwrap_or(self.max_check_interval)
            .min(self.max_check_interval);
        now + wait
    }
}

/// Who is acting: a person (session or token) or a component of the system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub user_id: String,
    pub name: String,
    pub roles: RoleSet,
    /// Acting through this embeddable-widget session: it reaches only the
    /// conversations it opened and the proposals they prepared, whatever
    /// else the customer may see in the web app. None for every other
    /// credential.
    pub widget_session: Option<String>,
}

impl From<storage::users::UserRecord> for Actor {
    /// The account acting for itself (not through a widget session).
    fn from(user: storage::users::UserRecord) -> Actor {
        Actor {
            user_id: user.id,
            name: user.name,
            roles: user.roles,
            widget_session: None,
        }
    }
}

/// How a visitor's id begins: a browser that has not signed in, chatting
/// before it does (see [`Actor::guest`]).
pub const GUEST_PREFIX: &str = "gst_";

impl Actor {
    /// A visitor who has not signed in, known only by the id its browser
    /// session holds. It holds no role: it can open a conversation and
    /// write to it, and nothing else, until it signs in.
    pub fn guest(guest_id: &str) -> Actor {
        Actor {
            user_id: guest_id.to_owned(),
            name: "visitor".to_owned(),
            roles: domain::RoleSet::new([]),
            widget_session: None,
        }
    }

    /// Whether this is a visitor who has not signed in.
    pub fn is_guest(&self) -> bool {
        self.roles.is_empty() && self.user_id.starts_with(GUEST_PREFIX)
    }

    /// How the journal names the actor.
    pub fn journal_name(&self) -> String {
        format!("user:{}", self.name)
    }
}

#[derive(Clone)]
pub struct Engine {
    /// Users, sign-in and API tokens.
    pub accounts: Accounts,
    /// Submitting refund proposals; reading them as the actor may see them.
    pub proposals: Proposals,
    /// Approval limits, four-eyes thresholds, who sees the staff inbox.
    pub team_settings: TeamSettings,
    /// The shops' orders and the refunds they made elsewhere.
    pub orders: Orders,
    /// Widget host sites, their keys and customers, and widget sessions.
    pub widget: Widget,
    /// Conversations with the agents, their turns, the handover to a person.
    pub chat: Chat,
    /// Approving and rejecting proposals.
    pub approvals: crate::approvals::Approvals,
    /// Sending approved refunds, recording and verifying the provider's
    /// answers, reconciling and resolving what stayed uncertain.
    pub execution: crate::execution::Execution,
    /// The work runner's lanes and handlers, and the operations view.
    pub work: crate::work::Work,
    /// Tasks to and from other agent groups; None when the gateway is off.
    pub gateway: Option<crate::gateway::Gateway>,
    /// What the gateway is built from (set by [`Engine::with_gateway`]).
    gateway_parts: Option<crate::gateway::GatewayParts>,
    /// The carrier the specialist reads in the browser lane (set by
    /// [`Engine::with_carrier`]).
    carrier_parts: Option<CarrierParts>,
    pub db: Database,
    pub provider: Arc<dyn PaymentProvider>,
    pub policies: PolicyLibrary,
    pub settings: Arc<EngineSettings>,
    pub live: LiveUpdates,
    /// The chat agents and their model (the offline rules by default).
    pub assistant: crate::assistant::Assistant,
    /// Concurrent approvals and provider answers, combined into batches.
    pub(crate) batches: Batches,
    /// Which payment each proposal refunds (content never changes).
    pub(crate) payment_refs: Arc<crate::payment_refs::PaymentRefs>,
    /// What time it is for every service: wall time unless a test sets
    /// its own with [`Engine::with_clock`].
    pub clock: Clock,
    /// The door to this process's work runner (shared by the services).
    wake: runner::Wake,
    /// Interactive work in progress (approvals, chat turns): background
    /// lanes give way to it.
    pub activity: runner::Activity,
    /// Owns every task the process starts; shutdown waits for it.
    pub tasks: runner::Supervisor,
}

/// The queues that combine concurrent writes of one kind into batches (see
/// `runner::batch`): at most [`BATCH_SIZE`] requests per transaction; a
/// second batch of a kind runs alongside the first when enough requests
/// wait ([`APPROVALS_PARALLEL_AT`], [`ANSWERS_PARALLEL_AT`]).
#[derive(Clone)]
pub(crate) struct Batches {
    pub approvals: Arc<Combiner<crate::approvals::approve::ApproveRequest>>,
    pub answers: Arc<Combiner<crate::execution::record::AnswerRequest>>,
}

/// The most requests one batch takes.
const BATCH_SIZE: usize = 64;
/// Batches of one kind in flight at once.
const BATCH_RUNNERS: usize = 2;
/// Waiting approvals that start a second batch beside a running one. Fewer
/// are cheaper left for the next batch (each batch costs its statements and
/// a commit), but every approver waits for its batch's commit; measured
/// with 32 approvers on PostgreSQL, 16 beat 8, 24 and a full batch (README,
/// Benchmarks).
const APPROVALS_PARALLEL_AT: usize = 16;
/// Waiting provider answers that start a second batch. Nobody waits on an
/// answer's commit but the refund's own progress, so answers gather into
/// bigger batches before a second runner starts: fewer transactions per
/// refund (0.18 → 0.14) and 14% less CPU per refund than at 16, measured
/// over nine interleaved pairs on PostgreSQL (README, Benchmarks).
const ANSWERS_PARALLEL_AT: usize = 32;

impl Batches {
    fn new(tasks: &runner::Supervisor) -> Self {
        Batches {
            approvals: Combiner::new(BATCH_SIZE, BATCH_RUNNERS, APPROVALS_PARALLEL_AT, tasks),
            answers: Combiner::new(BATCH_SIZE, BATCH_RUNNERS, ANSWERS_PARALLEL_AT, tasks),
        }
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("provider", &self.provider.name())
            .field("executor", &self.settings.executor_name)
            .finish_non_exhaustive()
    }
}

impl Engine {
    pub fn new(
        db: Database,
        provider: Arc<dyn PaymentProvider>,
        policies: PolicyLibrary,
        settings: EngineSettings,
    ) -> Self {
        let tasks = runner::Supervisor::new();
        let live = LiveUpdates::for_database(&db, &tasks);
        let settings = Arc::new(settings);
        let (batches, wake, activity) = (
            Batches::new(&tasks),
            runner::Wake::default(),
            runner::Activity::default(),
        );
        let payment_refs: Arc<crate::payment_refs::PaymentRefs> = Arc::default();
        let execution = Execution::new(
            db.clone(),
            provider.clone(),
            settings.clone(),
            live.clone(),
            Clock::system(),
            wake.clone(),
            batches.answers.clone(),
        );
        let approvals = Approvals::new(
            db.clone(),
            settings.clone(),
            execution.clone(),
            batches.approvals.clone(),
            payment_refs.clone(),
            activity.clone(),
            tasks.clone(),
        );
        let work = Work::new(
            db.clone(),
            Clock::system(),
            settings.clone(),
            execution.clone(),
            wake.clone(),
            activity.clone(),
            tasks.clone(),
        );
        Engine {
            approvals,
            execution,
            work,
            gateway: None,
            gateway_parts: None,
            carrier_parts: None,
            accounts: Accounts::new(db.clone(), Clock::system(), settings.sign_in),
            team_settings: TeamSettings::new(db.clone(), Clock::system()),
            orders: Orders::new(db.clone(), Clock::system(), provider.clone()),
            widget: Widget::new(db.clone(), Clock::system()),
            chat: Chat::new(
                db.clone(),
                Clock::system(),
                live.clone(),
                crate::assistant::Assistant::offline(),
                Proposals::new(
                    db.clone(),
                    Clock::system(),
                    provider.clone(),
                    live.clone(),
                    proposal_rules(&settings),
                    payment_refs.clone(),
                ),
                policies.clone(),
            ),
            proposals: Proposals::new(
                db.clone(),
                Clock::system(),
                provider.clone(),
                live.clone(),
                proposal_rules(&settings),
                payment_refs.clone(),
            ),
            db,
            provider,
            policies,
            settings,
            live,
            assistant: crate::assistant::Assistant::offline(),
            batches,
            payment_refs,
            clock: Clock::system(),
            wake,
            activity,
            tasks,
        }
        .assembled()
    }

    /// Builds every service again from the shared parts (after one of
    /// them changed), so no service keeps an old clock or assistant.
    fn assembled(mut self) -> Self {
        self.execution = Execution::new(
            self.db.clone(),
            self.provider.clone(),
            self.settings.clone(),
            self.live.clone(),
            self.clock.clone(),
            self.wake.clone(),
            self.batches.answers.clone(),
        );
        self.approvals = Approvals::new(
            self.db.clone(),
            self.settings.clone(),
            self.execution.clone(),
            self.batches.approvals.clone(),
            self.payment_refs.clone(),
            self.activity.clone(),
            self.tasks.clone(),
        );
        self.gateway = self
            .gateway_parts
            .as_ref()
            .map(|parts| crate::gateway::Gateway::new(&self.db, &self.clock, &self.wake, parts));
        self.work = Work::new(
            self.db.clone(),
            self.clock.clone(),
            self.settings.clone(),
            self.execution.clone(),
            self.wake.clone(),
            self.activity.clone(),
            self.tasks.clone(),
        )
        .with_gateway(self.gateway.clone());
        self.accounts = Accounts::new(self.db.clone(), self.clock.clone(), self.settings.sign_in);
        self.team_settings = TeamSettings::new(self.db.clone(), self.clock.clone());
        self.orders = Orders::new(self.db.clone(), self.clock.clone(), self.provider.clone());
        self.widget = Widget::new(self.db.clone(), self.clock.clone());
        self.chat = Chat::new(
            self.db.clone(),
            self.clock.clone(),
            self.live.clone(),
            self.assistant.clone(),
            self.proposals.clone(),
            self.policies.clone(),
        )
        .running_on(self.tasks.clone(), self.activity.clone())
        .asking(self.returns_desk())
        .tracking_with(self.carrier_desk());
        self.proposals = Proposals::new(
            self.db.clone(),
            self.clock.clone(),
            self.provider.clone(),
            self.live.clone(),
            proposal_rules(&self.settings),
            self.payment_refs.clone(),
        );
        self
    }

    /// The carrier's tracking pages, read one at a time in the browser
    /// lane. The lane's lease outlasts the browser's own time limit, so a
    /// hold never needs renewing.
    fn carrier_desk(&self) -> Option<crate::assistant::carrier::CarrierDesk> {
        let parts = self.carrier_parts.as_ref()?;
        let browser = connectors::browser::Chromium::new(&parts.browser, parts.timeout);
        let lease = parts.timeout * 2 + std::time::Duration::from_secs(10);
        Some(crate::assistant::carrier::CarrierDesk {
            carrier: parts.carrier.clone(),
            browser,
            lane: crate::exclusive_lane::ExclusiveLane::new(
                self.db.clone(),
                self.clock.clone(),
                self.tasks.clone(),
                lease,
                std::time::Duration::from_millis(100),
            ),
            tracking_url: parts.tracking_url.clone(),
        })
    }

    /// The same engine, its specialist reading the tracking pages of
    /// `parts`' carrier in a browser.
    pub fn with_carrier(mut self, parts: CarrierParts) -> Self {
        self.carrier_parts = Some(parts);
        self.assembled()
    }

    /// The returns desk the chat's specialist asks, when the gateway can
    /// send and names one.
    fn returns_desk(&self) -> Option<crate::assistant::ReturnsDesk> {
        let group = self.gateway_parts.as_ref()?.returns_desk.clone()?;
        let sender = self.gateway.as_ref()?.sender.clone()?;
        Some(crate::assistant::ReturnsDesk {
            sender,
            group,
            // Within the tool's own time limit; a desk slower than this is
            // asked in vain and the customer is asked instead.
            wait: std::time::Duration::from_secs(8),
        })
    }

    /// The same engine, every service reading the time from `clock`
    /// (tests move time forward instead of sleeping).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self.assembled()
    }

    /// The current time on the engine's clock.
    pub fn now(&self) -> domain::Timestamp {
        self.clock.now()
    }

    /// The same engine with the gateway to other agent groups on.
    pub fn with_gateway(mut self, parts: crate::gateway::GatewayParts) -> Self {
        self.gateway_parts = Some(parts);
        self.assembled()
    }

    /// The same engine with another chat model or agent set-up.
    pub fn with_assistant(mut self, assistant: crate::assistant::Assistant) -> Self {
        self.assistant = assistant;
        self.assembled()
    }
}

/// What the browser lane's carrier is built from.
#[derive(Debug, Clone)]
pub struct CarrierParts {
    /// The carrier's name as shipments give it (`parcelway`, the sandbox
    /// carrier): only its shipments are looked up on its pages.
    pub carrier: String,
    /// The Chromium executable (Debian's: `/usr/bin/chromium`).
    pub browser: std::path::PathBuf,
    /// The longest one page read may take, browser start included.
    pub timeout: std::time::Duration,
    /// The tracking page's address, `{tracking_number}` standing for the
    /// shipment's number.
    pub tracking_url: String,
}

fn proposal_rules(settings: &EngineSettings) -> ProposalRules {
    ProposalRules {
        ttl: settings.proposal_ttl,
        submission_limit: settings.submission_limit,
    }
}

/// Runs a state-changing use case to completion on its own task, so a caller
/// that goes away (a closed browser tab, a client timeout) cannot cut it off
/// between its commit and the work that must follow the commit. The task is
/// the supervisor's, so shutdown waits for it.
pub(crate) async fn detached<T: Send + 'static>(
    tasks: &runner::Supervisor,
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    match tasks.spawn("use case", work).await {
        Ok(value) => value,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        // Nothing aborts these tasks; a cancelled one means the runtime is
        // shutting down, and the caller cannot be answered anyway.
        Err(error) => panic!("use case task ended without finishing: {error}"),
    }
}
