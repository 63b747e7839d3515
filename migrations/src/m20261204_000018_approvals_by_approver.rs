//! An approver's own decisions, found without reading everyone's: the review
//! queue splits "to decide" from "waiting for another approver" by the
//! approvals a person gave, and "decided by me" lists them by time. Without
//! this index each of those scanned the whole approvals table, which grows
//! with every decision ever made.

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261204_000018_approvals_by_approver"
    }
}

#[derive(DeriveIden)]
enum Approvals {
    Table,
    ApproverId,
    Decision,
    ProposalId,
}

const INDEX: &str = "idx_approvals_approver_decision_proposal";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(Approvals::Table)
                    .col(Approvals::ApproverId)
                    .col(Approvals::Decision)
                    .col(Approvals::ProposalId)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(INDEX).table(Approvals::Table).to_owned())
            .await
    }
}
