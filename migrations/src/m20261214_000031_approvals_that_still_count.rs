//! An approver's approvals that still count, found without reading the ones
//! that lapsed: an approval stops counting at its `expires_at` (the approver
//! may then approve again), so the review queue's "waiting for a second
//! approver" holds only proposals with an approval of theirs not yet
//! lapsed. With the expiry in the index, that is a range of the few recent
//! approvals instead of every decision the person ever made. It replaces
//! the index of migration 000018, whose leading columns it keeps ("decided
//! by me" reads by approver alone), so a decision still writes one entry.

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261214_000031_approvals_that_still_count"
    }
}

#[derive(DeriveIden)]
enum Approvals {
    Table,
    ApproverId,
    Decision,
    ExpiresAt,
    ProposalId,
}

const REPLACED: &str = "idx_approvals_approver_decision_proposal";
const INDEX: &str = "idx_approvals_approver_decision_expiry";

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
                    .col(Approvals::ExpiresAt)
                    .col(Approvals::ProposalId)
                    .if_not_exists()
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(REPLACED)
                    .table(Approvals::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(REPLACED)
                    .table(Approvals::Table)
                    .col(Approvals::ApproverId)
                    .col(Approvals::Decision)
                    .col(Approvals::ProposalId)
                    .if_not_exists()
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(Index::drop().name(INDEX).table(Approvals::Table).to_owned())
            .await
    }
}
