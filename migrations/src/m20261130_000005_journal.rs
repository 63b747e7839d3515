//! The journal: append-only events, hash-chained per stream (one stream per
//! proposal), with stream heads and periodic checkpoints that chain all
//! streams together.

use crate::utc;
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000005_journal"
    }
}

#[derive(DeriveIden)]
enum JournalEvents {
    Table,
    Seq,
    Stream,
    StreamSeq,
    ProposalId,
    OrderId,
    Actor,
    Kind,
    FromStatus,
    ToStatus,
    Payload,
    At,
    PrevHash,
    Hash,
}

#[derive(DeriveIden)]
enum JournalStreams {
    Table,
    Stream,
    Length,
    HeadHash,
    Dirty,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum JournalCheckpoints {
    Table,
    Id,
    At,
    Streams,
    PrevHash,
    Hash,
}

fn text(column: impl IntoIden, len: u32) -> ColumnDef {
    ColumnDef::new(column).string_len(len).not_null().take()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(JournalEvents::Table)
                    .col(
                        ColumnDef::new(JournalEvents::Seq)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(text(JournalEvents::Stream, 64))
                    .col(
                        ColumnDef::new(JournalEvents::StreamSeq)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(JournalEvents::ProposalId)
                            .string_len(64)
                            .null(),
                    )
                    .col(ColumnDef::new(JournalEvents::OrderId).string_len(64).null())
                    .col(text(JournalEvents::Actor, 200))
                    .col(text(JournalEvents::Kind, 64))
                    .col(
                        ColumnDef::new(JournalEvents::FromStatus)
                            .string_len(32)
                            .null(),
                    )
                    .col(
                        ColumnDef::new(JournalEvents::ToStatus)
                            .string_len(32)
                            .null(),
                    )
                    .col(ColumnDef::new(JournalEvents::Payload).text().not_null())
                    .col(utc(JournalEvents::At))
                    .col(text(JournalEvents::PrevHash, 64))
                    .col(text(JournalEvents::Hash, 64))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_journal_stream_seq")
                    .table(JournalEvents::Table)
                    .col(JournalEvents::Stream)
                    .col(JournalEvents::StreamSeq)
                    .unique()
                    .to_owned(),
            )
            .await?;
        for (name, column) in [
            ("idx_journal_proposal", JournalEvents::ProposalId),
            ("idx_journal_order", JournalEvents::OrderId),
            ("idx_journal_actor", JournalEvents::Actor),
            ("idx_journal_at", JournalEvents::At),
        ] {
            manager
                .create_index(
                    Index::create()
                        .name(name)
                        .table(JournalEvents::Table)
                        .col(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(JournalStreams::Table)
                    .col(text(JournalStreams::Stream, 64).primary_key())
                    .col(
                        ColumnDef::new(JournalStreams::Length)
                            .big_integer()
                            .not_null(),
                    )
                    .col(text(JournalStreams::HeadHash, 64))
                    .col(ColumnDef::new(JournalStreams::Dirty).boolean().not_null())
                    .col(utc(JournalStreams::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_journal_streams_dirty")
                    .table(JournalStreams::Table)
                    .col(JournalStreams::Dirty)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(JournalCheckpoints::Table)
                    .col(
                        ColumnDef::new(JournalCheckpoints::Id)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(utc(JournalCheckpoints::At))
                    .col(
                        ColumnDef::new(JournalCheckpoints::Streams)
                            .text()
                            .not_null(),
                    )
                    .col(text(JournalCheckpoints::PrevHash, 64))
                    .col(text(JournalCheckpoints::Hash, 64))
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            JournalCheckpoints::Table.into_iden(),
            JournalStreams::Table.into_iden(),
            JournalEvents::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
