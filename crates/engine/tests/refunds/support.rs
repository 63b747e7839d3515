//! A harness: fresh database with demo data, a sandbox provider on a free
//! port, and an engine wired to both.

use connectors::HttpTimeouts;
use connectors::sandbox::{LedgerView, SandboxConfig, SandboxProvider, SandboxState};
use domain::proposal::ProposalStatus;
use domain::{Role, RoleSet};
use engine::proposals::{EvidenceRef, Proposer, SubmitError, SubmitProposal};
use engine::{Actor, Engine, EngineSettings};
use std::sync::Arc;
use std::time::Duration;
use storage::proposals::StoredProposal;
use storage::testing::TestDatabase;

/// The test sandbox's secret key.
const SANDBOX_KEY: &str = "sk_sbx_engine_tests";

pub const PASSWORD: &str = "test-password-1";

pub struct Harness {
    pub engine: Engine,
    /// The engine's work runner (background lanes; the tests drive the
    /// sweeps themselves).
    pub runner: runner::Runner,
    pub sandbox: SandboxState,
    pub test_db: TestDatabase,
    pub sandbox_url: String,
}

pub fn fast_settings(executor: &str) -> EngineSettings {
    EngineSettings {
        lease: chrono::Duration::seconds(2),
        first_check_after: chrono::Duration::milliseconds(20),
        max_check_interval: chrono::Duration::milliseconds(100),
        executor_name: executor.to_owned(),
        ..EngineSettings::default()
    }
}

impl Harness {
    pub async fn start() -> Harness {
        Harness::with(SandboxConfig::default(), fast_settings("executor-test")).await
    }

    /// Events and streams in the journal now: the demo data journals its
    /// own set-up (users created, in the settings stream), so tests about
    /// a refund's chain count what they added on top of this.
    pub async fn journal_size(&self) -> (u64, u64) {
        match storage::journal::verify_chain(self.engine.db.conn())
            .await
            .unwrap()
        {
            storage::journal::ChainReport::Intact {
                events, streams, ..
            } => (events, streams),
            broken => panic!("the journal is broken before the test: {broken:?}"),
        }
    }

