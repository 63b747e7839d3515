//! The work runner's lanes and sweeps through the real engine: expiry with
//! its journal event, the daily journal check raising an alert, checkpoints
//! only when something changed, and a person told through an alert.

use super::support::*;
use chrono::{Duration as Span, SubsecRound};
use domain::proposal::ProposalStatus;
use engine::work::{self, WorkSchedule};
use engine::{Engine, ManualClock};
use runner::{Finished, Runner};
use sea_orm::ConnectionTrait;
use std::time::Duration;
use tokio::sync::broadcast;

/// An engine on a clock the test moves, with a runner that runs the sweeps.
async fn sweeping(h: &Harness) -> (Engine, ManualClock, Runner, broadcast::Receiver<Finished>) {
    let clock = ManualClock::starting_at(engine::now().trunc_subsecs(6));
    let engine = h.engine.clone().with_clock(clock.clock());
    let runner = engine.work.runner(&WorkSchedule::default());
    let events = runner.finished();
    runner.start().await.unwrap();
    (engine, clock, runner, events)
}

/// The next recorded run of `kind` (other kinds' runs are skipped).
async fn next_run_of(events: &mut broadcast::Receiver<Finished>, kind: &str) -> Finished {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match events.recv().await {
                Ok(event) if event.kind == kind => return event,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(closed) => panic!("the runner stopped: {closed}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{kind} did not run"))
}

async fn schedule_row(engine: &Engine, kind: &str) -> storage::work::WorkItem {
    storage::work::list(
        engine.db.conn(),
        &storage::work::WorkFilter {
            kind: Some(kind.to_owned()),
            ..storage::work::WorkFilter::default()
        },
        10,
    )
    .await
    .unwrap()
    .into_iter()
    .find(storage::work::WorkItem::is_schedule)
    .unwrap_or_else(|| panic!("no schedule for {kind}"))
}

#[tokio::test]
async fn a_proposal_nobody_decided_in_time_is_expired_by_the_scheduled_sweep_with_its_journal_event()
 {
    let h = Harness::start().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    let id = stored.proposal.id.clone();
    let (engine, clock, _runner, mut events) = sweeping(&h).await;

    clock.advance(Span::hours(49));
    engine.work.wake.lane(work::SCHEDULED);
    let run = next_run_of(&mut events, work::SWEEP_EXPIRY).await;
    assert_eq!(run.state, "queued", "the sweep runs again next period");
    assert_eq!(h.status(&id).await, ProposalStatus::Expired);
    let journal = h.events(&id).await;
    let last = journal.last().unwrap();
    assert_eq!(
        (last.kind.as_str(), last.to_status.as_deref()),
        ("expired", Some("expired"))
    );
    assert!(last.actor.starts_with("system:"), "{}", last.actor);
    let row = schedule_row(&engine, work::SWEEP_EXPIRY).await;
    assert_eq!(row.last_note.as_deref(), Some("1 expired"));
}

