//! Unit tests for `execute.rs`: claims, sending, unknown outcomes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::Timestamp;
use crate::proposal::fixtures::{self, t0};
use crate::proposal::{
    Command, Effect, InvalidationReason, ProposalState, ProposalStatus, Resolution,
    TransitionError, Uncertainty, apply,
};
use chrono::Duration;

fn at(minutes: i64) -> Timestamp {
    t0() + Duration::minutes(minutes)
}

fn claim(executor: &str, lease_minutes: i64) -> Command {
    Command::Claim {
        executor: executor.into(),
        lease_until: at(lease_minutes),
    }
}

fn key() -> String {
    "prp_17".into()
}

fn run(
    state: &ProposalState,
    command: Command,
    now: Timestamp,
) -> Result<crate::proposal::Transition, TransitionError> {
    apply(&fixtures::proposal(), state, command, now)
}

fn unknown(now: Timestamp, max_checks: u32) -> Command {
    Command::RecordUnknown {
        reason: "provider timed out".into(),
        retry_at: now + Duration::minutes(1),
        max_checks,
    }
}

#[test]
fn claiming_an_approved_proposal_revalidates_then_sends_under_the_proposal_id() {
    let t = run(&fixtures::approved(), claim("worker-1", 5), t0()).unwrap();
    assert_eq!(t.next, fixtures::executing(false));
    assert_eq!(
        t.effects,
        vec![
            Effect::Revalidate,
            Effect::SendRefund {
                idempotency_key: key()
            }
        ]
    );
}

#[test]
fn an_approval_that_expired_before_the_claim_cannot_be_executed() {
    assert!(matches!(
        run(&fixtures::approved(), claim("worker-1", 65), at(60)),
        Err(TransitionError::Expired { .. })
    ));
}

#[test]
fn a_claim_needs_a_named_executor_and_a_lease_in_the_future() {
    assert!(matches!(
        run(&fixtures::approved(), claim("worker-1", 0), t0()),
        Err(TransitionError::Invalid(_))
    ));
    assert!(matches!(
        run(&fixtures::approved(), claim(" ", 5), t0()),
        Err(TransitionError::Invalid(_))
    ));
}

#[test]
fn a_held_lease_cannot_be_taken_over() {
    assert_eq!(
        run(&fixtures::executing(true), claim("worker-2", 10), at(4)),
        Err(TransitionError::LeaseHeld {
            executor: "worker-1".into(),
            lease_until: at(5)
        })
    );
}

#[test]
fn a_successor_queries_status_instead_of_resending() {
    let t = run(&fixtures::executing(true), claim("worker-2", 10), at(5)).unwrap();
    assert_eq!(
        t.effects,
        vec![Effect::QueryStatus {
            idempotency_key: key()
        }]
    );
    assert!(!t.sends_refund());
    let ProposalState::Executing {
        attempt,
        executor,
        sent,
        ..
    } = t.next
    else {
        panic!("still executing");
    };
    assert_eq!((attempt, executor.as_str(), sent), (2, "worker-2", true));
}

#[test]
fn a_timeout_is_outcome_unknown_never_failed() {
    let t = run(&fixtures::executing(true), unknown(at(1), 5), at(1)).unwrap();
    assert_eq!(t.next.status(), ProposalStatus::OutcomeUnknown);
    assert!(t.effects.is_empty());
    let ProposalState::OutcomeUnknown {
        checks,
        since,
        escalated,
        next_check_at,
        ..
    } = t.next
    else {
        panic!("outcome unknown");
    };
    assert_eq!((checks, since, escalated), (1, at(1), false));
    assert_eq!(next_check_at, at(2));
}

#[test]
fn a_status_check_waits_until_it_is_due_and_then_only_queries() {
    let unknown_state = run(&fixtures::executing(true), unknown(at(1), 5), at(1))
        .unwrap()
        .next;
    assert_eq!(
        run(&unknown_state, claim("worker-2", 10), at(1)),
        Err(TransitionError::CheckNotDue {
            next_check_at: at(2)
        })
    );
    let t = run(&unknown_state, claim("worker-2", 10), at(2)).unwrap();
    assert_eq!(t.event, "status_check_started");
    assert_eq!(
        t.effects,
        vec![Effect::QueryStatus {
            idempotency_key: key()
        }]
    );
}

#[test]
fn repeated_unknown_checks_tell_a_person_once_and_keep_checking() {
    let mut state = fixtures::executing(true);
    let mut notified = 0;
    for minute in 1..=4 {
        let now = at(minute * 10);
        let t = run(&state, unknown(now, 2), now).unwrap();
        notified += t
            .effects
            .iter()
            .filter(|e| matches!(e, Effect::NotifyPerson { .. }))
            .count();
        assert_eq!(t.next.status(), ProposalStatus::OutcomeUnknown);
        state = run(
            &t.next,
            claim("worker-2", minute * 10 + 5),
            now + Duration::minutes(1),
        )
        .unwrap()
        .next;
    }
    assert_eq!(notified, 1);
    let ProposalState::Executing {
        unknown:
            Some(Uncertainty {
                checks,
                escalated,
                since,
            }),
        ..
    } = state
    else {
        panic!("executing with a history of unknowns");
    };
    assert_eq!((checks, escalated, since), (4, true, at(10)));
}

