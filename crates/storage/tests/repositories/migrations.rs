use storage::testing::TestDatabase;

#[tokio::test]
async fn migrations_apply_to_an_empty_database_and_running_them_again_changes_nothing() {
    let test = TestDatabase::unmigrated().await;
    test.db.migrate().await.unwrap();
    assert_eq!(storage::users::count(test.db.conn()).await.unwrap(), 0);
    let user = super::add_user(&test.db, "before-rerun", &[domain::Role::Customer]).await;

    test.db.migrate().await.unwrap();

    assert_eq!(storage::users::count(test.db.conn()).await.unwrap(), 1);
    assert!(
        storage::users::find_by_id(test.db.conn(), &user)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_second_connection_to_a_migrated_database_sees_the_schema() {
    let test = TestDatabase::new().await;
    let other = storage::Database::connect(&test.url).await.unwrap();
    other.migrate().await.unwrap();
    other.ping().await.unwrap();
    assert_eq!(storage::users::count(other.conn()).await.unwrap(), 0);
}

#[tokio::test]
async fn every_child_table_read_by_its_order_is_indexed_by_order() {
    use sea_orm::{ConnectionTrait, Statement};
    let test = TestDatabase::new().await;
    let backend = test.db.conn().get_database_backend();
    for (table, index) in [
        ("order_lines", "idx_order_lines_order"),
        ("order_refunds", "idx_order_refunds_order"),
        ("proposals", "idx_proposals_order"),
    ] {
        let sql = match test.db.backend() {
            storage::Backend::Sqlite => format!(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '{table}'"
            ),
            storage::Backend::Postgres => {
                format!("SELECT indexname FROM pg_indexes WHERE tablename = '{table}'")
            }
        };
        let names: Vec<String> = test
            .db
            .conn()
            .query_all(Statement::from_string(backend, sql))
            .await
            .unwrap()
            .iter()
            .map(|row| row.try_get_by_index::<String>(0).unwrap())
            .collect();
        assert!(names.iter().any(|n| n == index), "{table}: {names:?}");
    }
}

#[tokio::test]
async fn after_migrating_every_pooled_connection_plans_with_the_migrated_schema() {
    use sea_orm::{ConnectionTrait, Statement, TransactionTrait};
    let test = TestDatabase::new().await;
    let backend = test.db.conn().get_database_backend();
    // `idx_journal_proposal` was dropped by m20261201_000009; a connection
    // planning with the schema from before would still pick it.
    let sql = match test.db.backend() {
        storage::Backend::Sqlite => {
            "EXPLAIN QUERY PLAN SELECT seq FROM journal_events WHERE proposal_id = 'prp_1'"
        }
        storage::Backend::Postgres => {
            "EXPLAIN SELECT seq FROM journal_events WHERE proposal_id = 'prp_1'"
        }
    };
    // Open transactions hold their connections, so each plans on another one.
    let mut held = Vec::new();
    for _ in 0..8 {
        let tx = test.db.conn().begin().await.unwrap();
        let plan: Vec<String> = tx
            .query_all(Statement::from_string(backend, sql))
            .await
            .unwrap()
            .iter()
            .map(|row| match test.db.backend() {
                storage::Backend::Sqlite => row.try_get::<String>("", "detail").unwrap(),
                storage::Backend::Postgres => row.try_get_by_index::<String>(0).unwrap(),
            })
            .collect();
        assert!(
            !plan
                .iter()
                .any(|line| line.contains("idx_journal_proposal")),
            "{plan:?}"
        );
        held.push(tx);
    }
}

#[tokio::test]
async fn the_newest_first_proposal_list_is_read_from_an_index_instead_of_sorting_the_table() {
    use sea_orm::{ConnectionTrait, Statement};
    let test = TestDatabase::new().await;
    // PostgreSQL's planner picks a sequential scan on a tiny table whatever
    // the indexes; SQLite plans from the schema, so its plan is the check.
    if test.db.backend() != storage::Backend::Sqlite {
        return;
    }
    let backend = test.db.conn().get_database_backend();
    for sql in [
        "EXPLAIN QUERY PLAN SELECT id FROM proposals ORDER BY created_at DESC, id ASC LIMIT 50",
        "EXPLAIN QUERY PLAN SELECT id FROM proposals WHERE status = 'verified' ORDER BY created_at DESC, id ASC LIMIT 50",
        "EXPLAIN QUERY PLAN SELECT id FROM proposals WHERE status = 'awaiting_approval' ORDER BY amount_minor ASC, id ASC LIMIT 50",
    ] {
        let plan: Vec<String> = test
            .db
            .conn()
            .query_all(Statement::from_string(backend, sql))
            .await
            .unwrap()
            .iter()
            .map(|row| row.try_get::<String>("", "detail").unwrap())
            .collect();
        assert!(
            plan.iter()
                .any(|line| line.contains("INDEX idx_proposals_")),
            "{sql}: {plan:?}"
        );
        assert!(
            !plan.iter().any(|line| line.contains("TEMP B-TREE")),
            "{sql} sorts the table: {plan:?}"
        );
    }
}
