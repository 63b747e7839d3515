//! Chat conversations: the transcript and active agent (the agent runtime's
//! `ConversationState` as JSON), who owns it, which customer's records it may
//! read, the claim of the turn in progress, and every agent event.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000004_conversations"
    }
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum Proposals {
    Table,
    ConversationId,
}

#[derive(DeriveIden)]
enum Conversations {
    Table,
    Id,
    /// The user who opened it and may write to it.
    OwnerId,
    /// The customer whose orders its tools may read.
    CustomerId,
    /// `idle` or `running`.
    Status,
    ActiveAgent,
    /// `agents::ConversationState` as JSON: transcript, active agent, turns.
    State,
    Turns,
    /// The claim of the turn in progress (null when idle).
    TurnId,
    TurnStartedAt,
    /// A claim not renewed by then belongs to a crashed process.
    TurnLeaseUntil,
    /// Set by Stop, read by the running turn on any replica.
    StopRequested,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum ConversationEvents {
    Table,
    Seq,
    ConversationId,
    Turn,
    Agent,
    Kind,
    Payload,
    At,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Conversations::Table)
                    .col(id(Conversations::Id).primary_key())
                    .col(id(Conversations::OwnerId))
                    .col(id(Conversations::CustomerId))
                    .col(
                        ColumnDef::new(Conversations::Status)
                            .string_len(16)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(Conversations::ActiveAgent)
                            .string_len(64)
                            .null(),
                    )
                    .col(ColumnDef::new(Conversations::State).text().not_null())
                    .col(
                        ColumnDef::new(Conversations::Turns)
                            .big_integer()
                            .not_null(),
                    )
                    .col(ColumnDef::new(Conversations::TurnId).string_len(64).null())
                    .col(
                        ColumnDef::new(Conversations::TurnStartedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(Conversations::TurnLeaseUntil)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(Conversations::StopRequested)
                            .boolean()
                            .not_null(),
                    )
                    .col(utc(Conversations::CreatedAt))
                    .col(utc(Conversations::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Conversations::Table, Conversations::OwnerId)
                            .to(Users::Table, Users::Id),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(Conversations::Table, Conversations::CustomerId)
                            .to(Users::Table, Users::Id),
                    )
                    .to_owned(),
            )
            .await?;
        for (name, column) in [
            ("idx_conversations_owner", Conversations::OwnerId),
            ("idx_conversations_customer", Conversations::CustomerId),
        ] {
            manager
                .create_index(
                    Index::create()
                        .name(name)
                        .table(Conversations::Table)
                        .col(column)
                        .col(Conversations::UpdatedAt)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(ConversationEvents::Table)
                    .col(
                        ColumnDef::new(ConversationEvents::Seq)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(id(ConversationEvents::ConversationId))
                    .col(
                        ColumnDef::new(ConversationEvents::Turn)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(ConversationEvents::Agent)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(ConversationEvents::Kind)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(ConversationEvents::Payload)
                            .text()
                            .not_null(),
                    )
                    .col(utc(ConversationEvents::At))
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                ConversationEvents::Table,
                                ConversationEvents::ConversationId,
                            )
                            .to(Conversations::Table, Conversations::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_conversation_events_conversation")
                    .table(ConversationEvents::Table)
                    .col(ConversationEvents::ConversationId)
                    .col(ConversationEvents::Seq)
                    .to_owned(),
            )
            .await?;
        // Proposals link back to the conversation that produced them.
        manager
            .create_index(
                Index::create()
                    .name("idx_proposals_conversation")
                    .table(Proposals::Table)
                    .col(Proposals::ConversationId)
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_proposals_conversation")
                    .table(Proposals::Table)
                    .to_owned(),
            )
            .await?;
        for table in [
            ConversationEvents::Table.into_iden(),
            Conversations::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
