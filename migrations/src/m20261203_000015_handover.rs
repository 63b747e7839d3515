//! A person can take over a conversation: its handover (waiting for a
//! person, or taken over by one), the people who spoke for the team in it
//! (none of them may approve a refund prepared there), and the roles whose
//! holders see the staff inbox (an admin's setting; staff roles to start).

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261203_000015_handover"
    }
}

#[derive(DeriveIden)]
enum Conversations {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum ConversationHandovers {
    Table,
    ConversationId,
    /// `requested` (waiting for a person) or `taken` (a person speaks).
    Status,
    RequestedAt,
    /// The person who took it over, and their display name then.
    PersonId,
    PersonName,
    TakenAt,
}

#[derive(DeriveIden)]
enum ConversationPeople {
    Table,
    ConversationId,
    UserId,
    FirstSpokeAt,
}

#[derive(DeriveIden)]
enum InboxRoles {
    Table,
    Role,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ConversationHandovers::Table)
                    .col(id(ConversationHandovers::ConversationId).primary_key())
                    .col(
                        ColumnDef::new(ConversationHandovers::Status)
                            .string_len(16)
                            .not_null(),
                    )
                    .col(utc(ConversationHandovers::RequestedAt))
                    .col(
                        ColumnDef::new(ConversationHandovers::PersonId)
                            .string_len(64)
                            .null(),
                    )
                    .col(
                        ColumnDef::new(ConversationHandovers::PersonName)
                            .text()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(ConversationHandovers::TakenAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                ConversationHandovers::Table,
                                ConversationHandovers::ConversationId,
                            )
                            .to(Conversations::Table, Conversations::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_conversation_handovers_status")
                    .table(ConversationHandovers::Table)
                    .col(ConversationHandovers::Status)
                    .col(ConversationHandovers::RequestedAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ConversationPeople::Table)
                    .col(id(ConversationPeople::ConversationId))
                    .col(id(ConversationPeople::UserId))
                    .col(utc(ConversationPeople::FirstSpokeAt))
                    .primary_key(
                        Index::create()
                            .col(ConversationPeople::ConversationId)
                            .col(ConversationPeople::UserId),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                ConversationPeople::Table,
                                ConversationPeople::ConversationId,
                            )
                            .to(Conversations::Table, Conversations::Id),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(ConversationPeople::Table, ConversationPeople::UserId)
                            .to(Users::Table, Users::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(InboxRoles::Table)
                    .col(
                        ColumnDef::new(InboxRoles::Role)
                            .string_len(32)
                            .not_null()
                            .primary_key(),
                    )
                    .to_owned(),
            )
            .await?;
        let mut seed = Query::insert();
        seed.into_table(InboxRoles::Table)
            .columns([InboxRoles::Role]);
        for role in ["approver", "manager", "admin"] {
            seed.values([role.into()])
                .map_err(|e| DbErr::Custom(e.to_string()))?;
        }
        manager.exec_stmt(seed).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            InboxRoles::Table.into_iden(),
            ConversationPeople::Table.into_iden(),
            ConversationHandovers::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
