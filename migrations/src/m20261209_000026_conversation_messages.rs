//! Every message sent to a conversation, stored before it is acknowledged:
//! its priority (now, this turn, later), the turn that carries it while one
//! runs, and the one outcome it ends with (answered, steered or collected
//! into a turn, or cancelled by Stop). A message waiting while a turn runs
//! is no longer refused; it waits here and survives a restart.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261209_000026_conversation_messages"
    }
}

#[derive(DeriveIden)]
enum Conversations {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum ConversationMessages {
    Table,
    Id,
    ConversationId,
    SenderId,
    Priority,
    Text,
    CarriedBy,
    Outcome,
    Turn,
    ReceivedAt,
    SettledAt,
}

const INDEX: &str = "idx_conversation_messages_conversation";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ConversationMessages::Table)
                    .col(id(ConversationMessages::Id).primary_key())
                    .col(id(ConversationMessages::ConversationId))
                    .col(id(ConversationMessages::SenderId))
                    .col(
                        ColumnDef::new(ConversationMessages::Priority)
                            .string_len(16)
                            .not_null(),
                    )
                    .col(ColumnDef::new(ConversationMessages::Text).text().not_null())
                    .col(
                        ColumnDef::new(ConversationMessages::CarriedBy)
                            .string_len(64)
                            .null(),
                    )
                    .col(
                        ColumnDef::new(ConversationMessages::Outcome)
                            .string_len(16)
                            .null(),
                    )
                    .col(
                        ColumnDef::new(ConversationMessages::Turn)
                            .big_integer()
                            .null(),
                    )
                    .col(utc(ConversationMessages::ReceivedAt))
                    .col(
                        ColumnDef::new(ConversationMessages::SettledAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                ConversationMessages::Table,
                                ConversationMessages::ConversationId,
                            )
                            .to(Conversations::Table, Conversations::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(ConversationMessages::Table)
                    .col(ConversationMessages::ConversationId)
                    .col(ConversationMessages::ReceivedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ConversationMessages::Table).to_owned())
            .await
    }
}