#[test]
fn nothing_found_within_key_retention_resends_under_the_same_key() {
    let command = Command::StatusNotFound {
        within_key_retention: true,
    };
    let t = run(&fixtures::executing(true), command, at(1)).unwrap();
    assert_eq!(t.next, fixtures::executing(true));
    assert_eq!(
        t.effects,
        vec![Effect::SendRefund {
            idempotency_key: key()
        }]
    );
}

#[test]
fn nothing_found_after_key_retention_needs_a_person_never_a_new_key() {
    let command = Command::StatusNotFound {
        within_key_retention: false,
    };
    let t = run(&fixtures::executing(true), command, at(1)).unwrap();
    assert_eq!(t.next.status(), ProposalStatus::NeedsAttention);
    assert!(!t.sends_refund());
    assert!(matches!(t.effects[0], Effect::NotifyPerson { .. }));
}

#[test]
fn nothing_found_when_nothing_was_sent_revalidates_and_sends() {
    let command = Command::StatusNotFound {
        within_key_retention: false,
    };
    let t = run(&fixtures::executing(false), command, at(1)).unwrap();
    assert_eq!(
        t.effects,
        vec![
            Effect::Revalidate,
            Effect::SendRefund {
                idempotency_key: key()
            }
        ]
    );
}

#[test]
fn an_approved_or_unsent_proposal_can_be_invalidated() {
    let command = || Command::Invalidate {
        reason: InvalidationReason::OrderChanged,
    };
    for state in [fixtures::approved(), fixtures::executing(false)] {
        let t = run(&state, command(), t0()).unwrap();
        assert_eq!(t.next.status(), ProposalStatus::Invalidated);
    }
}

#[test]
fn a_proposal_cannot_be_invalidated_once_the_call_may_have_gone_out() {
    let sent = run(&fixtures::executing(false), Command::MarkSent, t0())
        .unwrap()
        .next;
    assert_eq!(sent, fixtures::executing(true));
    let command = Command::Invalidate {
        reason: InvalidationReason::OrderChanged,
    };
    assert_eq!(run(&sent, command, t0()), Err(TransitionError::AlreadySent));
}

#[test]
fn marking_sent_twice_is_harmless() {
    let t = run(&fixtures::executing(true), Command::MarkSent, t0()).unwrap();
    assert_eq!(t.next, fixtures::executing(true));
}

#[test]
fn a_success_books_the_refund_and_asks_for_verification() {
    let command = Command::RecordSucceeded {
        receipt: fixtures::receipt(7900),
    };
    let t = run(&fixtures::executing(true), command, at(1)).unwrap();
    assert_eq!(t.next.status(), ProposalStatus::Succeeded);
    assert_eq!(
        t.effects,
        vec![
            Effect::BookRefundOnOrder {
                order_id: "4821".into(),
                amount: fixtures::receipt(7900).amount,
                provider_refund_id: "re_1".into()
            },
            Effect::Verify {
                idempotency_key: key()
            }
        ]
    );
}

#[test]
fn a_receipt_for_another_amount_needs_a_person() {
    let command = Command::RecordSucceeded {
        receipt: fixtures::receipt(79_000),
    };
    let t = run(&fixtures::executing(true), command, at(1)).unwrap();
    assert_eq!(t.next.status(), ProposalStatus::NeedsAttention);
    assert_eq!(t.next.receipt(), Some(&fixtures::receipt(79_000)));
}

#[test]
fn a_late_answer_settles_an_unknown_outcome() {
    let unknown_state = run(&fixtures::executing(true), unknown(at(1), 5), at(1))
        .unwrap()
        .next;
    let declined = Command::RecordDeclined {
        reason: "charge already refunded".into(),
        receipt: None,
    };
    let t = run(&unknown_state, declined, at(3)).unwrap();
    assert_eq!(t.next.status(), ProposalStatus::Failed);
}

#[test]
fn a_reused_key_is_escalated_to_a_person() {
    let command = Command::Escalate {
        reason: "the provider says key prp_17 was used for a different refund".into(),
    };
    let t = run(&fixtures::executing(true), command, at(1)).unwrap();
    assert_eq!(t.next.status(), ProposalStatus::NeedsAttention);
    assert_eq!(t.event, "needs_attention");
}

#[test]
fn only_an_escalated_unknown_outcome_can_be_resolved_by_a_person() {
    let resolve = || Command::Resolve {
        by: "usr_ops".into(),
        resolution: Resolution::NoRefund {
            note: "provider lists no refund under the key".into(),
            retry_as: None,
        },
    };
    let calm = run(&fixtures::executing(true), unknown(at(1), 5), at(1))
        .unwrap()
        .next;
    assert!(matches!(
        run(&calm, resolve(), at(2)),
        Err(TransitionError::NotAllowed { .. })
    ));
    let escalated = run(&fixtures::executing(true), unknown(at(1), 1), at(1))
        .unwrap()
        .next;
    let t = run(&escalated, resolve(), at(2)).unwrap();
    assert_eq!(t.next.status(), ProposalStatus::Failed);
}