    pub async fn with(config: SandboxConfig, settings: EngineSettings) -> Harness {
        let test_db = TestDatabase::new().await;
        engine::demo::seed_demo(
            &test_db.db,
            PASSWORD,
            engine::demo::ReferenceStyle::Sandbox,
            engine::now(),
        )
        .await
        .unwrap();
        let sandbox = SandboxState::new(config.with_secret_key(SANDBOX_KEY.into())).unwrap();
        // The sandbox learns the shop's charges from the order store, as the
        // server's mounted sandbox does.
        sandbox.set_charge_source(Arc::new(
            engine::execution::sandbox_charges::OrderStoreCharges::new(test_db.db.clone()),
        ));
        // The demo's customers paid before the tests begin: the provider
        // knows their charges up front, so no test's first look at a charge
        // races the order store under load.
        for customer in ["customer", "customer2", "customer3"] {
            let user = storage::users::find_by_name(test_db.db.conn(), customer)
                .await
                .unwrap()
                .unwrap();
            for order in storage::orders::list_for_customer(test_db.db.conn(), &user.id)
                .await
                .unwrap()
            {
                assert!(sandbox.charge(&order.payment_reference).await.is_some());
            }
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let sandbox_url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(connectors::sandbox::serve_standalone(
            listener,
            sandbox.clone(),
        ));
        let (engine, runner) = engine_for(&test_db, &sandbox_url, settings).await;
        Harness {
            engine,
            runner,
            sandbox,
            test_db,
            sandbox_url,
        }
    }

    /// Someone refunds the charge directly at the provider, under another
    /// key, as a support desk with its own dashboard access would.
    pub async fn refund_elsewhere(&self, payment_reference: &str, amount_minor: i64, key: &str) {
        let outcome = self
            .engine
            .provider
            .refund(&connectors::RefundRequest {
                idempotency_key: key.to_owned(),
                payment_reference: payment_reference.to_owned(),
                amount_minor,
                currency: "EUR".into(),
                proposal_id: key.to_owned(),
            })
            .await
            .unwrap();
        assert!(
            matches!(outcome, connectors::RefundOutcome::Succeeded(_)),
            "{outcome:?}"
        );
    }

    /// A 50.00 EUR refund of order 4821 (79.00), approved after 10.00 EUR of
    /// the same charge was refunded at the provider through another channel
    /// that nobody recorded: 69.00 is left there, enough for 50.00, so the
    /// refund goes out, but the books cannot explain the provider's total.
    /// Returns the proposal id.
    pub async fn approved_with_money_refunded_elsewhere(&self) -> String {
        let customer = self.actor("customer").await;
        let mut request = refund_request("4821");
        request.amount_minor = Some(5000);
        let stored = self.submit_as(&customer, request).await.unwrap();
        self.refund_elsewhere(&stored.proposal.payment_reference, 1000, "desk-unrecorded")
            .await;
        self.engine
            .approvals
            .approve(
                &self.actor("approver").await,
                &stored.proposal.id,
                &stored.proposal.action_digest,
            )
            .await
            .unwrap();
        stored.proposal.id
    }

    /// Another process on the same database whose provider is at `url`.
    pub async fn engine_with_provider_at(&self, url: &str, settings: EngineSettings) -> Engine {
        engine_for(&self.test_db, url, settings).await.0
    }

    /// The proposal's journal, oldest first.
    pub async fn events(&self, id: &str) -> Vec<storage::journal::JournalEvent> {
        let filter = storage::journal::JournalFilter {
            proposal_id: Some(id.to_owned()),
            ..Default::default()
        };
        storage::journal::list(self.engine.db.conn(), &filter, 0, 1000)
            .await
            .unwrap()
            .0
    }

    /// A second engine (another server process) on the same database.
    pub async fn second_engine(&self, settings: EngineSettings) -> Engine {
        engine_for(&self.test_db, &self.sandbox_url, settings)
            .await
            .0
    }

    pub async fn actor(&self, name: &str) -> Actor {
        let user = storage::users::find_by_name(self.engine.db.conn(), name)
            .await
            .unwrap()
            .unwrap();
        Actor::from(user)
    }

    /// A staff member with the given roles, created on the fly.
    pub async fn staff(&self, name: &str, roles: &[Role]) -> Actor {
        self.engine
            .accounts
            .create_user(
                &engine::settings::ChangedBy::console(),
                engine::accounts::CreateUser {
                    name,
                    display_name: None,
                    password: PASSWORD,
                    roles: RoleSet::new(roles.iter().copied()),
                },
            )
            .await
            .unwrap();
        self.actor(name).await
    }

    /// `count` more delivered orders of 25.00 EUR for `customer`, ids from `first`.
    pub async fn more_orders(
        &self,
        customer: &Actor,
        first: u32,
        count: u32,
        reference_prefix: &str,
    ) -> Vec<String> {
        let now = engine::now();
        let tx = self.engine.db.begin_write().await.unwrap();
        let mut ids = Vec::new();
        for n in first..first + count {
            let mut order =
                engine::demo::delivered_cap_order(&n.to_string(), &customer.user_id, now);
            order.payment_reference = format!("{reference_prefix}{n}");
            storage::orders::insert(&*tx, &order).await.unwrap();
            // The customer paid through the provider first.
            self.sandbox
                .add_charge(
                    &order.payment_reference,
                    order.total.amount_minor,
                    order.total.currency.code(),
                )
                .unwrap();
            ids.push(order.id);
        }
        tx.commit().await.unwrap();
        ids
    }

    /// `requester` submits: a customer through the assistant (as in their
    /// chat), anyone else with their own credential.
    pub async fn submit_as(
        &self,
        requester: &Actor,
        request: SubmitProposal,
    ) -> Result<StoredProposal, SubmitError> {
        submit_as(&self.engine, requester, request).await
    }

    /// The customer asks for a full refund of `order_id`, citing the order and section 3.
    pub async fn propose(&self, requester: &Actor, order_id: &str) -> StoredProposal {
        self.submit_as(requester, refund_request(order_id))
            .await
            .unwrap()
    }

    /// `requester` proposes a full refund of `order_id` and the approver
    /// approves it (one approval executes at this amount); returns its id.
    pub async fn approved_refund(&self, requester: &Actor, order_id: &str) -> String {
        let stored = self.propose(requester, order_id).await;
        self.engine
            .approvals
            .approve(
                &self.actor("approver").await,
                &stored.proposal.id,
                &stored.proposal.action_digest,
            )
            .await
            .unwrap();
        stored.proposal.id
    }

    /// Waits while the proposal stays `status`; returns the status it moved
    /// to, or panics after `limit`.
    pub async fn wait_while(
        &self,
        id: &str,
        status: ProposalStatus,
        limit: Duration,
    ) -> ProposalStatus {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let now = self.status(id).await;
            if now != status {
                return now;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "proposal {id} stayed {status:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn ledger(&self) -> LedgerView {
        self.sandbox.ledger()
    }

    pub async fn status(&self, id: &str) -> ProposalStatus {
        storage::proposals::get(self.engine.db.conn(), id)
            .await
            .unwrap()
            .unwrap()
            .status()
    }

    /// Waits (running reconciliation passes) until the proposal reaches a
    /// status in `wanted`, or panics after `limit`.
    pub async fn settle(
        &self,
        id: &str,
        wanted: &[ProposalStatus],
        limit: Duration,
    ) -> ProposalStatus {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let status = self.status(id).await;
            if wanted.contains(&status) {
                return status;
            }
            if tokio::time::Instant::now() > deadline {
                panic!("proposal {id} stayed {status:?}, wanted one of {wanted:?}");
            }
            self.engine.execution.reconcile_once().await.unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// `requester` submits to `engine`: a customer through the assistant (as in
/// their chat), anyone else with their own credential.
pub async fn submit_as(
    engine: &Engine,
    requester: &Actor,
    request: SubmitProposal,
) -> Result<StoredProposal, SubmitError> {
    let proposer = if requester.roles.contains(Role::Customer) {
        Proposer::Assistant {
            agent: "refund_specialist",
            sender: requester,
            customer_id: &requester.user_id,
        }
    } else {
        Proposer::Account(requester)
    };
    engine.proposals.submit(proposer, request).await
}

pub fn refund_request(order_id: &str) -> SubmitProposal {
    SubmitProposal {
        order_id: order_id.to_owned(),
        amount_minor: None,
        currency: None,
        evidence: vec![
            EvidenceRef {
                reference: format!("order:{order_id}"),
                version: None,
                quote: None,
            },
            EvidenceRef {
                reference: "returns-policy:section-3".into(),
                version: None,
                quote: Some(
                    "Unopened items in their original packaging may be returned within 30 days"
                        .into(),
                ),
            },
        ],
        open_questions: vec![],
        recommendation: "Delivered within 30 days; refund in full if unopened.".into(),
        lines: Vec::new(),
        agent: None,
        conversation_id: None,
        supersedes: None,
    }
}

async fn engine_for(
    test_db: &TestDatabase,
    sandbox_url: &str,
    settings: EngineSettings,
) -> (Engine, runner::Runner) {
    let provider = SandboxProvider::new(
        sandbox_url,
        SANDBOX_KEY.into(),
        HttpTimeouts {
            connect: Duration::from_secs(2),
            request: Duration::from_millis(400),
        },
    )
    .unwrap();
    let policies = engine::policies::PolicyLibrary::load(test_db.db.clone())
        .await
        .unwrap();
    let engine = Engine::new(test_db.db.clone(), Arc::new(provider), policies, settings);
    // The work runner sends approved refunds (committed with the approval)
    // and runs the checks, as in the server; the tests drive the sweeps
    // themselves (`reconcile_once`).
    let runner = engine.work.runner(&engine::work::WorkSchedule {
        sweeps: false,
        ..engine::work::WorkSchedule::default()
    });
    runner.start().await.unwrap();
    (engine, runner)
}
