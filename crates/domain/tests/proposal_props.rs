//! Property tests for the proposal state machine: random command sequences,
//! with random time advances, starting from a fresh proposal awaiting
//! approval. Half of each run's commands are chosen to fit the current state
//! (so runs get deep into execution and verification), the rest are random
//! (so misfits are exercised too).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{Duration, TimeZone, Utc};
use domain::proposal::{
    ApprovalRef, Asker, Command, Effect, Evidence, InvalidationReason, OpenQuestion, ProposalDraft,
    ProposalState, ProposalStatus, Provenance, ProviderRefund, Receipt, RefundProposal, Resolution,
    apply,
};
use domain::{Currency, Money, Timestamp};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::collections::BTreeSet;

const AMOUNT: i64 = 7900;

fn t0() -> Timestamp {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
}

fn proposal() -> RefundProposal {
    let draft = ProposalDraft {
        order_id: "4821".into(),
        payment_reference: "pay_4821".into(),
        amount: Money::new(AMOUNT, Currency::EUR),
        lines: Vec::new(),
        evidence: vec![
            Evidence {
                kind: domain::proposal::EvidenceKind::Order,
                reference: "order:4821".into(),
                title: "Order 4821".into(),
                section: None,
                version: "3".into(),
                quote: "delivered 12 days ago".into(),
            },
            Evidence::policy(
                "returns-policy:section-3",
                "Returns policy",
                Some("3".into()),
                "9f2c",
                "Unopened items within 30 days.",
            ),
        ],
        open_questions: vec![OpenQuestion::new("Was the parcel opened?", Asker::Customer)],
        recommendation: "Refund 79.00 EUR.".into(),
        provenance: Provenance {
            agent: "refund_specialist".into(),
            conversation_id: None,
            on_behalf_of: Some("usr_customer".into()),
            requested_by: "usr_customer".into(),
            submitted_by: None,
        },
    };
    RefundProposal::new(draft, "prp_17", t0(), Duration::hours(24)).unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Approve,
    Reject,
    Expire,
    Supersede,
    Claim,
    Invalidate,
    MarkSent,
    Succeeded,
    Declined,
    Unknown,
    NotFound,
    Escalate,
    Verified,
    Resolve,
}

const ALL_KINDS: [Kind; 14] = [
    Kind::Approve,
    Kind::Reject,
    Kind::Expire,
    Kind::Supersede,
    Kind::Claim,
    Kind::Invalidate,
    Kind::MarkSent,
    Kind::Succeeded,
    Kind::Declined,
    Kind::Unknown,
    Kind::NotFound,
    Kind::Escalate,
    Kind::Verified,
    Kind::Resolve,
];

/// Commands that plausibly fit a status, weighted by repetition so runs go
/// deep rather than ending at the first rejection.
fn fitting(status: ProposalStatus) -> &'static [Kind] {
    use Kind::*;
    match status {
        ProposalStatus::AwaitingApproval => &[
            Approve, Approve, Approve, Approve, Approve, Approve, Expire, Reject, Supersede,
        ],
        ProposalStatus::Approved => &[Claim, Claim, Claim, Claim, Invalidate, Expire],
        ProposalStatus::Executing => &[
            MarkSent, MarkSent, Succeeded, Succeeded, Succeeded, Declined, Unknown, Unknown,
            NotFound, NotFound, Claim, Invalidate, Escalate,
        ],
        ProposalStatus::OutcomeUnknown => {
            &[Claim, Claim, Claim, Succeeded, Declined, Escalate, Resolve]
        }
        ProposalStatus::Succeeded => &[Verified, Verified, Verified, Verified, Escalate],
        ProposalStatus::NeedsAttention => &[Resolve],
        _ => &ALL_KINDS,
    }
}

const APPROVERS: [&str; 4] = ["usr_anna", "usr_boris", "usr_chen", "usr_anna"];

fn receipt(amount: i64, id: &str) -> Receipt {
    Receipt {
        provider: "sandbox".into(),
        provider_refund_id: id.into(),
        amount: Money::new(amount, Currency::EUR),
        status: "succeeded".into(),
        recorded_at: t0(),
    }
}

