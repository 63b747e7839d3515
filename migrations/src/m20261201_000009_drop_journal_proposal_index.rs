//! A proposal's journal events are exactly its stream, which the unique
//! `(stream, stream_seq)` index already serves; the separate index on
//! `proposal_id` only cost one more index insert for every event written.

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000009_drop_journal_proposal_index"
    }
}

#[derive(DeriveIden)]
enum JournalEvents {
    Table,
    ProposalId,
}

const INDEX: &str = "idx_journal_proposal";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(INDEX)
                    .table(JournalEvents::Table)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(JournalEvents::Table)
                    .col(JournalEvents::ProposalId)
                    .to_owned(),
            )
            .await
    }
}
