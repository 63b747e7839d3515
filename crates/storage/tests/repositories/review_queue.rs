//! The review queue: filtered, sorted and paged in the database, and split
//! by what the approver already did.

use super::{add_user, now};
use chrono::Duration;
use domain::proposal::{
    Approval, ConditionsSnapshot, Decision, ProposalState, Provenance, RefundProposal,
};
use domain::{Currency, Money, Role};
use sea_orm::ConnectionTrait;
use storage::review_queue::{
    QueueFilter, QueueSort, QueueTotals, QueueView, count, decided_by, page, totals,
};
use storage::testing::TestDatabase;

/// A proposal awaiting approval, proposed `age_hours` ago.
fn proposal(id: &str, order: &str, amount_minor: i64, age_hours: i64) -> RefundProposal {
    let created_at = now() - Duration::hours(age_hours);
    RefundProposal {
        id: id.into(),
        order_id: order.into(),
        payment_reference: format!("pay_{order}"),
        amount: Money::new(amount_minor, Currency::EUR),
        lines: Vec::new(),
        evidence: Vec::new(),
        open_questions: Vec::new(),
        recommendation: "Refund it.".into(),
        provenance: Provenance {
            agent: "refund_specialist".into(),
            conversation_id: None,
            on_behalf_of: None,
            requested_by: "usr_someone".into(),
            submitted_by: None,
        },
        created_at,
        expires_at: created_at + Duration::hours(48),
        supersedes: None,
        action_digest: format!("digest-{id}"),
    }
}

fn approval(id: &str, proposal_id: &str, approver_id: &str) -> Approval {
    Approval {
        id: id.into(),
        proposal_id: proposal_id.into(),
        approver_id: approver_id.into(),
        decision: Decision::Approve,
        action_digest_shown: format!("digest-{proposal_id}"),
        conditions: ConditionsSnapshot {
            order_version: 1,
            order_hash: String::new(),
            policy_versions: Vec::new(),
            refundable_minor: 0,
        },
        decided_at: now(),
        expires_at: now() + Duration::hours(1),
    }
}

/// An approval that stopped counting an hour ago.
fn lapsed(id: &str, proposal_id: &str, approver_id: &str) -> Approval {
    Approval {
        decided_at: now() - Duration::hours(2),
        expires_at: now() - Duration::hours(1),
        ..approval(id, proposal_id, approver_id)
    }
}

fn ids(proposals: &[storage::proposals::StoredProposal]) -> Vec<&str> {
    proposals.iter().map(|p| p.proposal.id.as_str()).collect()
}