fn listed(amount: i64, id: &str, status: &str) -> ProviderRefund {
    ProviderRefund {
        provider_refund_id: id.into(),
        amount: Money::new(amount, Currency::EUR),
        status: status.into(),
    }
}

/// Builds a command of `kind`; `a` and `b` pick its parameters, including
/// some malformed ones (blank reasons, leases in the past).
fn command(kind: Kind, a: u8, b: u8, required: u8, now: Timestamp) -> Command {
    let minutes = |m: u8| now + Duration::minutes(i64::from(m));
    match kind {
        Kind::Approve => Command::Approve {
            approval: ApprovalRef {
                approval_id: format!("apr_{a}_{}", now.timestamp()),
                approver_id: APPROVERS[usize::from(a) % APPROVERS.len()].into(),
                at: now,
                expires_at: now + Duration::minutes(60),
            },
            required_approvals: required,
        },
        Kind::Reject => Command::Reject {
            by: "usr_anna".into(),
            reason: if a.is_multiple_of(8) {
                " ".into()
            } else {
                "opened".into()
            },
        },
        Kind::Expire => Command::Expire,
        Kind::Supersede => Command::Supersede {
            by: "prp_18".into(),
        },
        Kind::Claim => Command::Claim {
            executor: ["worker-1", "worker-2"][usize::from(a % 2)].into(),
            lease_until: minutes(b % 30),
        },
        Kind::Invalidate => Command::Invalidate {
            reason: InvalidationReason::OrderChanged,
        },
        Kind::MarkSent => Command::MarkSent,
        Kind::Succeeded => Command::RecordSucceeded {
            receipt: receipt(
                if a.is_multiple_of(5) {
                    AMOUNT + 1
                } else {
                    AMOUNT
                },
                "re_1",
            ),
        },
        Kind::Declined => Command::RecordDeclined {
            reason: "card closed".into(),
            receipt: None,
        },
        Kind::Unknown => Command::RecordUnknown {
            reason: "timeout".into(),
            retry_at: minutes(b % 10),
            max_checks: u32::from(a % 4),
        },
        Kind::NotFound => Command::StatusNotFound {
            within_key_retention: a.is_multiple_of(2),
        },
        Kind::Escalate => Command::Escalate {
            reason: "key reused with different parameters".into(),
        },
        Kind::Verified => Command::RecordVerified {
            refunds: match a % 6 {
                0 | 1 => vec![listed(AMOUNT, "re_1", "succeeded")],
                2 => vec![],
                3 => vec![
                    listed(AMOUNT, "re_1", "succeeded"),
                    listed(AMOUNT, "re_2", "succeeded"),
                ],
                4 => vec![listed(AMOUNT - 1, "re_1", "succeeded")],
                _ => vec![listed(AMOUNT, "re_1", "pending")],
            },
            books: None,
        },
        Kind::Resolve => Command::Resolve {
            by: "usr_ops".into(),
            resolution: match a % 5 {
                0 => Resolution::RefundConfirmed {
                    receipt: receipt(AMOUNT, "re_manual"),
                    note: "checked".into(),
                },
                1 => Resolution::RefundConfirmed {
                    receipt: receipt(AMOUNT * 2, "re_manual"),
                    note: "checked".into(),
                },
                2 => Resolution::NoRefund {
                    note: "nothing under the key".into(),
                    retry_as: Some("prp_retry".into()),
                },
                3 => Resolution::NoRefund {
                    note: "nothing under the key".into(),
                    retry_as: None,
                },
                _ => Resolution::Closed {
                    reason: "refunded in store credit".into(),
                },
            },
        },
    }
}

#[derive(Debug, Clone)]
struct Step {
    advance_minutes: i64,
    fit: bool,
    pick: u8,
    a: u8,
    b: u8,
}

#[derive(Debug, Clone)]
struct Scenario {
    required: u8,
    steps: Vec<Step>,
}

fn step() -> impl Strategy<Value = Step> {
    (
        prop_oneof![4 => 0i64..15, 1 => 0i64..720],
        prop::bool::weighted(0.8),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
    )
        .prop_map(|(advance_minutes, fit, pick, a, b)| Step {
            advance_minutes,
            fit,
            pick,
            a,
            b,
        })
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (1u8..=2, prop::collection::vec(step(), 1..60))
        .prop_map(|(required, steps)| Scenario { required, steps })
}

