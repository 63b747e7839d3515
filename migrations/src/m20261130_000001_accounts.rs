//! Users, roles, API tokens, login throttling, and SQLite's write gate.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000001_accounts"
    }
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
    Name,
    DisplayName,
    PasswordHash,
    SessionEpoch,
    DisabledAt,
    CreatedAt,
}

#[derive(DeriveIden)]
enum UserRoles {
    Table,
    UserId,
    Role,
}

#[derive(DeriveIden)]
enum ApiTokens {
    Table,
    Id,
    UserId,
    Label,
    TokenHash,
    CreatedAt,
    LastUsedAt,
    RevokedAt,
}

#[derive(DeriveIden)]
enum LoginFailures {
    Table,
    Id,
    Scope,
    FailedAt,
}

#[derive(DeriveIden)]
enum WriteGate {
    Table,
    Id,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Users::Table)
                    .col(id(Users::Id).primary_key())
                    .col(
                        ColumnDef::new(Users::Name)
                            .string_len(64)
                            .not_null()
                            .unique_key(),
                    )
                    .col(
                        ColumnDef::new(Users::DisplayName)
                            .string_len(200)
                            .not_null(),
                    )
                    .col(ColumnDef::new(Users::PasswordHash).text().not_null())
                    .col(
                        ColumnDef::new(Users::SessionEpoch)
                            .big_integer()
                            .not_null()
                            .default(0),
                    )
                    .col(
                        ColumnDef::new(Users::DisabledAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(utc(Users::CreatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(UserRoles::Table)
                    .col(id(UserRoles::UserId))
                    .col(ColumnDef::new(UserRoles::Role).string_len(32).not_null())
                    .primary_key(Index::create().col(UserRoles::UserId).col(UserRoles::Role))
                    .foreign_key(
                        ForeignKey::create()
                            .from(UserRoles::Table, UserRoles::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ApiTokens::Table)
                    .col(id(ApiTokens::Id).primary_key())
                    .col(id(ApiTokens::UserId))
                    .col(ColumnDef::new(ApiTokens::Label).string_len(200).not_null())
                    .col(
                        ColumnDef::new(ApiTokens::TokenHash)
                            .string_len(64)
                            .not_null()
                            .unique_key(),
                    )
                    .col(utc(ApiTokens::CreatedAt))
                    .col(
                        ColumnDef::new(ApiTokens::LastUsedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(ApiTokens::RevokedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(ApiTokens::Table, ApiTokens::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(LoginFailures::Table)
                    .col(
                        ColumnDef::new(LoginFailures::Id)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(LoginFailures::Scope)
                            .string_len(200)
                            .not_null(),
                    )
                    .col(utc(LoginFailures::FailedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_login_failures_scope_time")
                    .table(LoginFailures::Table)
                    .col(LoginFailures::Scope)
                    .col(LoginFailures::FailedAt)
                    .to_owned(),
            )
            .await?;
        // SQLite write transactions start with a no-op write to this table, which
        // takes the write lock up front (the effect of BEGIN IMMEDIATE) so a
        // transaction never fails half-way on a deferred lock upgrade.
        manager
            .create_table(
                Table::create()
                    .table(WriteGate::Table)
                    .col(
                        ColumnDef::new(WriteGate::Id)
                            .integer()
                            .not_null()
                            .primary_key(),
                    )
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            WriteGate::Table.into_iden(),
            LoginFailures::Table.into_iden(),
            ApiTokens::Table.into_iden(),
            UserRoles::Table.into_iden(),
            Users::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