/// Stores a proposal in `state`, or awaiting approval when there is none.
async fn store(db: &impl ConnectionTrait, p: &RefundProposal, state: Option<ProposalState>) {
    let state = state.unwrap_or_else(|| ProposalState::initial(p));
    storage::proposals::insert(db, p, &state, None, now())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_proposal_the_approver_already_approved_leaves_their_to_decide_list_for_waiting_for_another()
 {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let anna = add_user(&test.db, "anna", &[Role::Approver]).await;
    let bob = add_user(&test.db, "bob", &[Role::Approver]).await;
    for (id, order, amount, age) in [("prp_a", "1", 30_000, 1), ("prp_b", "2", 5_000, 2)] {
        let p = proposal(id, order, amount, age);
        store(db, &p, None).await;
    }
    // Two approvals of anna's on one proposal (renewed after the first
    // lapsed) still make one card.
    for given in [
        lapsed("apv_1", "prp_a", &anna),
        approval("apv_1_renewed", "prp_a", &anna),
    ] {
        storage::approvals::insert(db, &given).await.unwrap();
    }
    let filter = QueueFilter::default();

    let anna_to_decide = QueueView::ToDecide {
        approver_id: &anna,
        at: now(),
    };
    let to_decide = page(db, anna_to_decide, &filter, 10, 0).await.unwrap();
    assert_eq!(ids(&to_decide), ["prp_b"]);
    assert_eq!(count(db, anna_to_decide, &filter).await.unwrap(), 1);
    let waiting = page(
        db,
        QueueView::WaitingForAnother {
            approver_id: &anna,
            at: now(),
        },
        &filter,
        10,
        0,
    )
    .await
    .unwrap();
    assert_eq!(ids(&waiting), ["prp_a"]);
    let anna_waiting = QueueView::WaitingForAnother {
        approver_id: &anna,
        at: now(),
    };
    assert_eq!(count(db, anna_waiting, &filter).await.unwrap(), 1);
    let for_bob = page(
        db,
        QueueView::ToDecide {
            approver_id: &bob,
            at: now(),
        },
        &filter,
        10,
        0,
    )
    .await
    .unwrap();
    assert_eq!(ids(&for_bob), ["prp_b", "prp_a"], "soonest expiry first");
    assert_eq!(decided_by(db, &anna, 10).await.unwrap(), ["prp_a"]);
    assert!(decided_by(db, &bob, 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_proposal_whose_approval_lapsed_is_the_approvers_to_decide_again_not_waiting_for_another()
{
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let anna = add_user(&test.db, "anna", &[Role::Approver]).await;
    let p = proposal("prp_a", "1", 30_000, 1);
    store(db, &p, None).await;
    storage::approvals::insert(db, &lapsed("apv_1", "prp_a", &anna))
        .await
        .unwrap();
    let filter = QueueFilter::default();
    let to_decide = QueueView::ToDecide {
        approver_id: &anna,
        at: now(),
    };
    let waiting = QueueView::WaitingForAnother {
        approver_id: &anna,
        at: now(),
    };

    let theirs = page(db, to_decide, &filter, 10, 0).await.unwrap();
    let aside = page(db, waiting, &filter, 10, 0).await.unwrap();

    assert_eq!(ids(&theirs), ["prp_a"], "hers to approve again");
    assert!(aside.is_empty(), "{:?}", ids(&aside));
    assert_eq!(count(db, waiting, &filter).await.unwrap(), 0);
    assert_eq!(
        totals(db, &anna, now()).await.unwrap(),
        QueueTotals {
            to_decide: 1,
            waiting_for_another: 0
        }
    );
}

#[tokio::test]
async fn the_queue_tab_counts_match_the_lists_and_leave_out_proposals_the_approver_decided_long_ago()
 {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let anna = add_user(&test.db, "anna", &[Role::Approver]).await;
    let bob = add_user(&test.db, "bob", &[Role::Approver]).await;
    let finished = ProposalState::Rejected {
        by: "usr_b".into(),
        reason: "no".into(),
    };
    let rows = [
        ("prp_a", "1", None),
        ("prp_b", "2", None),
        ("prp_c", "3", None),
        ("prp_old", "4", Some(finished)),
    ];
    for (id, order, state) in rows {
        let p = proposal(id, order, 1_000, 1);
        store(db, &p, state).await;
    }
    for (id, proposal_id, approver) in [
        ("apv_1", "prp_a", &anna),
        ("apv_2", "prp_old", &anna),
        ("apv_3", "prp_b", &bob),
        ("apv_4", "prp_a", &bob),
    ] {
        storage::approvals::insert(db, &approval(id, proposal_id, approver))
            .await
            .unwrap();
    }

    let for_anna = totals(db, &anna, now()).await.unwrap();
    let for_bob = totals(db, &bob, now()).await.unwrap();

    assert_eq!(
        for_anna,
        QueueTotals {
            to_decide: 2,
            waiting_for_another: 1
        },
        "prp_b and prp_c to decide, prp_a waiting; the finished prp_old in neither"
    );
    assert_eq!(
        for_bob,
        QueueTotals {
            to_decide: 1,
            waiting_for_another: 2
        }
    );
    let everything = QueueFilter::default();
    for (approver, counted) in [(&anna, for_anna), (&bob, for_bob)] {
        let to_decide = QueueView::ToDecide {
            approver_id: approver,
            at: now(),
        };
        let waiting = QueueView::WaitingForAnother {
            approver_id: approver,
            at: now(),
        };
        assert_eq!(
            counted.to_decide,
            count(db, to_decide, &everything).await.unwrap()
        );
        assert_eq!(
            counted.waiting_for_another,
            count(db, waiting, &everything).await.unwrap()
        );
    }
}

#[tokio::test]
async fn the_queue_filters_sorts_and_pages_in_the_database() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let anna = add_user(&test.db, "anna", &[Role::Approver]).await;
    let rows = [
        ("prp_1", "4821", 7_900, 30),
        ("prp_2", "4822", 12_000, 20),
        ("prp_3", "4823", 2_500, 10),
        ("prp_4", "4821", 40_000, 5),
    ];
    for (id, order, amount, age) in rows {
        let p = proposal(id, order, amount, age);
        store(db, &p, None).await;
    }
    let view = QueueView::ToDecide {
        approver_id: &anna,
        at: now(),
    };
    let sorted = |sort| QueueFilter {
        sort,
        ..QueueFilter::default()
    };

    let largest = page(db, view, &sorted(QueueSort::LargestAmount), 2, 0)
        .await
        .unwrap();
    assert_eq!(ids(&largest), ["prp_4", "prp_2"]);
    assert_eq!(
        count(db, view, &sorted(QueueSort::LargestAmount))
            .await
            .unwrap(),
        4
    );
    let second_page = page(db, view, &sorted(QueueSort::LargestAmount), 2, 2)
        .await
        .unwrap();
    assert_eq!(ids(&second_page), ["prp_1", "prp_3"]);
    let newest = page(db, view, &sorted(QueueSort::Newest), 1, 0)
        .await
        .unwrap();
    assert_eq!(ids(&newest), ["prp_4"]);
    let oldest = page(db, view, &sorted(QueueSort::Oldest), 2, 0)
        .await
        .unwrap();
    assert_eq!(ids(&oldest), ["prp_1", "prp_2"]);

    let between = QueueFilter {
        min_amount_minor: Some(5_000),
        max_amount_minor: Some(20_000),
        ..QueueFilter::default()
    };
    let found = page(db, view, &between, 10, 0).await.unwrap();
    assert_eq!(ids(&found), ["prp_1", "prp_2"]);
    assert_eq!(count(db, view, &between).await.unwrap(), 2);
    assert!(between.narrows() && !sorted(QueueSort::Oldest).narrows());
    let one_order = QueueFilter {
        order_id: Some("4821".into()),
        sort: QueueSort::SmallestAmount,
        ..QueueFilter::default()
    };
    assert_eq!(
        ids(&page(db, view, &one_order, 10, 0).await.unwrap()),
        ["prp_1", "prp_4"]
    );
    let waiting_long = QueueFilter {
        created_before: Some(now() - Duration::hours(15)),
        ..QueueFilter::default()
    };
    assert_eq!(
        ids(&page(db, view, &waiting_long, 10, 0).await.unwrap()),
        ["prp_1", "prp_2"]
    );
    let expiring = QueueFilter {
        expires_before: Some(now() + Duration::hours(20)),
        ..QueueFilter::default()
    };
    assert_eq!(
        ids(&page(db, view, &expiring, 10, 0).await.unwrap()),
        ["prp_1"]
    );
}

#[tokio::test]
async fn proposals_of_equal_amount_and_age_each_appear_on_exactly_one_page_in_every_order() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let anna = add_user(&test.db, "anna", &[Role::Approver]).await;
    let created = ["prp_x", "prp_y", "prp_z"];
    for (n, id) in created.iter().enumerate() {
        let mut p = proposal(id, &format!("49{n}"), 5_000, 3);
        p.created_at = now() - Duration::hours(3);
        p.expires_at = p.created_at + Duration::hours(48);
        store(db, &p, None).await;
    }
    let view = QueueView::ToDecide {
        approver_id: &anna,
        at: now(),
    };
    for sort in QueueSort::ALL {
        let filter = QueueFilter {
            sort,
            ..QueueFilter::default()
        };
        let mut seen = Vec::new();
        for offset in 0..3 {
            let one = page(db, view, &filter, 1, offset).await.unwrap();
            seen.extend(ids(&one).into_iter().map(str::to_owned));
        }
        seen.sort();
        assert_eq!(seen, created, "{sort:?}");
    }
}

#[tokio::test]
async fn the_other_live_and_in_flight_proposals_of_an_order_leave_out_finished_ones_and_other_orders()
 {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    let executing = ProposalState::Executing {
        attempt: 1,
        lease_until: now() + Duration::minutes(1),
        executor: "executor-1".into(),
        sent: true,
        unknown: None,
    };
    let rejected = ProposalState::Rejected {
        by: "usr_b".into(),
        reason: "no".into(),
    };
    let rows = [
        ("prp_wait", "4821", None),
        ("prp_send", "4821", Some(executing)),
        ("prp_done", "4821", Some(rejected)),
        ("prp_else", "4822", None),
    ];
    for (id, order, state) in rows {
        let p = proposal(id, order, 1_000, 1);
        store(db, &p, state).await;
    }
    let orders = ["4821".to_owned()];

    let live = storage::proposals::live_on_orders(db, &orders)
        .await
        .unwrap();
    assert_eq!(
        live,
        [
            ("4821".to_owned(), "prp_send".to_owned()),
            ("4821".to_owned(), "prp_wait".to_owned())
        ]
    );
    let in_flight = storage::proposals::in_flight_on_orders(db, &orders)
        .await
        .unwrap();
    assert_eq!(in_flight.reserved("4821", "prp_wait"), 1_000);
    assert_eq!(in_flight.reserved("4821", "prp_send"), 0);
}

#[tokio::test]
async fn at_each_start_sqlite_gathers_the_statistics_that_let_it_find_an_orders_proposals_by_the_order_index()
 {
    use sea_orm::Statement;
    let test = TestDatabase::new_sqlite().await;
    let db = test.db.conn();
    for n in 0..200 {
        let p = proposal(&format!("prp_{n}"), &format!("{n}"), 1_000, 1);
        store(db, &p, None).await;
    }
    // A restart: migrations (none pending) and the statistics.
    test.db.migrate().await.unwrap();

    let analysed = db
        .query_one(Statement::from_string(
            db.get_database_backend(),
            "SELECT stat FROM sqlite_stat1 WHERE idx = 'idx_proposals_order'",
        ))
        .await
        .unwrap()
        .expect("the order index has statistics");
    let stat: String = analysed.try_get("", "stat").unwrap();
    assert!(stat.starts_with("200 1"), "{stat}");
    let plan = db
        .query_all(Statement::from_string(
            db.get_database_backend(),
            "EXPLAIN QUERY PLAN SELECT id FROM proposals \
             WHERE order_id IN ('7', '8') AND status IN ('awaiting_approval', 'executing')",
        ))
        .await
        .unwrap();
    let detail: Vec<String> = plan
        .iter()
        .map(|row| row.try_get("", "detail").unwrap())
        .collect();
    assert!(
        detail.iter().any(|d| d.contains("idx_proposals_order")),
        "{detail:?}"
    );
}

#[tokio::test]
async fn proposals_read_by_id_come_back_in_the_order_asked_once_each_and_without_the_missing() {
    let test = TestDatabase::new().await;
    let db = test.db.conn();
    for n in 1..=8 {
        store(
            db,
            &proposal(&format!("prp_{n}"), &n.to_string(), 1_000, 1),
            None,
        )
        .await;
    }
    // Eight proposals in an order no hash map keeps by chance (1 in 40,320),
    // one asked twice and one that does not exist.
    let asked = [
        "prp_5", "prp_gone", "prp_2", "prp_8", "prp_5", "prp_1", "prp_7", "prp_3", "prp_6", "prp_4",
    ]
    .map(str::to_owned);

    let read = storage::proposals::get_many_in_order(db, &asked)
        .await
        .unwrap();

    assert_eq!(
        ids(&read),
        [
            "prp_5", "prp_2", "prp_8", "prp_1", "prp_7", "prp_3", "prp_6", "prp_4"
        ]
    );
    assert!(
        storage::proposals::get_many_in_order(db, &[])
            .await
            .unwrap()
            .is_empty()
    );
}
