//! Who submitted each proposal: the signed-in account whose credential sent
//! it, so the queue can name it and a credential can be held to a number
//! of submissions per window (counted by `(submitted_by, created_at)`).
//! Earlier proposals were submitted by the account they name as requester.

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261203_000012_proposal_submitter"
    }
}

#[derive(DeriveIden)]
enum Proposals {
    Table,
    SubmittedBy,
    RequestedBy,
    CreatedAt,
}

const INDEX: &str = "idx_proposals_submitted_by_created_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Proposals::Table)
                    .add_column(ColumnDef::new(Proposals::SubmittedBy).string_len(64).null())
                    .to_owned(),
            )
            .await?;
        manager
            .exec_stmt(
                Query::update()
                    .table(Proposals::Table)
                    .value(Proposals::SubmittedBy, Expr::col(Proposals::RequestedBy))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(Proposals::Table)
                    .col(Proposals::SubmittedBy)
                    .col(Proposals::CreatedAt)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(INDEX).table(Proposals::Table).to_owned())
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Proposals::Table)
                    .drop_column(Proposals::SubmittedBy)
                    .to_owned(),
            )
            .await
    }
}