fn is_dead_end(status: ProposalStatus) -> bool {
    matches!(
        status,
        ProposalStatus::Expired
            | ProposalStatus::Superseded
            | ProposalStatus::Rejected
            | ProposalStatus::Invalidated
    )
}

/// (g) probes: every non-terminal state accepts at least one of these, and a
/// terminal state accepts none of them (nor any generated command).
fn probes(now: Timestamp) -> Vec<(Command, Timestamp)> {
    let late = now + Duration::days(30);
    let mut probes: Vec<(Command, Timestamp)> = vec![
        (command(Kind::Reject, 1, 0, 1, now), now),
        (Command::Expire, late),
        (command(Kind::Claim, 0, 5, 1, late), late),
        (command(Kind::Invalidate, 0, 0, 1, now), now),
        (Command::MarkSent, now),
        (command(Kind::Declined, 0, 0, 1, now), now),
        (command(Kind::Verified, 0, 0, 1, now), now),
        (command(Kind::Resolve, 3, 0, 1, now), now),
    ];
    for kind in ALL_KINDS {
        for a in 0..6u8 {
            probes.push((command(kind, a, 7, 2, now), now));
        }
    }
    probes
}

/// Runs a scenario, checking the invariants after every step; returns the
/// statuses reached (for the coverage test).
fn run(scenario: &Scenario) -> Result<BTreeSet<ProposalStatus>, TestCaseError> {
    let proposal = proposal();
    let mut state = ProposalState::initial(&proposal);
    let mut now = t0();
    let mut seen = BTreeSet::from([state.status()]);
    let mut approvals_completed = false;
    let mut reached_succeeded = false;
    let mut ever_executing = false;
    let mut ever_sent = false;
    let mut refund_requests = 0usize;

    for step in &scenario.steps {
        now += Duration::minutes(step.advance_minutes);
        let kinds = if step.fit {
            fitting(state.status())
        } else {
            &ALL_KINDS
        };
        let kind = kinds[usize::from(step.pick) % kinds.len()];
        let cmd = command(kind, step.a, step.b, scenario.required, now);
        let was_sent = matches!(state, ProposalState::Executing { sent: true, .. });
        let result = apply(&proposal, &state, cmd.clone(), now);

        // (c) nothing leaves a terminal state.
        if state.is_terminal() {
            prop_assert!(result.is_err(), "{:?} accepted {cmd:?}", state.status());
            continue;
        }
        let Ok(t) = result else { continue };

        for effect in &t.effects {
            match effect {
                // (a) every key is the proposal id.
                Effect::SendRefund { idempotency_key }
                | Effect::QueryStatus { idempotency_key }
                | Effect::Verify { idempotency_key } => {
                    prop_assert_eq!(idempotency_key, &proposal.id);
                }
                _ => {}
            }
        }
        // (h) a person's resolution never sends anything; only a refund the
        // provider confirmed is booked on the order.
        if let Command::Resolve { resolution, .. } = &cmd {
            prop_assert!(!t.sends_refund(), "a resolution sent a refund: {cmd:?}");
            let books = t
                .effects
                .iter()
                .any(|e| matches!(e, Effect::BookRefundOnOrder { .. }));
            prop_assert_eq!(
                books,
                matches!(resolution, Resolution::RefundConfirmed { .. })
            );
        }
        if t.sends_refund() {
            refund_requests += 1;
            // (b) nothing is sent once the provider confirmed the refund.
            prop_assert!(!reached_succeeded, "SendRefund after succeeded: {cmd:?}");
            // (e) only after an approval completed the required approvals.
            prop_assert!(approvals_completed, "SendRefund without approval: {cmd:?}");
            // A call that may have gone out is only repeated under the same
            // key while the provider still remembers it; successors query.
            if was_sent {
                prop_assert_eq!(
                    &cmd,
                    &Command::StatusNotFound {
                        within_key_retention: true
                    }
                );
            }
        }
        if let (Command::Approve { .. }, ProposalState::Approved { approvals, .. }) =
            (&cmd, &t.next)
        {
            let mut approvers: Vec<&str> =
                approvals.iter().map(|a| a.approver_id.as_str()).collect();
            approvers.sort_unstable();
            approvers.dedup();
            prop_assert!(approvers.len() >= usize::from(scenario.required));
            prop_assert!(approvals.iter().all(|a| a.counts_at(now)));
            approvals_completed = true;
        }
        // (f) verified means the approved amount, exactly.
        if let ProposalState::Verified { receipt, .. } = &t.next {
            prop_assert_eq!(receipt.amount, proposal.amount);
        }

        state = t.next;
        seen.insert(state.status());
        reached_succeeded |= state.status() == ProposalStatus::Succeeded;
        ever_executing |= state.status() == ProposalStatus::Executing;
        ever_sent |= matches!(state, ProposalState::Executing { sent: true, .. });

        // (d) dead ends never executed; an invalidated proposal never sent.
        match state.status() {
            ProposalStatus::Expired | ProposalStatus::Superseded | ProposalStatus::Rejected => {
                prop_assert!(!ever_executing && refund_requests == 0);
            }
            ProposalStatus::Invalidated => prop_assert!(!ever_sent),
            _ => {}
        }
        if is_dead_end(state.status()) {
            prop_assert!(!reached_succeeded);
        }

        // (g) terminal exactly when every command is refused.
        let accepted = probes(now)
            .into_iter()
            .filter(|(probe, at)| apply(&proposal, &state, probe.clone(), *at).is_ok())
            .count();
        prop_assert_eq!(
            state.is_terminal(),
            accepted == 0,
            "{:?} accepted {} probes",
            state.status(),
            accepted
        );

        // Stored states read back unchanged.
        let json = serde_json::to_string(&state).unwrap();
        prop_assert_eq!(
            &serde_json::from_str::<ProposalState>(&json).unwrap(),
            &state
        );
        prop_assert_eq!(
            state.status().as_str().parse::<ProposalStatus>().unwrap(),
            state.status()
        );
    }
    Ok(seen)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_command_sequences_keep_every_invariant(scenario in scenario()) {
        run(&scenario)?;
    }
}