#[tokio::test]
async fn a_broken_journal_found_by_the_daily_check_raises_an_alert_and_shows_on_the_operations_view()
 {
    let h = Harness::start().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    h.engine
        .approvals
        .approve(
            &h.actor("approver").await,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap();
    h.settle(
        &stored.proposal.id,
        &[ProposalStatus::Verified],
        Duration::from_secs(20),
    )
    .await;
    h.engine
        .db
        .conn()
        .execute_unprepared(&format!(
            "UPDATE journal_events SET actor = 'user:manager' WHERE proposal_id = '{}' AND stream_seq = 2",
            stored.proposal.id
        ))
        .await
        .unwrap();
    let (engine, clock, _runner, mut events) = sweeping(&h).await;

    clock.advance(Span::minutes(2));
    engine.work.wake.lane(work::SCHEDULED);
    next_run_of(&mut events, work::AUDIT_VERIFY).await;
    let alerts = storage::work::alerts::open(engine.db.conn(), 10)
        .await
        .unwrap();
    let broken: Vec<_> = alerts
        .iter()
        .filter(|a| a.kind == work::alert_kind::JOURNAL_BROKEN)
        .collect();
    assert_eq!(broken.len(), 1, "{alerts:?}");
    assert!(
        broken[0].message.contains(&stored.proposal.id),
        "{}",
        broken[0].message
    );

    let view = engine
        .work
        .ops_view(&h.actor("manager").await)
        .await
        .unwrap();
    let audit = view.audit.expect("the last check is shown");
    assert!(!audit.intact);
    assert!(
        audit.finding.starts_with("journal BROKEN"),
        "{}",
        audit.finding
    );
    assert!(
        matches!(
            engine.work.ops_view(&h.actor("approver").await).await,
            Err(engine::work::ops::OpsError::Forbidden)
        ),
        "approvers do not see the operations view"
    );
}

#[tokio::test]
async fn an_idle_system_writes_no_journal_checkpoint_and_leaves_the_checkpoint_schedule_unclaimed()
{
    let h = Harness::start().await;
    let (engine, clock, _runner, mut events) = sweeping(&h).await;
    let count = || async {
        engine
            .db
            .conn()
            .query_one(sea_orm::Statement::from_string(
                engine.db.conn().get_database_backend(),
                "SELECT COUNT(*) AS n FROM journal_checkpoints",
            ))
            .await
            .unwrap()
            .unwrap()
            .try_get::<i64>("", "n")
            .unwrap()
    };

    // The demo data changed streams: the first period checkpoints them.
    clock.advance(Span::seconds(61));
    engine.work.wake.lane(work::SCHEDULED);
    let first = next_run_of(&mut events, work::JOURNAL_CHECKPOINT).await;
    assert_eq!(first.state, "queued");
    let after_first = count().await;
    assert!(after_first > 0);
    let ran_at = schedule_row(&engine, work::JOURNAL_CHECKPOINT)
        .await
        .last_run_at;

    // A day later nothing changed: the daily check runs (which proves the
    // lane looked), the checkpoint schedule is not even claimed.
    clock.advance(Span::days(1) + Span::minutes(1));
    engine.work.wake.lane(work::SCHEDULED);
    next_run_of(&mut events, work::AUDIT_VERIFY).await;
    assert_eq!(count().await, after_first, "no checkpoint without a change");
    let row = schedule_row(&engine, work::JOURNAL_CHECKPOINT).await;
    assert_eq!(
        row.last_run_at, ran_at,
        "a due sweep with nothing to do is not claimed"
    );
    assert_eq!(row.state, storage::work::QUEUED);
}

#[tokio::test]
async fn a_refund_that_needs_a_person_raises_an_alert_through_the_notifications_lane() {
    let h = Harness::start().await;
    let mut events = h.runner.finished();
    let id = h.approved_with_money_refunded_elsewhere().await;
    let status = h
        .settle(
            &id,
            &[ProposalStatus::Verified, ProposalStatus::NeedsAttention],
            Duration::from_secs(20),
        )
        .await;
    assert_eq!(status, ProposalStatus::NeedsAttention);
    let told = next_run_of(&mut events, work::PERSON_NOTIFY).await;
    assert_eq!(told.state, "done");
    let alerts = storage::work::alerts::open(h.engine.db.conn(), 10)
        .await
        .unwrap();
    let alert = alerts
        .iter()
        .find(|a| a.subject.as_deref() == Some(id.as_str()))
        .expect("an alert about the refund");
    assert_eq!(alert.kind, work::alert_kind::PROPOSAL_NEEDS_PERSON);
    assert!(alert.message.contains("60.00"), "{}", alert.message);

    let manager = h.actor("manager").await;
    h.engine
        .work
        .acknowledge_alert(&manager, &alert.id)
        .await
        .unwrap();
    let open = storage::work::alerts::open(h.engine.db.conn(), 10)
        .await
        .unwrap();
    assert!(
        open.iter().all(|a| a.id != alert.id),
        "acknowledged alerts leave the list"
    );
}

#[tokio::test]
async fn shutdown_ends_every_task_the_engine_started_the_live_relay_included() {
    let h = Harness::start().await;
    let mut live = h.engine.live.subscribe();
    h.engine.live.listening().await;
    let stored = h.propose(&h.actor("customer").await, "4821").await;
    h.engine
        .approvals
        .approve(
            &h.actor("approver").await,
            &stored.proposal.id,
            &stored.proposal.action_digest,
        )
        .await
        .unwrap();
    h.settle(
        &stored.proposal.id,
        &[ProposalStatus::Verified],
        Duration::from_secs(10),
    )
    .await;
    // The announcements went out (on PostgreSQL through the relay's NOTIFY
    // and back through its LISTEN).
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match live.recv().await {
                Ok(engine::live::LiveEvent::Changed(change))
                    if change.status == ProposalStatus::Verified.as_str() =>
                {
                    return;
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(closed) => panic!("live updates ended: {closed}"),
            }
        }
    })
    .await
    .expect("the verification was announced");

    assert!(
        h.engine.tasks.shutdown(Duration::from_secs(10)).await,
        "every task, the lanes and the live relay included, ended at shutdown"
    );
    assert_eq!(h.engine.tasks.running(), 0);
}
