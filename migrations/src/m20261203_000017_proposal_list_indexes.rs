//! Indexes for the orders proposals are listed in: the API's unfiltered
//! list (`created_at DESC, id`) scanned and sorted the whole table, and the
//! review queue sorts awaiting proposals by age and by amount as well as by
//! expiry (which `idx_proposals_status_expiry` already serves).

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261203_000017_proposal_list_indexes"
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Proposals {
    Table,
    Id,
    Status,
    CreatedAt,
    AmountMinor,
}

/// Each index: its name and its columns in order.
fn indexes() -> [(&'static str, Vec<(Proposals, IndexOrder)>); 3] {
    use IndexOrder::{Asc, Desc};
    [
        (
            "idx_proposals_created_desc_id",
            vec![(Proposals::CreatedAt, Desc), (Proposals::Id, Asc)],
        ),
        (
            "idx_proposals_status_created_id",
            vec![
                (Proposals::Status, Asc),
                (Proposals::CreatedAt, Desc),
                (Proposals::Id, Asc),
            ],
        ),
        (
            "idx_proposals_status_amount_id",
            vec![
                (Proposals::Status, Asc),
                (Proposals::AmountMinor, Asc),
                (Proposals::Id, Asc),
            ],
        ),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, columns) in indexes() {
            let mut index = Index::create()
                .name(name)
                .table(Proposals::Table)
                .if_not_exists()
                .to_owned();
            for column in columns {
                index.col(column);
            }
            manager.create_index(index).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, _) in indexes() {
            manager
                .drop_index(Index::drop().name(name).table(Proposals::Table).to_owned())
                .await?;
        }
        Ok(())
    }
}