/// Guards the generator: if runs stopped reaching deep states, the
/// properties above would pass vacuously.
#[test]
fn the_generated_scenarios_reach_every_status() {
    let mut runner = TestRunner::deterministic();
    let strategy = scenario();
    let mut seen = BTreeSet::new();
    for _ in 0..1000 {
        let scenario = strategy.new_tree(&mut runner).unwrap().current();
        seen.extend(run(&scenario).unwrap());
    }
    let missing: Vec<_> = ProposalStatus::ALL
        .into_iter()
        .filter(|s| !seen.contains(s))
        .collect();
    assert!(missing.is_empty(), "never reached: {missing:?}");
}

#[test]
fn the_flagship_refund_is_sent_once_and_verified() {
    let proposal = proposal();
    let at = |m: i64| t0() + Duration::minutes(m);
    let steps = [
        (
            command(Kind::Approve, 0, 0, 1, at(90)),
            at(90),
            ProposalStatus::Approved,
        ),
        (
            command(Kind::Claim, 0, 5, 1, at(91)),
            at(91),
            ProposalStatus::Executing,
        ),
        (Command::MarkSent, at(91), ProposalStatus::Executing),
        (
            command(Kind::Unknown, 1, 2, 3, at(92)),
            at(92),
            ProposalStatus::OutcomeUnknown,
        ),
        (
            command(Kind::Claim, 1, 5, 1, at(94)),
            at(94),
            ProposalStatus::Executing,
        ),
        (
            command(Kind::Succeeded, 1, 0, 1, at(95)),
            at(95),
            ProposalStatus::Succeeded,
        ),
        (
            command(Kind::Verified, 0, 0, 1, at(96)),
            at(96),
            ProposalStatus::Verified,
        ),
    ];
    let mut state = ProposalState::initial(&proposal);
    let mut sends = 0;
    for (cmd, now, expected) in steps {
        let t = apply(&proposal, &state, cmd, now).unwrap();
        sends += t
            .effects
            .iter()
            .filter(|e| matches!(e, Effect::SendRefund { .. }))
            .count();
        assert_eq!(t.next.status(), expected);
        state = t.next;
    }
    assert_eq!(sends, 1);
    assert_eq!(state.receipt().unwrap().amount, proposal.amount);
}
